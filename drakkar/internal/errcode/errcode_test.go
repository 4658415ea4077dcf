package errcode_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fb46ecde/records/drakkar/internal/errcode"
	"github.com/fb46ecde/records/recordstore"
)

func TestSentinel(t *testing.T) {
	for _, c := range []struct{ code, text string }{
		{"invalid", "invalid: bad thing"},
		{"unsupported", "unsupported: bad thing"},
		{"fenced", "fenced: bad thing"},
		{recordstore.CodeInternal, "internal: bad thing"},
	} {
		s := errcode.Sentinel(c.code, "bad thing")
		if got := s.Error(); got != c.text {
			t.Errorf("Sentinel(%q).Error() = %q, want %q", c.code, got, c.text)
		}
		e := recordstore.Errorf(s, "at %s", "x")
		w := fmt.Errorf("context: %w", e)
		for _, err := range []error{s, e, w} {
			if got := recordstore.Code(err); got != c.code {
				t.Errorf("Code(%v) = %q, want %q", err, got, c.code)
			}
			if !errors.Is(err, s) {
				t.Errorf("errors.Is(%v, sentinel) is false", err)
			}
		}
		if got := recordstore.Message(e); got != "bad thing: at x" {
			t.Errorf("Message(%v) = %q", e, got)
		}
	}
}
