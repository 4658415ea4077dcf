// Fuzz targets of the exchange's decoders (listed in FUZZ_TARGETS): the
// route's query parser and the pull's page decoder.

package cache

import (
	"errors"
	"net/url"
	"testing"
)

// FuzzParseChangesQuery: the parser never panics, answers one of the four
// texts or a query within the route's bounds.
func FuzzParseChangesQuery(f *testing.F) {
	f.Add("scopes=global&limit=0")
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, bad := ParseChangesQuery(v)
		switch bad {
		case "":
			if len(q.Scopes) == 0 || len(q.Scopes) > 2 || q.Limit < 1 || q.Limit > MaxPageLimit {
				t.Fatalf("accepted %q as %+v", raw, q)
			}
		case ErrTextScopes, ErrTextCursor, ErrTextAfterMS, ErrTextLimit:
		default:
			t.Fatalf("unknown text %q", bad)
		}
	})
}

// FuzzDecodePage: the decoder never panics, refuses with ErrBadPage only,
// and what it accepts is rows of the origin and scopes asked, each good,
// in strictly increasing cursor order.
func FuzzDecodePage(f *testing.F) {
	f.Add([]byte(`{"rows":[],"more":false}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := decodePage(raw, "w2", []Scope{ScopeGlobal}, nil)
		if err != nil {
			if !errors.Is(err, ErrBadPage) {
				t.Fatalf("error %v is not ErrBadPage", err)
			}
			return
		}
		for i, e := range p.Rows {
			if e.Check() != nil || e.OriginWorkerID != "w2" || e.Scope != ScopeGlobal {
				t.Fatalf("accepted a bad row %+v", e)
			}
			if i > 0 && !cursorOf(p.Rows[i-1]).Less(cursorOf(e)) {
				t.Fatalf("accepted rows out of order")
			}
		}
	})
}
