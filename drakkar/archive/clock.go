// The file server's clock: ages are measured against the modification
// time of a marker file the pass touches, never against a host's wall
// clock.

package archive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

// ClockPrefix starts the name of the marker file, .clock.<instance>.
const ClockPrefix = ".clock."

// Clock returns "now" for the folder dir.
type Clock func(ctx context.Context, dir string) (time.Time, error)

// FileServerClock returns a Clock that touches dir/.clock.<instance>
// (created 0600 when missing) and answers its modification time: the file
// server's time, comparable with the modification times of the lock, the
// work files and the merge results. The sweep deletes markers left by
// stopped passes; a pass removes its own at the end.
func FileServerClock(instance string) Clock {
	return func(ctx context.Context, dir string) (time.Time, error) {
		if err := ctx.Err(); err != nil {
			return time.Time{}, err
		}
		path := filepath.Join(dir, ClockPrefix+instance)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, fsutil.FileMode)
		if err != nil {
			return time.Time{}, fmt.Errorf("clock marker: %w", err)
		}
		if err := f.Close(); err != nil {
			return time.Time{}, fmt.Errorf("clock marker: %w", err)
		}
		if err := touchNow(path); err != nil {
			return time.Time{}, fmt.Errorf("touch clock marker: %w", err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return time.Time{}, fmt.Errorf("clock marker: %w", err)
		}
		return fi.ModTime().UTC(), nil
	}
}
