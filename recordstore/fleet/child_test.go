// The test binary as a child process: FLEET_TEST_CHILD=<verb> runs one
// fleet operation on a root and prints its outcome's code ("ok" or
// recordstore.Code) on stdout.

package fleet_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/owner"
	. "github.com/onsi/gomega"
)

// runChild runs verb on args [root, key] and returns the exit code.
func runChild(verb string, args []string) int {
	root, key := args[0], args[1]
	if verb == "hold-other-catalog" {
		return runOtherCatalog(root, key)
	}
	f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, Kinds: []recordstore.Kind{noteKind, eventKind}, SweepInterval: -1})
	if err != nil {
		fmt.Println(recordstore.Code(err))
		return 1
	}
	defer f.Close()
	if verb == "writer" {
		return runWriter(f, key)
	}
	k, err := f.ParseKey(key)
	if err == nil {
		switch verb {
		case "provision":
			err = f.Provision(context.Background(), k)
		case "delete":
			err = f.Delete(context.Background(), k)
		case "reprovision":
			// Delete the store, then provision a new one for the key.
			if err = f.Delete(context.Background(), k); err == nil {
				err = f.Provision(context.Background(), k)
			}
		case "hold":
			// Own the store until stdin closes.
			var l *fleet.Lease
			if l, err = f.Acquire(context.Background(), k); err == nil {
				fmt.Println("held")
				_, _ = os.Stdin.Read(make([]byte, 1))
				l.Release()
			}
		case "append":
			// Append notes n1..n200 one by one, saying when the first is in.
			err = f.Do(context.Background(), k, func(ctx context.Context, st *fleet.Store) error {
				for i := 1; i <= 200; i++ {
					if _, err := st.Append(ctx, "s", "notes", []recordstore.Row{{"id": fmt.Sprint("n", i), "body": "b"}}, owner.AppendOptions{}); err != nil {
						return err
					}
					if i == 1 {
						fmt.Println("appending")
					}
				}
				return nil
			})
		default:
			err = fmt.Errorf("unknown verb %s", verb)
		}
	}
	if err != nil {
		fmt.Println(recordstore.Code(err))
		return 1
	}
	fmt.Println("ok")
	return 0
}

// childCmd is the test binary running verb on root and key.
func childCmd(verb, root, key string) *exec.Cmd {
	exe, err := os.Executable()
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(exe, "-test.run=^$", root, key)
	cmd.Env = append(os.Environ(), childEnv+"="+verb)
	return cmd
}

// eventKind is the unkeyed kind of the crash spec: a row applied twice
// would show twice.
var eventKind = recordstore.Kind{Name: "events", Columns: []recordstore.Column{{Name: "id", Type: recordstore.TypeString, Required: true}}}

// crashTenants is how many tenants the crash spec's writers share.
const crashTenants = 50

func crashTenant(i int) fleet.Key {
	k, _ := fleet.TenantKey(fmt.Sprintf("t%02d", i%crashTenants))
	return k
}

// runWriter appends events "<name>-<i>" to tenant t(i mod 50), one append
// each, printing each id once its append returned, until stdin closes.
func runWriter(f *fleet.Fleet, name string) int {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	for i := 0; ctx.Err() == nil; i++ {
		id := fmt.Sprintf("%s-%d", name, i)
		err := f.Do(ctx, crashTenant(i), func(ctx context.Context, st *fleet.Store) error {
			_, err := st.Append(ctx, "s", "events", []recordstore.Row{{"id": id}}, owner.AppendOptions{})
			return err
		})
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(id)
	}
	return 0
}
