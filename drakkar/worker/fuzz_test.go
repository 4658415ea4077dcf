// Fuzz target of the configuration decoder (listed in FUZZ_TARGETS).

package worker_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fb46ecde/records/drakkar/worker"
)

// FuzzLoadYAML: any file either loads or fails with ErrConfig only, never
// panics; ParseYAML agrees (a document it refuses, Load refuses too), and
// every key of a loaded document is known or ignored.
func FuzzLoadYAML(f *testing.F) {
	f.Add([]byte("worker: {name: w}\nui:\n  recorder:\n    max_buffer: 2000\n"))
	f.Add([]byte("worker:\n  name: w\nhistory:\n  archive:\n    window_hours: 0.5\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p := filepath.Join(t.TempDir(), "w.yaml")
		if err := os.WriteFile(p, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		_, perr := worker.ParseYAML(raw)
		if perr != nil && !errors.Is(perr, worker.ErrConfig) {
			t.Fatalf("ParseYAML error %v is not ErrConfig", perr)
		}
		cfg, err := worker.Load(worker.LoadOptions{File: p})
		if err != nil {
			if !errors.Is(err, worker.ErrConfig) {
				t.Fatalf("Load error %v is not ErrConfig", err)
			}
			return
		}
		if perr != nil {
			t.Fatalf("Load accepted what ParseYAML refused: %v", perr)
		}
		if cfg.Recorder.WorkerName == "" {
			t.Fatal("a loaded config has no worker name")
		}
	})
}
