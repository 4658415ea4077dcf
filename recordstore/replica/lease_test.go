package replica_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
)

// eventually polls cond every 10 ms until it holds or 20 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLeaseFencesAcrossHolders: one holder at a time; the next holder gets
// the next generation only once the first stopped renewing, and the first,
// resumed, finds it lost instead of writing on.
func TestLeaseFencesAcrossHolders(t *testing.T) {
	srv := startS3(t)
	ctx := context.Background()
	url := srv.URL("stores/a")
	var lostA atomic.Value
	a, err := replica.AcquireLease(ctx, url, replica.LeaseOptions{TTL: 900 * time.Millisecond, Owner: "host-a",
		OnLost: func(err error) { lostA.Store(err) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); err != nil {
		t.Fatalf("fresh lease: %v", err)
	}
	_, err = replica.AcquireLease(ctx, url, replica.LeaseOptions{TTL: 900 * time.Millisecond, Owner: "host-b"})
	var held *replica.LeaseHeldError
	if !errors.As(err, &held) || held.Owner != "host-a" || recordstore.Code(err) != "in_use" {
		t.Fatalf("second acquire: %v", err)
	}
	// a renews: it stays valid across several TTLs.
	time.Sleep(2 * time.Second)
	if err := a.Check(); err != nil {
		t.Fatalf("renewed lease: %v", err)
	}
	// The server stops answering a (as if a were paused or cut off): it
	// fences itself once its safe time runs out.
	srv.Pause(true)
	eventually(t, "a to fence itself", func() bool { return errors.Is(a.Check(), replica.ErrLeaseLost) })
	eventually(t, "OnLost", func() bool { return lostA.Load() != nil })
	srv.Pause(false)
	// b takes it once it expired, with the next generation.
	var b *replica.Lease
	eventually(t, "b to acquire", func() bool {
		b, err = replica.AcquireLease(ctx, url, replica.LeaseOptions{TTL: 900 * time.Millisecond, Owner: "host-b"})
		return err == nil
	})
	if b.Generation() != a.Generation()+1 {
		t.Fatalf("generations a=%d b=%d", a.Generation(), b.Generation())
	}
	if err := a.Check(); !errors.Is(err, replica.ErrLeaseLost) {
		t.Fatalf("a after b took over: %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatalf("release of a lost lease: %v", err)
	}
	if err := b.Check(); err != nil {
		t.Fatalf("b: %v", err)
	}
	// A clean release lets the next holder in at once.
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := replica.AcquireLease(ctx, url, replica.LeaseOptions{TTL: time.Minute, Owner: "host-c"})
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if c.Generation() <= b.Generation() {
		t.Fatalf("generation went back: b=%d c=%d", b.Generation(), c.Generation())
	}
	_ = c.Release(ctx)
}

// TestLeaseLostToTakeover: a holder whose lease another process took (it
// was paused past the TTL, the other acquired) learns it at its next
// renewal, even though its own clock still trusted the lease.
func TestLeaseLostToTakeover(t *testing.T) {
	srv := startS3(t)
	ctx := context.Background()
	url := srv.URL("stores/b")
	lost := make(chan error, 1)
	// A huge margin-free view: a trusts its lease for the whole TTL.
	a, err := replica.AcquireLease(ctx, url, replica.LeaseOptions{TTL: 1500 * time.Millisecond, Margin: time.Millisecond, Owner: "a",
		OnLost: func(err error) { lost <- err }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release(ctx)
	// Another holder breaks in by rewriting the lock object (what a host
	// with a skewed clock could do): a's next renewal's If-Match fails.
	if err := srv.Overwrite("stores/b/lock.json", []byte(`{"generation":99,"expires_at":"2099-01-01T00:00:00Z","owner":"intruder"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-lost:
		if !errors.Is(err, replica.ErrLeaseLost) {
			t.Fatalf("lost with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a never noticed")
	}
	if !errors.Is(a.Check(), replica.ErrLeaseLost) {
		t.Fatal("a still trusts its lease")
	}
}
