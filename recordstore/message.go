// Error-message helpers shared by every package that refuses input: input
// quoted short, and an ErrInvalid error's message (its Msg) for nesting in
// another message.

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

// InvalidText returns the Msg of an "invalid" *Error ("kind jobs: no
// columns" where Error() says "invalid: kind jobs: no columns"), for use
// inside another ErrInvalid message. Any other error, including one that
// wraps an *Error inside more context, is returned as its whole text.
func InvalidText(err error) string {
	if e, ok := err.(*Error); ok && e.Code == "invalid" && e.Msg != "" {
		return e.Msg
	}
	return err.Error()
}

// Message returns err's text on one line, for printing next to its code
// (Code), without the code's sentinel text: "invalid: kind jobs: no
// columns" reads "kind jobs: no columns". An *Error gives its Msg, unless
// its %w cause has the same code (and so may carry the sentinel's text
// inside Msg). Any other error only exists as text once wrapped, so its
// text goes through cutSentinelText: "open store x: not found: stream s"
// reads "open store x: stream s" and "batch b: schema_conflict: kind k: key
// differs" reads "batch b: kind k: key differs". Line breaks become spaces.
// When nothing would be left (a bare sentinel) the text is kept. A nil
// error has message "".
func Message(err error) string {
	if err == nil {
		return ""
	}
	code := Code(err)
	if e, ok := err.(*Error); ok && e.Code == code && e.Msg != "" && !e.quotesCode {
		return oneLine(e.Msg)
	}
	return cutSentinelText(oneLine(err.Error()), code, cutSegments)
}

// sentinelCut says where cutSentinelText removes a sentinel's text.
type sentinelCut int

const (
	// cutLeading removes it once, from the front (what AsBatchError
	// records).
	cutLeading sentinelCut = iota
	// cutSegments removes the sentinel's text and the code as a
	// BatchError writes it ("schema_conflict: " where the sentinel says
	// "schema conflict: ") wherever they start a ": "-separated segment,
	// repeatedly (what Message prints): "a: invalid: invalid: b" becomes
	// "a: b".
	cutSegments
)

// cutSentinelText removes the text of code's sentinel from text, where
// says. It is the one place that parses an error's text, and it exists
// because some errors are only text: a BatchError read back from the
// ledger, an error.json file or the control socket holds whatever message
// its writer recorded ("entry 0: invalid: checksum mismatch"), and an
// error wrapped with fmt.Errorf("%w: ...", ErrX) or around an *Error keeps
// no fields of its own. Errors built by Errorf and Invalidf never come here
// unwrapped. A code without a sentinel leaves text as it is; a cut that
// would leave nothing keeps the text.
func cutSentinelText(text, code string, where sentinelCut) string {
	sentinel := SentinelForCode(code)
	if sentinel == nil {
		return text
	}
	if where == cutLeading {
		return strings.TrimPrefix(text, sentinel.Error()+": ")
	}
	for _, prefix := range []string{sentinel.Error() + ": ", code + ": "} {
		var b strings.Builder
		rest := text
		for {
			for strings.HasPrefix(rest, prefix) {
				rest = rest[len(prefix):]
			}
			i := strings.Index(rest, ": "+prefix)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			b.WriteString(rest[:i+2])
			rest = rest[i+2:]
		}
		if b.Len() > 0 {
			text = b.String()
		}
	}
	return text
}

// oneLine trims s and, when it spans several lines, joins its words with
// single spaces.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
