package replica_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstoretest/s3test"
)

// benchStores opens a store replicated to the S3 test server and one that
// is not, side by side, with the kind declared in each.
func benchStores(b *testing.B) (srv *s3test.Server, on, off *owner.Store[*sqlite.Backend]) {
	srv, on, off, _ = benchStores3(b)
	return srv, on, off
}

// benchStores3 is benchStores with a third store, without replica and
// without checkpoints (sqlite.Options.NoCheckpoint), as the replicated
// one's writer runs.
func benchStores3(b *testing.B) (srv *s3test.Server, on, off, offNoCkpt *owner.Store[*sqlite.Backend]) {
	b.Helper()
	srv = startS3(b)
	ctx := context.Background()
	on, err := openReplicated(ctx, filepath.Join(b.TempDir(), "on"), srv.URL("bench"), time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = on.Close() })
	plain := func(name string, noCkpt bool) *owner.Store[*sqlite.Backend] {
		dir := filepath.Join(b.TempDir(), name)
		st, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{
			Path: dir, CatalogVersion: sqlite.CatalogVersion,
			Open: func(ctx context.Context, ro bool, submit owner.Submitter) (*sqlite.Backend, error) {
				return sqlite.Open(ctx, dir, sqlite.Options{ReadOnly: ro, Submit: submit, SweepInterval: -1, NoCheckpoint: noCkpt})
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		return st
	}
	off, offNoCkpt = plain("off", false), plain("offnockpt", true)
	for _, st := range []*owner.Store[*sqlite.Backend]{on, off, offNoCkpt} {
		if _, err := st.DeclareKinds(ctx, []recordstore.Kind{counterKind}, owner.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return srv, on, off, offNoCkpt
}

// BenchmarkAppendReplicated appends one 10-row batch to a replicated store
// and one to a store without replica in each iteration, alternating which
// goes first. vs_raw is the time without replication over the time with
// it (goal ≥ 0.9): what shipping in the background costs the writer.
// vs_nockpt compares with a third store, without replica and without
// checkpoints, appended to in the same iterations: the cost of shipping
// alone, apart from the checkpoints the replicated store leaves to
// Litestream.
func BenchmarkAppendReplicated(b *testing.B) {
	_, on, off, offNoCkpt := benchStores3(b)
	ctx := context.Background()
	rows := rowsOf(1, 10)
	var tOn, tOff, tNoCkpt time.Duration
	appendTo := func(st *owner.Store[*sqlite.Backend], acc *time.Duration) {
		t0 := time.Now()
		if _, err := st.Append(ctx, "s", "counter", rows, owner.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
		*acc += time.Since(t0)
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			appendTo(on, &tOn)
			appendTo(off, &tOff)
			appendTo(offNoCkpt, &tNoCkpt)
		} else {
			appendTo(offNoCkpt, &tNoCkpt)
			appendTo(off, &tOff)
			appendTo(on, &tOn)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(tOff)/float64(tOn), "vs_raw")
	b.ReportMetric(float64(tNoCkpt)/float64(tOn), "vs_nockpt")
	b.ReportMetric(float64(b.N)/tOn.Seconds(), "appends/s_on")
	b.ReportMetric(float64(b.N)/tOff.Seconds(), "appends/s_off")
}

// BenchmarkAppendWaitReplicated measures an append that waits for the
// replica (WriteOptions.Replicated) against one PUT of a 4 KiB object to
// the same S3 server, alternating, in the same iterations: p50 and p99 of
// each, and p50_vs_put, the append's median over the PUT's.
func BenchmarkAppendWaitReplicated(b *testing.B) {
	srv, on, _ := benchStores(b)
	ctx := context.Background()
	rows := rowsOf(1, 10)
	body := bytes.Repeat([]byte("x"), 4096)
	var waits, puts []time.Duration
	put := func(i int) {
		t0 := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, fmt.Sprintf("%s/%s/put/%d", srv.Endpoint, srv.Bucket, i), bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("put: %s", resp.Status)
		}
		puts = append(puts, time.Since(t0))
	}
	wait := func() {
		t0 := time.Now()
		if _, err := on.Append(ctx, "s", "counter", rows, owner.AppendOptions{WriteOptions: owner.WriteOptions{Replicated: true}}); err != nil {
			b.Fatal(err)
		}
		waits = append(waits, time.Since(t0))
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			wait()
			put(i)
		} else {
			put(i)
			wait()
		}
	}
	b.StopTimer()
	w50, w99 := percentile(waits, 50), percentile(waits, 99)
	p50, p99 := percentile(puts, 50), percentile(puts, 99)
	b.ReportMetric(w50.Seconds()*1e3, "p50_ms")
	b.ReportMetric(w99.Seconds()*1e3, "p99_ms")
	b.ReportMetric(p50.Seconds()*1e3, "put_p50_ms")
	b.ReportMetric(p99.Seconds()*1e3, "put_p99_ms")
	b.ReportMetric(float64(w50)/float64(p50), "p50_vs_put")
}

// BenchmarkReplicationLag appends one-row batches at 1,000 a second for a
// second per iteration to a replicated store, sampling the replicator's
// lag every 10 ms, and reports the lag's p50 and p99 in seconds (goal:
// p99 ≤ 1 s) and the append rate reached.
func BenchmarkReplicationLag(b *testing.B) {
	_, on, _ := benchStores(b)
	ctx := context.Background()
	rows := rowsOf(1, 1)
	var lags []time.Duration
	appended := 0
	start := time.Now()
	b.ResetTimer()
	for range b.N {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				if rs, ok := on.ReplicaStatus(); ok {
					lags = append(lags, time.Duration(rs.LagSeconds*float64(time.Second)))
				}
			}
		}()
		// Paced by schedule: batch k is due k ms after the start, and a
		// late one is appended at once.
		t0 := time.Now()
		for k := 0; k < 1000; k++ {
			if d := time.Until(t0.Add(time.Duration(k) * time.Millisecond)); d > 0 {
				time.Sleep(d)
			}
			if _, err := on.Append(ctx, "s", "counter", rows, owner.AppendOptions{}); err != nil {
				b.Fatal(err)
			}
			appended++
		}
		close(stop)
		<-done
	}
	b.StopTimer()
	b.ReportMetric(percentile(lags, 50).Seconds(), "lag_p50_s")
	b.ReportMetric(percentile(lags, 99).Seconds(), "lag_p99_s")
	b.ReportMetric(float64(appended)/time.Since(start).Seconds(), "appends/s")
}

// percentile is the p-th percentile of ds (nearest rank); 0 when empty.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}
