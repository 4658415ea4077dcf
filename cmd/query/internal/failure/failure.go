// Code and message of an error as the command line and the HTTP API print
// them.

package failure

import (
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

// Code returns the stable code of err: the code of the recordstore sentinel
// it wraps, or "internal" when it wraps none. A nil error has code "".
func Code(err error) string {
	return recordstore.Code(err)
}

// Message returns err's text on one line with the text of its code's
// sentinel removed wherever it starts a segment, so that "invalid: kind
// jobs: no columns" under code "invalid" reads "kind jobs: no columns", and
// "open store x: not found: stream s" reads "open store x: stream s". When
// nothing would be left the text is kept as it is.
func Message(err error) string {
	if err == nil {
		return ""
	}
	msg := oneLine(err.Error())
	sentinel := recordstore.SentinelForCode(Code(err))
	if sentinel == nil {
		return msg
	}
	if stripped := strip(msg, sentinel.Error()+": "); stripped != "" {
		return stripped
	}
	return msg
}

// strip removes every occurrence of prefix that starts the text or follows
// a ": " separator.
func strip(msg, prefix string) string {
	for strings.HasPrefix(msg, prefix) {
		msg = msg[len(prefix):]
	}
	var b strings.Builder
	for {
		i := strings.Index(msg, ": "+prefix)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i+2])
		msg = msg[i+2+len(prefix):]
		for strings.HasPrefix(msg, prefix) {
			msg = msg[len(prefix):]
		}
	}
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", " ")), " ")
}
