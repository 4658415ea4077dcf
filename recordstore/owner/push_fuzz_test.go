package owner_test

import (
	"testing"

	"github.com/fb46ecde/records/recordstore/owner"
)

// FuzzDecodeNotice: DecodeNotice never panics, and a notice it accepts is
// accepted again, with the same count, from its canonical line.
func FuzzDecodeNotice(f *testing.F) {
	for _, seed := range []string{`{"commit":1}` + "\n", `{"commit":18446744073709551615}`, `{"commit":0}`,
		`{"commit":-1}`, `{"commit":1.5}`, `{"commit":1}{"commit":2}`, `{"commit":1,"x":2}`, `{}`, `[]`, `null`,
		`{"commit":"1"}`, ``, "{\"commit\":1}\n\n", `{"COMMIT":3}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		n, err := owner.DecodeNotice(line)
		if err != nil {
			return
		}
		if n.Commit == 0 {
			t.Fatalf("accepted %q with no commit count", line)
		}
		again, err := owner.DecodeNotice(owner.AppendNotice(nil, n.Commit))
		if err != nil || again != n {
			t.Fatalf("%q decoded as %+v, its canonical line as %+v (%v)", line, n, again, err)
		}
	})
}
