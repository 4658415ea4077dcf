// The test binary as a child process: FLEET_TEST_CHILD=<verb> runs one
// fleet operation on a root and prints its outcome's code ("ok" or
// recordstore.Code) on stdout.

package fleet_test

import (
	"context"
	"fmt"
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
	f, err := fleet.Open(root, fleet.Options{Mode: fleet.ModeTenant, Kinds: []recordstore.Kind{noteKind}, SweepInterval: -1})
	if err != nil {
		fmt.Println(recordstore.Code(err))
		return 1
	}
	defer f.Close()
	k, err := f.ParseKey(key)
	if err == nil {
		switch verb {
		case "provision":
			err = f.Provision(context.Background(), k)
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
