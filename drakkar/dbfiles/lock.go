// The body of a cluster history folder's archive lock (spec "The archive
// lock"): its codec.

package dbfiles

import (
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// LockBody is the content of history/<cluster>/.archive.lock.
type LockBody struct {
	// AcquiredAt is when the holder created the lock.
	AcquiredAt time.Time
	// Instance is the 16 lowercase hex id of the holder's process.
	Instance string
	// Token is 16 lowercase hex, new for every acquisition; fencing
	// compares it.
	Token string
	// Worker is the holder's worker name.
	Worker string
}

var lockKeys = []string{"acquired_at", "instance", "token", "worker"}

// EncodeLock returns the canonical bytes of l: sorted keys, compact,
// acquired_at in FormatTime, no trailing newline. An instance or a token
// that is not 16 lowercase hex is ErrBadLock.
func EncodeLock(l LockBody) ([]byte, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	b, err := CanonicalJSON(map[string]any{
		"acquired_at": FormatTime(l.AcquiredAt),
		"instance":    l.Instance,
		"token":       l.Token,
		"worker":      l.Worker,
	})
	if err != nil {
		return nil, recordstore.Errorf(ErrBadLock, "%w", err)
	}
	return b, nil
}

func (l LockBody) check() error {
	if !IsHex16(l.Instance) || !IsHex16(l.Token) {
		return recordstore.Errorf(ErrBadLock, "instance and token must be 16 lowercase hex")
	}
	return nil
}

// DecodeLock reads lock body bytes strictly: exactly the four keys, all
// strings, acquired_at in the FormatTime shape, instance and token 16
// lowercase hex. Every failure is ErrBadLock.
func DecodeLock(b []byte) (LockBody, error) {
	obj, err := decodeObject(b, lockKeys)
	if err != nil {
		return LockBody{}, recordstore.Errorf(ErrBadLock, "%w", err)
	}
	var l LockBody
	d := fieldDecoder{obj: obj}
	d.time("acquired_at", &l.AcquiredAt)
	d.str("instance", &l.Instance)
	d.str("token", &l.Token)
	d.str("worker", &l.Worker)
	if d.err != nil {
		return LockBody{}, recordstore.Errorf(ErrBadLock, "%w", d.err)
	}
	if err := l.check(); err != nil {
		return LockBody{}, err
	}
	return l, nil
}
