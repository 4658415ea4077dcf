// Error-message helpers shared by every package that refuses input: input
// quoted short, and an ErrInvalid error's text without its "invalid: "
// prefix for nesting in another message.

package recordstore

import (
	"strings"

	"github.com/fb46ecde/records/recordstore/internal/jsonx"
)

// MaxQuote is how many bytes of a caller's input an error message shows
// at most (see Quote).
const MaxQuote = jsonx.MaxQuote

// Quote quotes s for an error message as %q does, cut after MaxQuote bytes
// (at a character boundary) and followed by its length when longer:
// "abc"... (1048576 bytes). Every message that echoes input uses it, so a
// megabyte of input never makes a megabyte of error.
func Quote(s string) string { return jsonx.Quote(s) }

// InvalidText returns err's message without the "invalid: " its ErrInvalid
// wrapping put in front, for use inside another ErrInvalid message.
func InvalidText(err error) string {
	s := err.Error()
	if rest, ok := strings.CutPrefix(s, ErrInvalid.Error()+": "); ok && rest != "" {
		return rest
	}
	return s
}
