// Quoting input in error messages, cut short: an error names what it
// refused without echoing a megabyte of it.

package jsonx

import (
	"strconv"
	"unicode/utf8"
)

// MaxQuote is how many bytes of input Quote shows at most.
const MaxQuote = 200

// Quote returns s quoted as Go's %q quotes it. Input longer than MaxQuote
// bytes is cut at a character boundary at or before MaxQuote bytes and
// followed by "..." and its length: "abc"... (1048576 bytes).
func Quote[T string | []byte](s T) string {
	if len(s) <= MaxQuote {
		return strconv.Quote(string(s))
	}
	cut := MaxQuote
	for cut > MaxQuote-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(string(s[:cut])) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
