// The recorder's jobs: the flush, state and rotation ticks, rotation
// itself (flush, new file, swap, worker_config, seal the old file), the
// background job that moves sealed files into the history folder, the
// leftovers of earlier processes, and the clean stop.

package recorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore/sqlite"
)

// start runs the recorder's jobs until Close.
func (r *Recorder) start() {
	r.wg.Add(2)
	go r.loop()
	go r.mover()
}

// loop runs the flush, state and rotation ticks; rotation and the
// leftover scans run here too, so they never overlap a flush. While this
// process does not own the worker's store it only flushes.
func (r *Recorder) loop() {
	defer r.wg.Done()
	flush := time.NewTicker(r.cfg.FlushInterval)
	defer flush.Stop()
	state := time.NewTicker(r.cfg.StateSyncInterval)
	defer state.Stop()
	rotate := time.NewTicker(r.cfg.RotationInterval)
	defer rotate.Stop()
	r.status.setNextRotation(time.Now().Add(r.cfg.RotationInterval))
	second := time.NewTimer(r.opts.LeftoverDelay)
	defer second.Stop()
	if r.Owner() {
		r.scanLeftovers()
	}
	for {
		// A process may take the store over (see Write): the role is read
		// at every tick.
		owned := r.Owner()
		select {
		case <-r.ctx.Done():
			return
		case <-flush.C:
			_ = r.Flush(r.ctx) // logged and requeued by flushLocked
		case <-state.C:
			if owned {
				if err := r.SyncState(r.ctx); err != nil {
					r.log.Warn("recorder_state_failed", "error", err)
				}
			}
		case t := <-rotate.C:
			r.status.setNextRotation(t.Add(r.cfg.RotationInterval))
			if owned {
				if err := r.Rotate(r.ctx); err != nil {
					r.log.Warn("recorder_background_job_failed", "job", "rotation", "error", err)
				}
				r.scanLeftovers()
				r.bl.wake()
				select {
				case r.rotated <- struct{}{}:
				default:
				}
			}
		case <-second.C:
			if owned {
				r.scanLeftovers()
			}
		}
	}
}

// Rotate rolls the live file over now: flush, create and initialize the
// new <worker>-<timestamp>.db, swap, rewrite worker_config, close the old
// file and seal it. The move of the sealed file into the history folder
// is left to the background job. Only the owner rotates; elsewhere Rotate
// does nothing. A failed flush does not stop the rotation (its events stay
// buffered for the new file); a failed seal leaves the old file in the
// backlog, where the background job seals it again. A replicated
// recorder (Options.Replica) does not rotate: its replica follows one live
// file.
func (r *Recorder) Rotate(ctx context.Context) error {
	if !r.Owner() || r.opts.Replica != nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	_ = r.flushLocked(ctx)
	next, err := r.freeLiveName(r.now())
	if err != nil {
		return err
	}
	old, err := r.st().Rotate(ctx, next)
	if err != nil {
		return fmt.Errorf("rotate to %s: %w", next, err)
	}
	r.live = next
	// The kinds come over with the catalog; worker_config is written anew.
	if err := r.writeConfig(ctx); err != nil {
		r.log.Warn("recorder_config_failed", "db_path", next, "error", err)
	}
	r.sealOne(ctx, old, false)
	return nil
}

// sealOne seals path and hands it to the background job; a failed seal
// puts it in the backlog (logged, counted), and a file that is no recorder
// file is quarantined.
func (r *Recorder) sealOne(ctx context.Context, path string, leftover bool) {
	meta, err := r.seal(ctx, path)
	if err != nil {
		r.bl.add(path, leftover, nil)
		if notRecorderFile(err) {
			r.quarantine(path, err)
			return
		}
		r.sealFailed(path, "seal", err)
		return
	}
	r.bl.add(path, leftover, &meta)
}

// sealFailed notes a failed seal, move or quarantine of path in the
// backlog and logs it. drakkar_recorder_seal_failures_total counts files:
// a file's first failure only, not each retry (one failing file is tried
// several times a tick: after the rotation, on the tick, when woken).
// recorder_seal_failed is a warning the first time and whenever the
// failure changes, then debug while the same failure repeats.
func (r *Recorder) sealFailed(path, stage string, err error) {
	at := r.opts.Now()
	first, same := r.bl.fail(path, stage, err, at)
	if first {
		r.met.sealFailures.Inc()
	}
	r.status.setSeal(SealOutcome{Path: path, Stage: stage, Error: err.Error(), At: at.UTC()})
	level := slog.LevelWarn
	if same {
		level = slog.LevelDebug
	}
	r.log.Log(context.Background(), level, "recorder_seal_failed", "db_path", path, "stage", stage, "error", err)
}

// mover is the background job: it publishes the files of the backlog one
// at a time, each time it is woken (after a rotation, on each rotation
// tick, and when leftovers are found), and after a rotation tick runs
// Options.AfterRotate once the moves are done, until Close.
func (r *Recorder) mover() {
	defer r.wg.Done()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.bl.wakeC:
			r.publishBacklog(r.ctx)
		case <-r.rotated:
			r.publishBacklog(r.ctx)
			if r.opts.AfterRotate != nil && r.ctx.Err() == nil {
				r.opts.AfterRotate(r.ctx)
			}
		}
	}
}

