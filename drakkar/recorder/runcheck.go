// The check a process that records through a running owner's spool makes:
// its events go to the owner's file, sealed into the owner's history
// folder, so a --cluster or --shared of its own that differs is refused
// rather than silently ignored.

package recorder

import (
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/recordstore"
)

// checkOwnerRun compares this process's cluster and shared folder with
// the run info of the worker's owner (its watchdog file) and fails with
// ErrConfig naming both values when one differs. An owner whose watchdog
// says nothing (an earlier release, another implementation) is not
// checked.
func (r *Recorder) checkOwnerRun() error {
	run, ok, err := ReadRunInfo(r.cfg.StorageDir, r.cfg.WorkerName)
	if err != nil || !ok {
		return nil // best effort: the watchdog is advisory
	}
	if run.Cluster != r.cfg.ClusterName {
		return recordstore.Errorf(ErrConfig, "cluster.name %s differs from %s, the cluster of the running worker %s: its events would go to that cluster's history",
			recordstore.Quote(r.cfg.ClusterName), recordstore.Quote(run.Cluster), recordstore.Quote(r.cfg.WorkerName))
	}
	if own := absDir(r.cfg.Shared()); !sameDir(own, run.SharedDir) {
		return recordstore.Errorf(ErrConfig, "shared.dir %s differs from %s, the shared folder of the running worker %s: its events would be sealed there",
			recordstore.Quote(own), recordstore.Quote(run.SharedDir), recordstore.Quote(r.cfg.WorkerName))
	}
	return nil
}

// absDir is dir made absolute and clean (as it is when that fails).
func absDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return filepath.Clean(dir)
}

// sameDir reports whether a and b name one folder: the same clean path, or
// two paths of one existing folder (a symbolic link).
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}
