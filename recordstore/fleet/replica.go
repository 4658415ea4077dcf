// Replication of a fleet's stores: each store replicates under its own
// sub-prefix of the fleet's replica ("tenant/<id>" or "slot/<nnnnn>"), in the
// process that owns it, and the fleet sums up how its open stores ship.

package fleet

import (
	"context"
	"path/filepath"
	"strings"
)

// keyCtx is the context key under which openChecked hands an Opener the
// key of the store it opens.
type keyCtx struct{}

// withKey returns ctx carrying k for the Opener.
func withKey(ctx context.Context, k Key) context.Context {
	return context.WithValue(ctx, keyCtx{}, k)
}

// KeyOf returns the key of the store an Opener is asked to open, from the
// ctx the fleet calls it with (ok is false for any other ctx).
func KeyOf(ctx context.Context) (k Key, ok bool) {
	k, ok = ctx.Value(keyCtx{}).(Key)
	return k, ok
}

// ReplicaPrefix is the sub-prefix under the fleet's replica address where
// the store of k replicates: "tenant/<id>" or "slot/<nnnnn>" (the key as
// String prints it, with '/' for ':'). ReplicaAddress joins it to the
// fleet's address.
func (k Key) ReplicaPrefix() string { return strings.Replace(k.String(), ":", "/", 1) }

// ReplicaHealth sums up the replication of the stores this process owns
// and replicates now, for a fleet's health: the worst lag and its store,
// the bytes waiting to be shipped, and how many stores fail to ship.
type ReplicaHealth struct {
	// Replicating counts the open stores this process ships.
	Replicating int `json:"replicating"`
	// Failing counts those whose last ship failed.
	Failing int `json:"failing"`
	// PendingBytes sums their bytes not shipped yet.
	PendingBytes int64 `json:"pendingBytes"`
	// WorstLagSeconds is the largest lag, WorstLagStore its store's key
	// (empty when no store lags).
	WorstLagSeconds float64 `json:"worstLagSeconds"`
	WorstLagStore   string  `json:"worstLagStore,omitempty"`
}

// ReplicaHealth returns the replication health of the open stores this
// process owns (see ReplicaHealth). It does no I/O but a stat of each
// replicated store's WAL, and opens nothing.
func (f *Fleet) ReplicaHealth() ReplicaHealth {
	f.mu.Lock()
	stores := make(map[Key]*Store, len(f.entries))
	for k, e := range f.entries {
		select {
		case <-e.ready:
			if e.store != nil {
				stores[k] = e.store
			}
		default:
		}
	}
	f.mu.Unlock()
	var h ReplicaHealth
	for k, st := range stores {
		rs, ok := st.ReplicaStatus()
		if !ok {
			continue
		}
		h.Replicating++
		if rs.LastError != "" {
			h.Failing++
		}
		h.PendingBytes += rs.LagBytes
		if rs.LagSeconds > h.WorstLagSeconds {
			h.WorstLagSeconds, h.WorstLagStore = rs.LagSeconds, k.String()
		}
	}
	return h
}

// replicaWorkDir is the folder where Litestream keeps its working files
// for the store file abs: ".<name>-litestream" beside it.
func replicaWorkDir(abs string) string {
	return filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+"-litestream")
}
