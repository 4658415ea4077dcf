// Bound kinds: a kind bound to a table the caller creates with its own
// DDL, and the rules its declaration meets before any backend runs a line
// of that DDL.

package recordstore

import (
	"regexp"
	"slices"
	"strings"
)

// BoundTable binds a kind to a table the caller creates with its own DDL.
// The store runs the DDL verbatim, in order, when the table is missing,
// and checks the kind's columns against the table it finds (see the
// backend's documentation for the checks and for which column holds the
// seq). A bound kind holds one stream: the table has no stream column.
type BoundTable struct {
	Name string   `json:"name"` // the table's name as in the DDL
	DDL  []string `json:"ddl"`  // statements run verbatim, in order, when the table is missing
}

// Equal reports whether two bindings are the same (both nil, or the same
// name and the same statements, byte for byte).
func (b *BoundTable) Equal(o *BoundTable) bool {
	if b == nil || o == nil {
		return b == o
	}
	return b.Name == o.Name && slices.Equal(b.DDL, o.DDL)
}

// MaxBoundDDL is the most DDL statements a bound kind may carry: one
// CREATE TABLE and up to MaxIndexes CREATE INDEX.
const MaxBoundDDL = 1 + MaxIndexes

var boundTableRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// validateBound checks a bound kind's binding: a plain table name without
// a reserved prefix, no retention, indexes or time column (the DDL owns
// the table's layout), and DDL that can only create that table and its
// indexes (see CheckBoundDDL).
func (k *Kind) validateBound() error {
	b := k.Table
	if b == nil {
		return nil
	}
	if !boundTableRE.MatchString(b.Name) {
		return Invalidf("kind %s: table name %s: want ^[A-Za-z_][A-Za-z0-9_]{0,62}$", k.Name, Quote(b.Name))
	}
	if low := lower(b.Name); strings.HasPrefix(low, "record_") || strings.HasPrefix(low, "sqlite_") {
		return Invalidf("kind %s: table name %s: the prefixes record_ and sqlite_ are reserved", k.Name, Quote(b.Name))
	}
	switch {
	case k.Retention != nil:
		return Invalidf("kind %s: a bound kind has no retention", k.Name)
	case len(k.Indexes) > 0:
		return Invalidf("kind %s: a bound kind has no indexes: its DDL creates them", k.Name)
	case k.TimeColumn != "":
		return Invalidf("kind %s: a bound kind has no timeColumn", k.Name)
	}
	return CheckBoundDDL(k.Name, b)
}

// CheckBoundDDL returns an ErrInvalid error, naming the kind and the
// statement, unless b.DDL is between 1 and MaxBoundDDL statements, each
// exactly one statement (nothing but whitespace and comments after its
// end), the first `CREATE TABLE [IF NOT EXISTS] <b.Name> (` and every
// other `CREATE [UNIQUE] INDEX [IF NOT EXISTS] <index> ON <b.Name>`. So a
// declaration, spooled by any process, can run nothing but the creation
// of its own table: no DROP, no ATTACH, no second table.
func CheckBoundDDL(kind string, b *BoundTable) error {
	if len(b.DDL) == 0 || len(b.DDL) > MaxBoundDDL {
		return Invalidf("kind %s: table %s: want 1 to %d DDL statements, have %d", kind, b.Name, MaxBoundDDL, len(b.DDL))
	}
	for i, stmt := range b.DDL {
		toks, err := sqlTokens(stmt)
		if err == nil {
			err = checkCreate(toks, b.Name, i == 0)
		}
		if err != nil {
			return Invalidf("kind %s: table %s: DDL statement %d %s: %s", kind, b.Name, i+1, Quote(stmt), err.Error())
		}
	}
	return nil
}

// ddlError is a plain message, wrapped into an ErrInvalid by CheckBoundDDL.
type ddlError string

func (e ddlError) Error() string { return string(e) }

