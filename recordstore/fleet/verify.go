// Verifying replicas on a schedule: each round picks a random sample of
// the fleet's stores and runs replica.Verify on each.

package fleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/replica"
)

// Defaults of VerifySchedule: a round an hour, eight stores a round. A
// verification restores a whole store into the scratch folder, so a round
// costs about eight restores; a fleet of N stores has each store verified
// about every N/8 hours on average.
const (
	DefaultVerifyEvery  = time.Hour
	DefaultVerifySample = 8
)

// ReplicaAddress returns the replica address of the store of k under the
// fleet's replica root address (see replica.Join).
func ReplicaAddress(root string, k Key) (string, error) {
	return replica.Join(root, k.ReplicaPrefix())
}

// VerifyOutcome is the verification of one store's replica.
type VerifyOutcome struct {
	Key    string               `json:"key"`
	Path   string               `json:"path"` // relative to the root
	Report replica.VerifyReport `json:"report"`
	// Err is the verification's error (replica.ErrMismatch, ErrGap, ...),
	// nil when the replica matches; Code is its code ("" when nil).
	Err  error  `json:"-"`
	Code string `json:"code,omitempty"`
	// Message is Err's message without its code.
	Message string `json:"error,omitempty"`
}

// VerifySample verifies the replicas of up to n stores of the fleet (n <=
// 0: DefaultVerifySample), picked at random among those List finds:
// replica.Verify of each against the address replicaFor gives for its key
// (its scratch folder under scratch, "" for the system's temp folder).
// The outcomes are returned in the order verified, one per store, each
// with its own error; the error of VerifySample itself is List's, or
// ctx's when it ends (the outcomes so far are returned with it). Nothing
// is written but the scratch folders, removed after each store.
func (f *Fleet) VerifySample(ctx context.Context, n int, replicaFor func(Key) (string, error), scratch string) ([]VerifyOutcome, error) {
	if replicaFor == nil {
		return nil, recordstore.Invalidf("verify: no replica address for the stores")
	}
	if n <= 0 {
		n = DefaultVerifySample
	}
	listing, err := f.List(ctx, ListOptions{})
	if err != nil {
		return nil, err
	}
	stores := listing.Stores
	rand.Shuffle(len(stores), func(i, j int) { stores[i], stores[j] = stores[j], stores[i] })
	var out []VerifyOutcome
	for _, e := range stores {
		if len(out) == n {
			break
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if e.Err != "" {
			continue // unreadable: List says so
		}
		k, err := f.ParseKey(e.Key)
		if err != nil {
			continue
		}
		o := VerifyOutcome{Key: e.Key, Path: e.Path}
		addr, err := replicaFor(k)
		if err == nil {
			abs := filepath.Join(f.root, filepath.FromSlash(e.Path))
			o.Report, err = replica.Verify(ctx, abs, replica.VerifyOptions{Replica: addr, LiveFile: abs, Scratch: scratch, Logger: f.log})
		}
		if err != nil {
			o.Err, o.Code, o.Message = err, recordstore.Code(err), recordstore.Message(err)
		}
		out = append(out, o)
	}
	return out, nil
}

// VerifySchedule says how RunVerifier verifies the fleet's replicas.
type VerifySchedule struct {
	// Every is the time between rounds; default DefaultVerifyEvery.
	Every time.Duration
	// Sample is the number of stores of a round; default
	// DefaultVerifySample.
	Sample int
	// ReplicaFor returns a store's replica address (for example
	// ReplicaAddress of the fleet's replica root). Required.
	ReplicaFor func(Key) (string, error)
	// Scratch is the folder the scratch folders are made in; default the
	// system's temp folder.
	Scratch string
	// Report, when set, is called with each round's outcomes.
	Report func([]VerifyOutcome)
}

// RunVerifier runs VerifySample every s.Every, the first round after one
// interval, until ctx ends (it then returns ctx's error). Each store that
// fails is logged at warn (key, code, message); a round that fails as a
// whole (List) is logged and the next one runs on time.
func (f *Fleet) RunVerifier(ctx context.Context, s VerifySchedule) error {
	if s.ReplicaFor == nil {
		return recordstore.Invalidf("verify schedule: ReplicaFor is required")
	}
	every := s.Every
	if every <= 0 {
		every = DefaultVerifyEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		out, err := f.VerifySample(ctx, s.Sample, s.ReplicaFor, s.Scratch)
		if err != nil && ctx.Err() == nil {
			f.log.Warn("replica verification round failed", "err", fmt.Sprint(err))
		}
		for _, o := range out {
			if o.Err != nil {
				f.log.Warn("replica verification failed", "key", o.Key, "code", o.Code, "err", o.Message)
			}
		}
		if s.Report != nil && len(out) > 0 {
			s.Report(out)
		}
	}
}
