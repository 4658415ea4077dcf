// Fuzz targets of the decoders (listed in FUZZ_TARGETS): Canonicalize, the
// meta file and lock body codecs, and the recorder file name parser.

package dbfiles_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

func addFixtureSeed(f *testing.F, name string) {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

// FuzzCanonicalize: canonical text is valid JSON and its own canonical
// form; Go's json.Valid agrees on what is JSON (for UTF-8 text, except for
// floats beyond float64's range).
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.5,"x\u2028"]}`, `1e400`, `-0`, `"\ud800"`, `[1,]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := dbfiles.Canonicalize(raw)
		if err != nil {
			if !errors.Is(err, dbfiles.ErrBadJSON) {
				t.Fatalf("error %v is not ErrBadJSON", err)
			}
			if json.Valid(raw) && utf8.Valid(raw) && !errors.Is(err, strconv.ErrRange) {
				t.Fatalf("json.Valid accepts %q, Canonicalize refused it: %v", raw, err)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("Canonicalize accepted invalid JSON %q", raw)
		}
		again, err := dbfiles.Canonicalize(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("canonical %q is not a fixed point: %q, %v", out, again, err)
		}
	})
}

// FuzzDecodeMeta: a meta that decodes encodes to bytes that decode to the
// same value, and those bytes are canonical.
func FuzzDecodeMeta(f *testing.F) {
	addFixtureSeed(f, "history_meta.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := dbfiles.DecodeMeta(b)
		if err != nil {
			if !errors.Is(err, dbfiles.ErrBadMeta) {
				t.Fatalf("error %v is not ErrBadMeta", err)
			}
			return
		}
		out, err := dbfiles.EncodeMeta(m)
		if err != nil {
			t.Fatalf("decoded meta does not encode: %v", err)
		}
		back, err := dbfiles.DecodeMeta(out)
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip: %+v, %v; want %+v", back, err, m)
		}
		if canon, err := dbfiles.Canonicalize(out); err != nil || string(canon) != string(out) {
			t.Fatalf("encoded meta %q is not canonical", out)
		}
	})
}

// FuzzDecodeLock: a lock body that decodes encodes to bytes that decode to
// the same value.
func FuzzDecodeLock(f *testing.F) {
	addFixtureSeed(f, "archive_lock.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := dbfiles.DecodeLock(b)
		if err != nil {
			if !errors.Is(err, dbfiles.ErrBadLock) {
				t.Fatalf("error %v is not ErrBadLock", err)
			}
			return
		}
		out, err := dbfiles.EncodeLock(l)
		if err != nil {
			t.Fatalf("decoded lock does not encode: %v", err)
		}
		back, err := dbfiles.DecodeLock(out)
		if err != nil || back != l {
			t.Fatalf("round trip: %+v, %v; want %+v", back, err, l)
		}
	})
}

// FuzzParseRecorderFileName: a name that parses is exactly the name
// RecorderFileName writes for its worker and time, and no other worker
// name parses it.
func FuzzParseRecorderFileName(f *testing.F) {
	f.Add("a", "a-2026-10-13__08_00_05.db", "a-b")
	f.Add("a-b", "a-b-2026-10-13__08_00_05.db", "a")
	f.Fuzz(func(t *testing.T, worker, name, other string) {
		ts, ok := dbfiles.ParseRecorderFileName(worker, name)
		if !ok {
			return
		}
		if got := dbfiles.RecorderFileName(worker, ts); got != name {
			t.Fatalf("parsed %q for worker %q, which writes %q", name, worker, got)
		}
		if other != worker {
			if _, ok := dbfiles.ParseRecorderFileName(other, name); ok {
				t.Fatalf("%q matches both %q and %q", name, worker, other)
			}
		}
	})
}

// FuzzParseSealedName: a name it accepts is exactly the recorder file
// name of its worker and start.
func FuzzParseSealedName(f *testing.F) {
	for _, s := range []string{"w-2026-10-13__08_00_00.db", "a-b-2026-10-13__08_00_00.db", "-2026-10-13__08_00_00.db",
		".w-2026-10-13__08_00_00.db", "w-2026-02-30__08_00_00.db", "x.db", "w-2026-10-13__08_00_00.db.gz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		w, start, ok := dbfiles.ParseSealedName(name)
		if !ok {
			return
		}
		if w == "" || dbfiles.RecorderFileName(w, start) != name {
			t.Fatalf("%q accepted as worker %q at %v, which names %q", name, w, start, dbfiles.RecorderFileName(w, start))
		}
	})
}

// FuzzParseMergedName: a name it accepts is exactly the merge result name
// of its start and id.
func FuzzParseMergedName(f *testing.F) {
	for _, s := range []string{"merged-2026-10-13__08_00_00-0123456789abcdef.db", "merged-2026-10-13__08_00_00-0123456789ABCDEF.db",
		"merged-x.db", "merged-2026-13-13__08_00_00-0123456789abcdef.db", "evil.db"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		start, hex, ok := dbfiles.ParseMergedName(name)
		if !ok {
			return
		}
		if dbfiles.MergedName(start, hex) != name {
			t.Fatalf("%q accepted as %v %q, which names %q", name, start, hex, dbfiles.MergedName(start, hex))
		}
	})
}