// publishBacklog tries every file of the backlog once: a file that is
// gone leaves it; one not sealed yet is sealed (or quarantined when it is
// no recorder file); a sealed one is published.
func (r *Recorder) publishBacklog(ctx context.Context) {
	for _, it := range r.bl.items() {
		if ctx.Err() != nil {
			return
		}
		if _, err := os.Lstat(it.path); errors.Is(err, os.ErrNotExist) {
			r.bl.remove(it.path)
			continue
		}
		meta := it.meta
		if meta == nil {
			m, err := r.seal(ctx, it.path)
			if notRecorderFile(err) {
				r.quarantine(it.path, err)
				continue
			}
			if err != nil {
				r.sealFailed(it.path, "seal", err)
				continue
			}
			meta = &m
			r.bl.add(it.path, it.leftover, meta)
		}
		pub, err := r.opts.Mover.Publish(ctx, it.path, r.cfg.HistoryDir(), *meta)
		if err != nil {
			if ctx.Err() != nil {
				return // stopping: the file stays in the backlog, not failed
			}
			r.sealFailed(it.path, "publish", err)
			continue
		}
		r.bl.remove(it.path)
		r.status.setSeal(SealOutcome{Path: it.path, Destination: pub.Dest, OK: true, At: r.opts.Now().UTC()})
		event := "recorder_sealed"
		if it.leftover {
			event = "recorder_leftover_sealed"
		}
		r.log.Info(event, "db_path", it.path, "destination", pub.Dest, "crossed_filesystems", pub.CrossedFS,
			"size_bytes", pub.SizeBytes, "events", meta.Tables["events"])
	}
}

// scanLeftovers adds this worker's leftovers to the backlog and wakes the
// background job.
func (r *Recorder) scanLeftovers() {
	live := filepath.Base(r.LiveFile())
	files, err := FindLeftovers(r.cfg.StorageDir, r.cfg.WorkerName, live, r.opts.Now(), r.opts.LeftoverDelay)
	if err != nil {
		r.log.Warn("recorder_background_job_failed", "job", "leftovers", "error", err)
		return
	}
	for _, f := range files {
		if !r.bl.has(f) {
			r.bl.add(f, true, nil)
		}
	}
	if len(files) > 0 {
		r.bl.wake()
	}
}

// Close stops the recorder cleanly: the jobs stop, the buffer is flushed
// a last time (whatever time ctx has left), a replicated owner waits
// (within ctx) for its replica to hold it, the store is closed (as the owner: after its final drain
// of the spool), the live file is sealed — always — and then, while ctx
// has time left, the live file and the backlog are moved into the history
// folder; what is not moved stays in storage.dir for the next start to
// move as leftovers. Last, the watchdog file is marked CLEAN_EXIT and
// removed. The first error is returned; Close always finishes the steps.
func (r *Recorder) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.stopped.Store(true)
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	if r.st() == nil {
		return nil
	}
	var errs []error
	r.mu.Lock()
	// The last flush does not depend on ctx: ctx bounds the moves, and the
	// buffered events must reach the file whatever time is left (a flush
	// is bounded by the writer's busy timeout).
	errs = append(errs, r.flushLocked(context.WithoutCancel(ctx)))
	owned := r.live != "" && r.Owner()
	live := r.live
	r.mu.Unlock()
	if owned && r.opts.Replica != nil {
		// The replica gets what was committed before the file is sealed
		// and moved (its close drains too, but from a loop that may not
		// have begun in a short run); ctx bounds the wait, and a replica
		// that cannot be reached is logged, not fatal: the file is sealed
		// all the same and its events are in the history folder.
		if err := r.st().WaitReplicated(ctx); err != nil {
			r.log.Warn("recorder_replica_wait_failed", "db_path", live, "error", err)
		}
	}
	errs = append(errs, r.st().Close())
	if owned {
		r.sealOne(context.WithoutCancel(ctx), live, false) // the seal always runs
		if ctx.Err() == nil {
			r.publishBacklog(ctx)
		}
		if n := r.bl.len(); n > 0 {
			r.log.Warn("recorder_stop_left_files", "files", n, "folder", r.cfg.StorageDir)
		}
	}
	if r.dog != nil {
		errs = append(errs, r.dog.CleanExit())
	}
	return errors.Join(errs...)
}

// seal seals path (sqlite.Seal: the engine's tables dropped, the journal
// switched to DELETE) and returns its meta object, computed on the
// sealing connection. The file's ledger is copied into the ledger file
// first (see ledgerFile): a file whose ledger could not be kept is not
// sealed.
func (r *Recorder) seal(ctx context.Context, path string) (dbfiles.Meta, error) {
	if err := sqlite.KeepLedger(ctx, ledgerFile(r.cfg), path, r.now().Add(-LedgerRetention)); err != nil {
		return dbfiles.Meta{}, err
	}
	return sealFile(ctx, path, metaBase{
		worker:   r.cfg.WorkerName,
		instance: r.instance,
		cluster:  r.cfg.ClusterName,
		now:      r.now,
	})
}

// LastBreath writes what the buffer holds, at once, when a goroutine of
// the worker is dying of a panic: use it as `defer rec.LastBreath()` at
// the top of the worker's goroutines. It re-panics with the same value
// after the flush. A Go program has no exit hook: a panic that is not
// deferred this way, os.Exit and SIGKILL skip it (the watchdog file
// reports the last two at the next start).
func (r *Recorder) LastBreath() {
	v := recover()
	if v == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err := r.Flush(ctx)
	cancel()
	r.log.Error("recorder_last_breath_flush", "panic", fmt.Sprint(v), "error", err)
	panic(v)
}
