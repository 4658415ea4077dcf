// The files beside a store's configured path P.

package owner

import (
	"crypto/sha1"
	"encoding/hex"
	"os"
	"path/filepath"
)

// maxSocketPath is the longest unix socket path we bind: sun_path holds 108
// bytes on Linux and 104 on macOS, including the terminating NUL.
const maxSocketPath = 100

// Paths are the files of one store, all derived from its configured path P
// (for example data/records.sqlite), never from the versioned live file, so
// there is one owner across builds.
type Paths struct {
	Config string // P
	Lock   string // P.lock: the flock, the only liveness truth
	State  string // P.owner.json: the owner's advisory state
	Socket string // P.sock, or a hashed name in the temp folder when P.sock is too long
	Spool  string // P.spool
}

// PathsFor returns the paths of the store configured at path.
func PathsFor(path string) Paths {
	p := filepath.Clean(path)
	return Paths{
		Config: p,
		Lock:   p + ".lock",
		State:  p + ".owner.json",
		Socket: socketPath(p),
		Spool:  p + ".spool",
	}
}

// socketPath returns P.sock when it fits in sun_path, else
// $TMPDIR/recordstore-<sha1(abs P)[:12]>.sock. Clients never guess: they
// read the socket path from the state file.
func socketPath(p string) string {
	s := p + ".sock"
	if len(s) <= maxSocketPath {
		return s
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = p
	}
	sum := sha1.Sum([]byte(abs))
	return filepath.Join(os.TempDir(), "recordstore-"+hex.EncodeToString(sum[:])[:12]+".sock")
}
