// The watchdog file (spec "Watchdog file"): <worker>.watchdog in
// storage.dir, present while a worker runs, so that the next start can
// tell a killed run (OOM, SIGKILL) from a clean stop.

package recorder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fb46ecde/records/drakkar/dbfiles"
	"github.com/fb46ecde/records/recordstore/fsutil"
)

// CleanExitMarker is the content of the watchdog file after a clean stop.
const CleanExitMarker = "CLEAN_EXIT"

// Watchdog is the running worker's watchdog file.
type Watchdog struct {
	path string
	h    *fsutil.Helper
}

// RunInfo is what the watchdog file of a running owner says of its run, so
// that another process recording as the same worker can tell that it was
// configured for another cluster or shared folder: JSON
// {"cluster":…,"shared_dir":…} (never holding the CLEAN_EXIT marker).
type RunInfo struct {
	// Cluster is cluster.name as configured.
	Cluster string `json:"cluster"`
	// SharedDir is the absolute shared folder the run publishes into.
	SharedDir string `json:"shared_dir"`
}

// ReadRunInfo reads the run info in storageDir/<worker>.watchdog. ok is
// false when there is no file or it holds none (a stopped run, an owner of
// an earlier release or another implementation): nothing can be checked.
func ReadRunInfo(storageDir, worker string) (info RunInfo, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(storageDir, dbfiles.WatchdogFileName(worker)))
	if errors.Is(err, os.ErrNotExist) {
		return RunInfo{}, false, nil
	}
	if err != nil {
		return RunInfo{}, false, fmt.Errorf("read watchdog: %w", err)
	}
	if json.Unmarshal(b, &info) != nil || info.SharedDir == "" {
		return RunInfo{}, false, nil
	}
	return info, true, nil
}

// OpenWatchdog is OpenWatchdogWith without run info: the file is written
// empty.
func OpenWatchdog(storageDir, worker string) (w *Watchdog, previousKilled bool, err error) {
	return openWatchdog(storageDir, worker, nil)
}

// OpenWatchdogWith is OpenWatchdog writing run as the file's content.
func OpenWatchdogWith(storageDir, worker string, run RunInfo) (w *Watchdog, previousKilled bool, err error) {
	body, err := json.Marshal(run)
	if err != nil {
		return nil, false, fmt.Errorf("encode watchdog: %w", err)
	}
	return openWatchdog(storageDir, worker, body)
}

// openWatchdog reads storageDir/<worker>.watchdog left by the previous run
// and then writes it again with body, durably, mode 0600.
// previousKilled is true when the file was there without the CLEAN_EXIT
// marker: the previous run ended without a clean stop. An absent file is
// a first run or a clean previous run (CleanExit removes the file).
//
// On error the old file is unchanged (or absent) and no Watchdog is
// returned; previousKilled is still reported when the read succeeded.
func openWatchdog(storageDir, worker string, body []byte) (w *Watchdog, previousKilled bool, err error) {
	path := filepath.Join(storageDir, dbfiles.WatchdogFileName(worker))
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, false, fmt.Errorf("read watchdog: %w", err)
	default:
		previousKilled = !bytes.Contains(old, []byte(CleanExitMarker))
	}
	w = &Watchdog{path: path, h: fsutil.Default}
	if err := w.h.WriteFile(path, body, fsutil.FileMode); err != nil {
		return nil, previousKilled, fmt.Errorf("write watchdog: %w", err)
	}
	return w, previousKilled, nil
}

// Path is the watchdog file's path.
func (w *Watchdog) Path() string { return w.path }

// CleanExit marks a clean stop: it writes CLEAN_EXIT into the file
// durably, then removes it and fsyncs the folder. A crash between the two
// leaves the marker, which the next start reads as clean. The file is
// removed even when the marker cannot be written (a full disk: the
// marker's temp file needs space, a removal does not), since an absent
// file reads as clean too; the marker only covers a crash between the
// two. On error the file is still there, with the marker when its write
// succeeded, else unchanged (and the next start reports a killed run), or
// it is removed but the folder's fsync failed.
func (w *Watchdog) CleanExit() error {
	var mark error
	if err := w.h.WriteFile(w.path, []byte(CleanExitMarker), fsutil.FileMode); err != nil {
		mark = fmt.Errorf("mark clean exit: %w", err)
	}
	if err := w.h.FS.Remove(w.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return errors.Join(mark, fmt.Errorf("remove watchdog: %w", err))
	}
	return w.h.SyncDir(filepath.Dir(w.path))
}
