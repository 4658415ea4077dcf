// TestMain, and the child processes of the multi-process benchmarks and
// specs: the test binary started again with mpChildEnv set plays one role
// instead of running the tests.

package recordresults_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstoretest/benchdata"
)

// The environment of a benchmark child.
const (
	// mpChildEnv names the role: "owner", "owner batches", "standby", "follower [<n>]",
	// "producer <stream> <rows>", mpEchoRole or catalogOwnerRole.
	mpChildEnv = "RECORDRESULTS_BENCH_CHILD"
	// mpStoreEnv is the store path the child opens.
	mpStoreEnv = "RECORDRESULTS_BENCH_STORE"
	// mpProfileEnv, when set (in the benchmark's own environment, which
	// children inherit), is a folder where owner, producer and follower
	// children write a CPU profile named <role>-<pid>.pprof.
	mpProfileEnv = "RECORDRESULTS_BENCH_PROFILE"
	// mpLogEnv, when set, makes children log at debug level to their
	// standard error (shown when a benchmark fails).
	mpLogEnv = "RECORDRESULTS_BENCH_LOG"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(mpChildEnv); role != "" {
		os.Exit(mpRunChild(role))
	}
	os.Exit(m.Run())
}

// mpRunChild plays role and returns the exit status. A child speaks in
// lines on its standard output ("ready", "done ...", or "fail <error>"
// before it exits with status 1) and takes commands, one per line, on its
// standard input; when its input ends (the parent closed it or died) it
// closes its store and exits.
func mpRunChild(role string) int {
	args := strings.Fields(role)
	stop, err := mpStartProfile(args[0])
	if err == nil {
		ctx, path := context.Background(), os.Getenv(mpStoreEnv)
		switch args[0] {
		case "owner":
			err = mpRunOwner(ctx, path, args[1:])
		case "standby":
			err = mpRunStandby(ctx, path)
		case "follower":
			err = mpRunFollower(ctx, path, args[1:])
		case "producer":
			err = mpRunProducer(ctx, path, args[1:])
		case catalogOwnerRole:
			err = runCatalogOwner(ctx, path)
		case plainOwnerRole:
			err = runPlainOwner(ctx, path)
		case mpEchoRole:
			err = mpRunEcho(path)
		default:
			err = fmt.Errorf("unknown benchmark child role %q", role)
		}
		stop()
	}
	if err != nil {
		mpSay("fail %s", strings.ReplaceAll(err.Error(), "\n", " "))
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// mpOut serializes the child's output lines (role events arrive on the
// store's goroutines).
var mpOut sync.Mutex

// mpSay prints one line to the parent.
func mpSay(format string, args ...any) {
	mpOut.Lock()
	defer mpOut.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

// mpStartProfile starts a CPU profile for owners, producers and followers when
// mpProfileEnv is set; stop writes it out.
func mpStartProfile(role string) (stop func(), err error) {
	dir := os.Getenv(mpProfileEnv)
	if dir == "" || (role != "owner" && role != "producer" && role != "follower") {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", role, os.Getpid())))
	if err != nil {
		return nil, fmt.Errorf("create cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// mpOptions are the store options of every benchmark process: no
// retention sweeper, the default heartbeat, generous start and drain
// bounds (a loaded two-core machine starts children slowly).
func mpOptions() records.Options {
	o := records.Options{SweepInterval: -1, Owner: records.OwnerOptions{Heartbeat: owner.DefaultHeartbeat,
		StartWait: time.Minute, DrainOnClose: 30 * time.Second}}
	if os.Getenv(mpLogEnv) != "" {
		o.Owner.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return o
}

// mpOpenAs opens the store at path and checks that this process got role.
func mpOpenAs(ctx context.Context, path string, opts records.Options, role owner.Role) (*records.Store, error) {
	s, err := records.Open(ctx, path, opts)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if got := s.Role(); got != role {
		return nil, errors.Join(fmt.Errorf("opened the store as %s, want %s", got, role), s.Close())
	}
	return s, nil
}

// mpRunOwner opens the store as its owner, declares the benchmark kind,
// prints "ready", then serves commands: "append" appends one row to
// mpTailStream whose n column is the wall clock in nanoseconds taken just
// before the call, and prints "appended <before> <after>".
//
// With args "batches" it declares nothing and prints, instead of "ready",
// "owner <ns>" when it becomes the owner and "batch <ns> <rows>" as each
// spooled batch commits.
func mpRunOwner(ctx context.Context, path string, args []string) (err error) {
	opts, batches := mpOptions(), len(args) == 1 && args[0] == "batches"
	if batches {
		opts.Owner.Events.Role = func(r owner.Role) {
			if r == owner.RoleOwner {
				mpSay("owner %d", time.Now().UnixNano())
			}
		}
		opts.Owner.Events.Batch = func(res recordstore.BatchResult) {
			var rows int64
			for _, e := range res.Entries {
				if e.Append != nil {
					rows += e.Append.Appended
				}
			}
			mpSay("batch %d %d", time.Now().UnixNano(), rows)
		}
	} else if len(args) > 0 {
		return fmt.Errorf("owner: unknown arguments %q", args)
	}
	s, err := mpOpenAs(ctx, path, opts, owner.RoleOwner)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	k := benchdata.Kind()
	if !batches {
		if _, err := s.Backend().DeclareKind(ctx, k); err != nil {
			return fmt.Errorf("declare kind: %w", err)
		}
		mpSay("ready %d", os.Getpid())
	}
	in := bufio.NewScanner(os.Stdin)
	for i := 0; in.Scan(); i++ {
		if in.Text() != "append" {
			return fmt.Errorf("owner: unknown command %q", in.Text())
		}
		t0 := time.Now().UnixNano()
		if _, err := s.Backend().Append(ctx, mpTailStream, k.Name, []recordstore.Row{mpRow(i, t0)}); err != nil {
			return fmt.Errorf("append: %w", err)
		}
		mpSay("appended %d %d", t0, time.Now().UnixNano())
	}
	return in.Err()
}

// mpRunStandby opens the store as a non-owner, waits until it is
// subscribed to the owner's commit notices (which also tell it when the
// owner is gone) and prints "open <role> <wake>"; when it becomes the
// owner it prints "owner <wall clock ns>" at once, then "promoted <locked
// ns> <phase>=<ns>..." with the promotion's phases (owner.Promotion; the
// names with blanks made dashes).
func mpRunStandby(ctx context.Context, path string) (err error) {
	opts := mpOptions()
	opts.Owner.Events.Role = func(r owner.Role) {
		if r == owner.RoleOwner {
			mpSay("owner %d", time.Now().UnixNano())
		}
	}
	opts.Owner.Events.Promoted = func(p owner.Promotion) {
		var line strings.Builder
		fmt.Fprintf(&line, "promoted %d", p.Locked.UnixNano())
		for _, ph := range p.Phases {
			fmt.Fprintf(&line, " %s=%d", strings.ReplaceAll(ph.Name, " ", "-"), ph.Took.Nanoseconds())
		}
		mpSay("%s", line.String())
	}
	s, err := mpOpenAs(ctx, path, opts, owner.RoleNonOwner)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	wake, err := mpAwaitPush(ctx, s)
	if err != nil {
		return err
	}
	mpSay("open %s %s", s.Role(), wake)
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// mpAwaitPush waits, up to mpChildWait, until s is subscribed to the
// owner's commit notices, and returns its wake mode then.
func mpAwaitPush(ctx context.Context, s *records.Store) (string, error) {
	deadline := time.Now().Add(mpChildWait)
	for {
		st, err := s.Status(ctx)
		if err != nil {
			return "", err
		}
		if st.Wake == owner.WakePush || time.Now().After(deadline) {
			return st.Wake, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// mpChildWait bounds a child's wait for its subscription.
const mpChildWait = time.Minute

// mpRunFollower plays args[0] followers (one without args), each a
// store of its own opened as a non-owner (through a path of its own, see
// below) — its own subscription to the owner's commit notices, its own
// SQLite connections and change feed —
// following mpTailStream with recordstore.Tail (as query serve's SSE and
// scan --follow do). It prints "following <wake>" once all of them are
// subscribed (the first wake mode that is not push, else push). On
// "stop <want>" it waits, up to mpChildWait, until every follower has
// seen want records since it started, closes them all and prints
// "stopped <fewest seen>"; on "start" it opens them again and prints
// "following <wake>". It exits when its input ends.
func mpRunFollower(ctx context.Context, path string, args []string) (err error) {
	n := 1
	if len(args) == 1 {
		if n, err = strconv.Atoi(args[0]); err != nil || n < 1 {
			return fmt.Errorf("follower: want a count, got %q", args)
		}
	} else if len(args) > 1 {
		return fmt.Errorf("follower: unknown arguments %q", args)
	}
	// A process that opens a store twice gets one handle (owner's
	// in-process sharing, keyed by the absolute path): each follower opens
	// it through a symbolic link of its own to the store's folder, so that
	// it is a store of its own, as in a process of its own.
	links, err := os.MkdirTemp("", "followers-")
	if err != nil {
		return fmt.Errorf("follower: %w", err)
	}
	defer os.RemoveAll(links)
	paths := make([]string, n)
	for i := range paths {
		link := filepath.Join(links, strconv.Itoa(i))
		if err := os.Symlink(filepath.Dir(path), link); err != nil {
			return fmt.Errorf("follower: %w", err)
		}
		paths[i] = filepath.Join(link, filepath.Base(path))
	}
	var fs []*mpFollowing
	stop := func() error {
		var errs []error
		for _, f := range fs {
			errs = append(errs, f.stop())
		}
		fs = nil
		return errors.Join(errs...)
	}
	fewest := func(want int64) int64 {
		deadline := time.Now().Add(mpChildWait)
		for {
			least := want
			for _, f := range fs {
				least = min(least, f.seen.Load())
			}
			if least >= want || time.Now().After(deadline) {
				return least
			}
			time.Sleep(time.Millisecond)
		}
	}
	defer func() { err = errors.Join(err, stop()) }()
	start := func() error {
		for _, p := range paths {
			f, err := mpFollow(ctx, p)
			if err != nil {
				return err
			}
			fs = append(fs, f)
		}
		wake := owner.WakePush
		for _, f := range fs {
			w, err := mpAwaitPush(ctx, f.s)
			if err != nil {
				return err
			}
			if w != owner.WakePush {
				wake = w
			}
		}
		mpSay("following %s", wake)
		return nil
	}
	if err := start(); err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd := strings.Fields(in.Text())
		switch {
		case len(cmd) == 2 && cmd[0] == "stop":
			want, err := strconv.ParseInt(cmd[1], 10, 64)
			if err != nil {
				return fmt.Errorf("follower: %q: %w", in.Text(), err)
			}
			least := fewest(want)
			if err := stop(); err != nil {
				return err
			}
			mpSay("stopped %d", least)
		case len(cmd) == 1 && cmd[0] == "start":
			if err := start(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("follower: unknown command %q", in.Text())
		}
	}
	return in.Err()
}

// mpFollowing is one follower of mpRunFollower: a store, its Tail and
// how many records the Tail has delivered.
type mpFollowing struct {
	s      *records.Store
	cancel context.CancelFunc
	tailed chan error
	seen   atomic.Int64
}

// mpFollow opens the store at path as a non-owner and starts a Tail of
// mpTailStream on it after the stream's last record (from its start when
// it has none yet): a follower opened again between rounds does not read
// the rounds before.
func mpFollow(ctx context.Context, path string) (*mpFollowing, error) {
	s, err := mpOpenAs(ctx, path, mpOptions(), owner.RoleNonOwner)
	if err != nil {
		return nil, err
	}
	var after int64
	m, err := s.Backend().Meta(ctx, mpTailStream)
	switch {
	case err == nil:
		after = m.HighSeq
	case !errors.Is(err, recordstore.ErrNotFound):
		return nil, errors.Join(fmt.Errorf("follower: %w", err), s.Close())
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &mpFollowing{s: s, cancel: cancel, tailed: make(chan error, 1)}
	go func() {
		f.tailed <- recordstore.Tail(ctx, s.Backend(), mpTailStream, after, func(recordstore.Record) error {
			f.seen.Add(1)
			return nil
		})
	}()
	return f, nil
}

// stop ends the Tail and closes the store.
func (f *mpFollowing) stop() error {
	f.cancel()
	err := <-f.tailed
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, f.s.Close())
}

// mpRunProducer opens the store as a non-owner, builds args[1] rows for
// stream args[0] and prints "ready". On each "go" it normalizes the rows,
// publishes them as one batch, awaits the owner's outcome and prints
// "done <published ns> <applied ns>".
func mpRunProducer(ctx context.Context, path string, args []string) (err error) {
	if len(args) != 2 {
		return fmt.Errorf("producer: want <stream> <rows>, got %q", args)
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		return fmt.Errorf("producer rows: %w", err)
	}
	s, err := mpOpenAs(ctx, path, mpOptions(), owner.RoleNonOwner)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	k, rows := benchdata.Kind(), mpRows(n)
	mpSay("ready %d", os.Getpid())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != "go" {
			return fmt.Errorf("producer: unknown command %q", in.Text())
		}
		published, err := mpProduce(ctx, s, &k, args[0], rows)
		if err != nil {
			return err
		}
		mpSay("done %d %d", published, time.Now().UnixNano())
	}
	return in.Err()
}

// mpProduce publishes rows as one batch and waits until the owner applied
// it; it returns when the publish ended (wall clock ns).
func mpProduce(ctx context.Context, s *records.Store, k *recordstore.Kind, stream string, rows []recordstore.Row) (int64, error) {
	vals := make([]recordstore.Values, len(rows))
	for i, r := range rows {
		v, err := k.Normalize(r)
		if err != nil {
			return 0, fmt.Errorf("normalize row %d: %w", i, err)
		}
		vals[i] = v
	}
	id, err := s.Publish(ctx, recordstore.Batch{Schemas: []recordstore.Kind{*k},
		Entries: []recordstore.BatchEntry{{Op: recordstore.OpAppend, Stream: stream, Kind: k.Name, Rows: vals}}})
	if err != nil {
		return 0, err
	}
	published := time.Now().UnixNano()
	res, err := s.Await(ctx, id)
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		return 0, fmt.Errorf("await batch %s: %w", id, err)
	}
	return published, nil
}
