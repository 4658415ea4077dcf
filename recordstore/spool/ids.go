// Producer identity: the per-process instance id, the producer seq that only
// grows within an instance, and random batch ids.

package spool

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"sync/atomic"

	"github.com/fb46ecde/records/recordstore"
)

// Lengths of the hex ids in batch names and manifests.
const (
	InstanceLen = 16 // lowercase hex characters of an instance id
	IDLen       = 32 // lowercase hex characters of a batch id
	// MaxSeq is the largest producer seq a batch name can carry (12
	// decimal digits).
	MaxSeq = 999_999_999_999
)

// Identity is one producer: an instance id and the seq counter of its
// batches. It is safe for concurrent use; every Next returns a larger seq
// than the one before.
type Identity struct {
	// Instance is 16 lowercase hex characters, random per Identity.
	Instance string
	// Pid, Host and Build describe the producer in manifests (advisory).
	Pid   int
	Host  string
	Build string

	seq atomic.Int64
}

// NewIdentity returns a fresh identity with a random instance id, this
// process's pid and host name, and the given build string.
func NewIdentity(build string) *Identity {
	host, _ := os.Hostname()
	return &Identity{Instance: randomHex(InstanceLen / 2), Pid: os.Getpid(), Host: host, Build: build}
}

// Next returns the identity's next producer seq, starting at 1.
func (id *Identity) Next() int64 { return id.seq.Add(1) }

// Producer returns the identity as the producer of its batch seq.
func (id *Identity) Producer(seq int64) recordstore.Producer {
	return recordstore.Producer{Instance: id.Instance, Seq: seq, PID: id.Pid, Host: id.Host, Build: id.Build}
}

var (
	processOnce     sync.Once
	processIdentity *Identity
)

// ProcessIdentity returns the identity shared by every Writer of this
// process that was not given its own: one instance id per process.
func ProcessIdentity() *Identity {
	processOnce.Do(func() { processIdentity = NewIdentity("") })
	return processIdentity
}

// NewID returns a random batch id: 32 lowercase hex characters (128 bits).
func NewID() string { return randomHex(IDLen / 2) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it aborts the process instead)
	return hex.EncodeToString(b)
}

// ValidInstance reports whether s is a well-formed instance id.
func ValidInstance(s string) bool { return isLowerHex(s, InstanceLen) }

// ValidID reports whether s is a well-formed batch id.
func ValidID(s string) bool { return isLowerHex(s, IDLen) }

// IDOf returns the batch id that s names: s itself when it is a batch id,
// else the id in the batch name s. Anything else fails with
// ErrBadBatchName.
func IDOf(s string) (string, error) {
	if ValidID(s) {
		return s, nil
	}
	if n, err := ParseBatchName(s); err == nil {
		return n.ID, nil
	}
	return "", recordstore.Errorf(ErrBadBatchName, "%s is neither a batch id (%d lowercase hex digits) nor a batch name", recordstore.Quote(s), IDLen)
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
