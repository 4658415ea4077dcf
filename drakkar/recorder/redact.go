// Redaction: what is hidden before the worker_config row is written, since
// a recorder file is downloadable from the operator UI.
//
// The rules:
//   - kafka_brokers: each comma-separated broker loses its credentials:
//     user info before '@' ("user:pass@host:9092" → "host:9092",
//     "SASL_SSL://u:p@h:9093" → "SASL_SSL://h:9093") and every query
//     parameter whose name is secret-named ("h:9092?sasl.password=x&tls=1"
//     → "h:9092?tls=1").
//   - env vars: the value of a secret-named variable becomes "***"; any
//     other value keeps its text but a URL in it loses its user info
//     ("postgres://u:p@db/x" → "postgres://***@db/x").
//   - sinks: inside the JSON, the value of every secret-named object key
//     (whatever its type) becomes "***", and URL user info is hidden in
//     every string, as for env values.
//
// A name is secret-named when one of its words is. Words are split at
// anything but letters and digits and at a lower-to-upper case change
// ("apiKey" → api, Key), and compared case-insensitively. A word is secret
// when it contains SECRET, PASSWORD, PASSWD, CREDENTIAL or PRIVATE, or when
// it is, or ends with, TOKEN, KEY, AUTH, PASS or CREDS, optionally followed
// by S ("APIKEY", "OAUTH", "ACCESS_TOKENS"). So KEYBOARD_LAYOUT,
// TOKENIZERS_PARALLELISM, AUTHOR and PWD are kept, while MONKEY and BYPASS
// are hidden: the rule errs on the side of hiding.

package recorder

import (
	"strings"
	"unicode"
)

// Redacted is what replaces a hidden value.
const Redacted = "***"

var (
	secretInside = []string{"SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE"}
	secretSuffix = []string{"TOKEN", "KEY", "AUTH", "PASS", "CREDS"}
)

// IsSecretName reports whether a variable or key name is secret-named (see
// the rules at the top of redact.go).
func IsSecretName(name string) bool {
	for _, w := range nameWords(name) {
		w = strings.ToUpper(w)
		for _, m := range secretInside {
			if strings.Contains(w, m) {
				return true
			}
		}
		base := strings.TrimSuffix(w, "S")
		for _, m := range secretSuffix {
			if strings.HasSuffix(w, m) || strings.HasSuffix(base, m) {
				return true
			}
		}
	}
	return false
}

// nameWords splits a name at non-alphanumerics and lower-to-upper changes.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	prevLower := false
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return words
}

// RedactBrokers strips credentials from a comma-separated broker list.
func RedactBrokers(brokers string) string {
	if brokers == "" {
		return ""
	}
	parts := strings.Split(brokers, ",")
	for i, p := range parts {
		parts[i] = redactBroker(p)
	}
	return strings.Join(parts, ",")
}

func redactBroker(b string) string {
	scheme, rest := "", b
	if i := strings.Index(b, "://"); i >= 0 {
		scheme, rest = b[:i+3], b[i+3:]
	}
	query := ""
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, query = rest[:i], rest[i+1:]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	var kept []string
	for _, p := range strings.Split(query, "&") {
		name, _, _ := strings.Cut(p, "=")
		if p != "" && !IsSecretName(name) {
			kept = append(kept, p)
		}
	}
	if len(kept) > 0 {
		rest += "?" + strings.Join(kept, "&")
	}
	return scheme + rest
}

// RedactURLs hides the user info of every URL in s ("scheme://user:pass@"
// → "scheme://***@"); the rest of s is unchanged.
func RedactURLs(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, "/?# \t\n\"'")
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			b.WriteString(Redacted)
			s = s[at:]
		}
	}
}

// RedactEnv returns a copy of env with secret-named values replaced by
// Redacted and URL user info hidden in the others. nil stays nil.
func RedactEnv(env map[string]string) map[string]string {
	if env == nil {
		return nil
	}
	out := make(map[string]string, len(env))
	for k, v := range env {
		if IsSecretName(k) {
			out[k] = Redacted
		} else {
			out[k] = RedactURLs(v)
		}
	}
	return out
}

// RedactJSON returns a copy of a decoded JSON value (maps, slices,
// strings, numbers) with the value of every secret-named object key
// replaced by Redacted and URL user info hidden in every string. Values of
// other types are returned as they are.
func RedactJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if IsSecretName(k) {
				out[k] = Redacted
			} else {
				out[k] = RedactJSON(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = RedactJSON(e)
		}
		return out
	case string:
		return RedactURLs(x)
	}
	return v
}
