package registry

import "time"

// ShiftServerClock makes the registry read the file server's clock d
// ahead of the marker's time until the returned function runs.
func ShiftServerClock(d time.Duration) func() {
	serverNow = func(dir, instance string) (time.Time, error) {
		t, err := ServerNow(dir, instance)
		return t.Add(d), err
	}
	return func() { serverNow = ServerNow }
}
