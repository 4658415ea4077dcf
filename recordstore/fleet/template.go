// Path templates: where a key's store lies under the root, and, read
// backwards, which key a file under the root is the store of.

package fleet

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

// The placeholders of a template.
const (
	phTenant = "{tenant}"
	phSlot   = "{slot}"
	phBucket = "{bucket}"
)

// DefaultTemplate returns the template of a mode: "{bucket}/{tenant}.db"
// or "{bucket}/slot-{slot}.db".
func DefaultTemplate(m Mode) string {
	if m == ModeSlot {
		return "{bucket}/slot-{slot}.db"
	}
	return "{bucket}/{tenant}.db"
}

// Template is a parsed path template: a path relative to the root with the
// placeholders {tenant}, {slot} (5 digits) and {bucket} (slot/64, 3
// digits), each at most once.
type Template struct {
	mode Mode
	text string
	re   *regexp.Regexp
	// groups lists the placeholder of each capture group of re, in order.
	groups []string
}

// templateExt is the literal file extension every template ends in.
var templateExt = regexp.MustCompile(`\.[A-Za-z0-9]+$`)

// engineExt are the extensions of the files the engine keeps beside a
// store P (P.lock, P.owner.json, P.sock, P.spool; SQLite's P-wal, P-shm
// and P-journal cannot end a template: see templateExt). A template ending
// in one would name another template's engine files as stores on the
// same root ({tenant}.db.lock is the lock of {tenant}.db), so it is
// refused.
var engineExt = map[string]bool{".lock": true, ".json": true, ".sock": true, ".spool": true}

// ParseTemplate checks text as a template of mode m: relative, with '/'
// separators only ('\' refused), no empty, "." or ".." segment, no segment
// starting with '.', each placeholder at most once and no other brace,
// {tenant} in a tenant fleet and {slot} in a slot fleet (a slot fleet has
// no tenant to name), and a literal file extension after the last
// placeholder, so that SQLite's sidecars (-wal, -shm) and the store's own
// (.lock, .spool, ...) never read as stores; that extension must not be
// one of the engine's own (.lock, .json, .sock, .spool), or the template
// would name another template's engine files on the same root. A refusal
// wraps recordstore.ErrInvalid.
func ParseTemplate(text string, m Mode) (Template, error) {
	if m != ModeTenant && m != ModeSlot {
		return Template{}, recordstore.Invalidf("fleet mode %q: want tenant or slot", cut(string(m)))
	}
	bad := func(why string) (Template, error) {
		return Template{}, recordstore.Invalidf("path template %q: %s", cut(text), why)
	}
	switch {
	case text == "":
		return bad("empty")
	case strings.HasPrefix(text, "/"):
		return bad("absolute")
	case strings.ContainsAny(text, "\\\x00"):
		return bad(`holds '\' or NUL`)
	}
	for _, seg := range strings.Split(text, "/") {
		switch {
		case seg == "":
			return bad("empty segment")
		case seg == "." || seg == "..":
			return bad("segment " + seg)
		case strings.HasPrefix(seg, "."):
			return bad("segment starting with '.'")
		}
	}
	for i := 0; i < len(text); i++ {
		if text[i] < 0x20 || text[i] == 0x7f {
			return bad("control character")
		}
	}
	t := Template{mode: m, text: text}
	var expr strings.Builder
	expr.WriteString("^")
	rest := text
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			expr.WriteString(regexp.QuoteMeta(rest))
			break
		}
		expr.WriteString(regexp.QuoteMeta(rest[:open]))
		rest = rest[open:]
		end := strings.IndexByte(rest, '}')
		if rest[0] == '}' || end < 0 {
			return bad("unbalanced brace")
		}
		ph := rest[:end+1]
		rest = rest[end+1:]
		switch ph {
		case phTenant:
			expr.WriteString(`([a-z0-9][a-z0-9_-]*)`)
		case phSlot:
			expr.WriteString(`([0-9]{5})`)
		case phBucket:
			expr.WriteString(`([0-9]{3})`)
		default:
			return bad("unknown placeholder " + cut(ph))
		}
		for _, g := range t.groups {
			if g == ph {
				return bad(ph + " more than once")
			}
		}
		t.groups = append(t.groups, ph)
	}
	expr.WriteString("$")
	has := func(ph string) bool { return strings.Contains(text, ph) }
	switch {
	case m == ModeTenant && !has(phTenant):
		return bad("a tenant fleet's template needs {tenant}")
	case m == ModeSlot && !has(phSlot):
		return bad("a slot fleet's template needs {slot}")
	case m == ModeSlot && has(phTenant):
		return bad("a slot fleet has no {tenant}")
	}
	last := text[strings.LastIndexByte(text, '}')+1:]
	if !templateExt.MatchString(last) {
		return bad("the file name must end in a literal extension such as .db")
	}
	if ext := strings.ToLower(templateExt.FindString(last)); engineExt[ext] {
		return bad("the extension " + ext + " is one the engine puts beside a store (.lock, .owner.json, .sock, .spool, -wal, -shm, -journal): another template's files would be read as stores; use .db or another extension")
	}
	re, err := regexp.Compile(expr.String())
	if err != nil {
		return bad(err.Error())
	}
	t.re = re
	return t, nil
}

// Mode is the template's fleet mode.
func (t Template) Mode() Mode { return t.mode }

// String is the template's text.
func (t Template) String() string { return t.text }

// Path returns the store path of k relative to the root, with '/'
// separators. A key of another mode is an ErrInvalid error.
func (t Template) Path(k Key) (string, error) {
	if err := t.check(k); err != nil {
		return "", err
	}
	// One ReplaceAll a placeholder: no value holds a '{' (a tenant id is
	// [a-z0-9_-], the others digits), so none can make a placeholder. A
	// strings.Replacer built a call cost a list of 10,000 stores a fifth
	// of its time (Match calls Path for each file).
	p := strings.ReplaceAll(t.text, phTenant, k.Tenant)
	p = strings.ReplaceAll(p, phSlot, pad(k.Slot, 5))
	return strings.ReplaceAll(p, phBucket, pad(k.Bucket(), 3)), nil
}

// check refuses a key whose mode, range or hash does not match this
// template's fleet, before any disk work.
func (t Template) check(k Key) error {
	if k.Mode != t.mode {
		return recordstore.Invalidf("key %s: this is a %s fleet", k, t.mode)
	}
	switch k.Mode {
	case ModeTenant:
		if err := ValidateTenantID(k.Tenant); err != nil {
			return err
		}
		if k.Slot != SlotOf(k.Tenant) {
			return recordstore.Invalidf("key %s: slot %d is not the tenant's", k, k.Slot)
		}
	case ModeSlot:
		if _, err := SlotKey(k.Slot); err != nil {
			return err
		}
	}
	return nil
}

// Match returns the key whose store path is rel (relative to the root,
// '/' separators), or false when rel is no store path of this template:
// a sidecar, a stray file, a bucket that is not the key's.
func (t Template) Match(rel string) (Key, bool) {
	m := t.re.FindStringSubmatch(rel)
	if m == nil {
		return Key{}, false
	}
	var k Key
	var err error
	switch t.mode {
	case ModeTenant:
		for i, g := range t.groups {
			if g == phTenant {
				k, err = TenantKey(m[i+1])
			}
		}
	case ModeSlot:
		for i, g := range t.groups {
			if g == phSlot {
				n, _ := strconv.Atoi(m[i+1])
				k, err = SlotKey(n)
			}
		}
	}
	if err != nil {
		return Key{}, false
	}
	if p, err := t.Path(k); err != nil || p != rel {
		return Key{}, false
	}
	return k, true
}
