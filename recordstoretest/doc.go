// Package recordstoretest is the conformance suite every recordstore.Backend
// runs, plus the reference model it is checked against.
//
// A backend's test package registers the suite once, at package level, and
// runs it with its own ginkgo RunSpecs:
//
//	var _ = recordstoretest.DescribeBackend("sqlite.Backend", recordstoretest.Harness{
//		Open: func(ctx context.Context, clock *recordstoretest.Clock) (recordstore.Backend, error) {
//			return sqlite.Open(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"),
//				sqlite.Options{Now: clock.Now, SweepInterval: -1})
//		},
//	})
//
// Every spec opens a fresh, empty backend driven by a fake Clock, so time
// (retention, expiry, createdAt/updatedAt) is deterministic. The suite covers
// appends and windows, kinds, every refusal (with "nothing changed" checks),
// keys and conflict policies, value round trips, retention, seal/reopen,
// expire, trim, delete and generations, follow (Wait, Tail), concurrency,
// persistence across a reopen when the harness can reopen, and a randomized
// test comparing the backend step by step with an in-memory model.
//
// A backend that also implements recordstore.BatchAppender registers the
// batch suite the same way, DescribeBatchAppender with a BatchHarness: it
// states the exactly-once contract — the ledger and its replays, entry
// results and isolation, Failure and Retry, group commit, row sources,
// producer seqs, sweeps.
//
// The model (model.go) is a deliberately small implementation of the
// Backend contract that favours obviousness over speed; the package's own
// tests run the whole suite against it, which keeps the suite and the model
// honest with each other. modelBatches (model_batch.go) adds an in-memory
// ledger for the batch suite.
//
// The package also holds the multi-process harness: a test binary whose
// TestMain calls RunChild re-executes itself as child processes
// (StartChild, MustStartChild) that run a JSON Script of steps against the
// caller's store, print one JSON Line per step, and SIGKILL, stop, exit or
// block at named failpoints (FailpointRule). The parent reads a step's line
// by the step's Name (Child.StepNamed), unique in its script. OwnerOptions
// and OwnerChild wire an owner.Store into it. docs/testing.md, "The
// multi-process harness", describes the steps, lines and failpoints, and
// lists the crash and multi-process matrix.
//
// Concurrency: a Clock is safe for concurrent use. DescribeBackend and
// DescribeBatchAppender must be called while the ginkgo tree is built (at
// package level or inside a container), never from inside a running spec.
package recordstoretest
