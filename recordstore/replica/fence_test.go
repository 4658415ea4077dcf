package replica_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
)

// TestLeaseFenceGenerations: the owner's fence over the S3 lease — a held
// lease refuses the second host with code in_use, the generation grows by
// one per holder across a Release, and Status tells the holder and its
// safe time.
func TestLeaseFenceGenerations(t *testing.T) {
	srv := startS3(t)
	ctx := context.Background()
	url := srv.URL("stores/fence")
	a := replica.NewLeaseFence(url, replica.LeaseOptions{TTL: 3 * time.Second, Owner: "host-a"})
	b := replica.NewLeaseFence(url, replica.LeaseOptions{TTL: 3 * time.Second, Owner: "host-b"})
	if err := a.Check(); !errors.Is(err, replica.ErrLeaseLost) {
		t.Fatalf("check before acquire: %v", err)
	}
	genA, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); err != nil {
		t.Fatalf("check while held: %v", err)
	}
	st := a.Status()
	if st.Generation != genA || st.Owner != "host-a" || !st.SafeUntil.After(time.Now()) || st.Lost != "" {
		t.Fatalf("status: %+v", st)
	}
	if _, err := b.Acquire(ctx); !errors.Is(err, replica.ErrLeaseHeld) || recordstore.Code(err) != "in_use" {
		t.Fatalf("second host: %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); err == nil {
		t.Fatal("check after release: nil")
	}
	genB, err := b.Acquire(ctx)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if genB != genA+1 {
		t.Fatalf("generation %d after %d", genB, genA)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