// checkCreate matches the tokens of one statement against the two forms a
// bound table's DDL may take.
func checkCreate(toks []sqlToken, table string, first bool) error {
	p := tokenCursor{toks: toks}
	if !p.word("CREATE") {
		return ddlError("want CREATE TABLE or CREATE INDEX")
	}
	if first {
		if !p.word("TABLE") {
			return ddlError("the first statement must be CREATE TABLE " + table)
		}
		p.ifNotExists()
		if !p.name(table) {
			return ddlError("want CREATE TABLE " + table)
		}
		if !p.punct("(") {
			return ddlError("want a column list after the table name")
		}
		return nil
	}
	p.word("UNIQUE")
	if !p.word("INDEX") {
		return ddlError("want CREATE [UNIQUE] INDEX ... ON " + table)
	}
	p.ifNotExists()
	if !p.anyName() || !p.word("ON") || !p.name(table) {
		return ddlError("want CREATE [UNIQUE] INDEX <name> ON " + table)
	}
	return nil
}

// sqlToken is one token of SQL text: a word (keyword or bare identifier),
// a quoted identifier (unquoted into text), a string literal, or one
// character of punctuation.
type sqlToken struct {
	kind byte // 'w' word, 'q' quoted identifier, 's' string, 'p' punctuation
	text string
}

type tokenCursor struct {
	toks []sqlToken
	i    int
}

func (c *tokenCursor) next() (sqlToken, bool) {
	if c.i >= len(c.toks) {
		return sqlToken{}, false
	}
	return c.toks[c.i], true
}

func (c *tokenCursor) word(w string) bool {
	if t, ok := c.next(); ok && t.kind == 'w' && strings.EqualFold(t.text, w) {
		c.i++
		return true
	}
	return false
}

func (c *tokenCursor) punct(p string) bool {
	if t, ok := c.next(); ok && t.kind == 'p' && t.text == p {
		c.i++
		return true
	}
	return false
}

func (c *tokenCursor) ifNotExists() {
	save := c.i
	if !(c.word("IF") && c.word("NOT") && c.word("EXISTS")) {
		c.i = save
	}
}

// anyName consumes one identifier that is not schema-qualified.
func (c *tokenCursor) anyName() bool {
	t, ok := c.next()
	if !ok || (t.kind != 'w' && t.kind != 'q') {
		return false
	}
	c.i++
	if n, ok := c.next(); ok && n.kind == 'p' && n.text == "." {
		return false
	}
	return true
}

// name consumes the identifier want (compared as SQLite compares table
// names: ASCII case folded), not schema-qualified.
func (c *tokenCursor) name(want string) bool {
	t, ok := c.next()
	if !ok || !strings.EqualFold(t.text, want) {
		return false
	}
	return c.anyName()
}

// sqlTokens splits one SQL statement into tokens. It fails unless the
// text holds exactly one statement: tokens, then optionally one ";"
// followed by nothing but whitespace and comments. It knows SQLite's
// lexical forms: -- and /* */ comments, '...' strings, "...", `...` and
// [...] identifiers.
func sqlTokens(s string) ([]sqlToken, error) {
	var out []sqlToken
	ended := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case strings.HasPrefix(s[i:], "--"):
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(s)
			}
			continue
		case strings.HasPrefix(s[i:], "/*"):
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(s)
			}
			continue
		}
		if ended {
			return nil, ddlError("more than one statement")
		}
		var t sqlToken
		var err error
		switch {
		case c == ';':
			ended = true
			i++
			continue
		case c == '\'':
			t.kind = 's'
			t.text, i, err = quoted(s, i, '\'')
		case c == '"' || c == '`':
			t.kind = 'q'
			t.text, i, err = quoted(s, i, c)
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, ddlError("unterminated [identifier]")
			}
			t = sqlToken{kind: 'q', text: s[i+1 : i+j]}
			i += j + 1
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			t = sqlToken{kind: 'w', text: s[i:j]}
			i = j
		default:
			t = sqlToken{kind: 'p', text: s[i : i+1]}
			i++
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, ddlError("empty statement")
	}
	return out, nil
}

// quoted reads a quoted token starting at s[i] (the quote q), in which a
// doubled q stands for one, and returns its text and the index after it.
func quoted(s string, i int, q byte) (string, int, error) {
	var sb strings.Builder
	for j := i + 1; j < len(s); j++ {
		if s[j] != q {
			sb.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == q {
			sb.WriteByte(q)
			j++
			continue
		}
		return sb.String(), j + 1, nil
	}
	return "", 0, ddlError("unterminated quoted text")
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}
