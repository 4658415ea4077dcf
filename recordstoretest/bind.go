// Bound kinds in the suites: BindTable, which turns a kind into a kind
// bound to a table created from its own columns, and the per-stream kinds
// the suites declare when a harness binds its kinds (a bound kind holds one
// stream, so each stream a spec writes gets a kind of its own).

package recordstoretest

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

// BindTable returns k bound to a table of k's name created from k's
// columns: a CREATE TABLE with a seq column `id INTEGER PRIMARY KEY
// AUTOINCREMENT` (named `_seq` when k has a column id: a kind column
// never starts with _seq), one column per kind column with the type of
// its affinity (integer and bool INTEGER, number REAL, the others TEXT;
// NOT NULL when required), and, when k has a key, a UNIQUE index on it.
// It is meant as a harness's Bind (BatchHarness.Bind) for a backend that
// speaks SQLite's DDL. k must have no retention, indexes or time column
// (a bound kind has none); the suite skips the specs that need them.
func BindTable(k recordstore.Kind) recordstore.Kind {
	k = k.Clone()
	seq := "id"
	for _, c := range k.Columns {
		if strings.EqualFold(c.Name, seq) {
			seq = "_seq"
		}
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE " + k.Name + " (" + sqlIdent(seq) + " INTEGER PRIMARY KEY AUTOINCREMENT")
	for _, c := range k.Columns {
		b.WriteString(", " + sqlIdent(c.Name) + " " + affinityOf(c.Type))
		if c.Required {
			b.WriteString(" NOT NULL")
		}
	}
	b.WriteString(")")
	ddl := []string{b.String()}
	if len(k.Key) > 0 {
		cols := make([]string, len(k.Key))
		for i, n := range k.Key {
			cols[i] = sqlIdent(n)
		}
		ddl = append(ddl, "CREATE UNIQUE INDEX "+k.Name+"_key ON "+k.Name+" ("+strings.Join(cols, ", ")+")")
	}
	k.Table = &recordstore.BoundTable{Name: k.Name, DDL: ddl}
	return k
}

// sqlIdent quotes an identifier for SQL.
func sqlIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// affinityOf is the declared type BindTable gives a column of type t.
func affinityOf(t recordstore.ColumnType) string {
	switch t {
	case recordstore.TypeInteger, recordstore.TypeBool:
		return "INTEGER"
	case recordstore.TypeNumber:
		return "REAL"
	}
	return "TEXT"
}

// bound reports whether the harness binds the suite's kinds.
func (s *suite) bound() bool { return s.bind != nil }

// skipBound skips the running spec when the suite binds its kinds, with a
// message naming the rule of bound kinds the spec cannot hold to.
func (s *suite) skipBound(rule string) {
	if s.bound() {
		Skip("bound kinds: " + rule)
	}
}

// bindDeclared returns k as the suite declares it: k itself, or, when the
// suite binds its kinds, k bound by the harness's Bind (its name kept:
// the kind of the first stream that writes with it, see kindName). A kind
// with retention, indexes or a time column skips the spec: a bound kind
// has none (its DDL owns the table).
func (s *suite) bindDeclared(k recordstore.Kind) recordstore.Kind {
	if !s.bound() {
		return k
	}
	if k.Retention != nil || len(k.Indexes) > 0 || k.TimeColumn != "" {
		Skip("bound kinds: a bound kind has no retention, indexes or time column (kind " + k.Name + ")")
	}
	if s.declared == nil {
		s.declared = map[string]recordstore.Kind{}
	}
	s.declared[k.Name] = k.Clone()
	return s.bind(k.Clone())
}

// suiteKinds are the suite's kinds by name, for kindAt.
func suiteKinds() map[string]recordstore.Kind {
	out := map[string]recordstore.Kind{}
	for _, k := range []recordstore.Kind{eventKind(), itemKind(recordstore.ConflictSkip),
		itemKind(recordstore.ConflictReplace), lwwKind(), allTypesKind()} {
		out[k.Name] = k
	}
	return out
}

// kindName is the name of the kind the suite writes to stream with
// instead of kind base. Unbound it is base. Bound (a bound kind holds one
// stream) it is base for the first stream the spec names with base, and
// base followed by the stream id for any other (characters other than
// letters, digits and _ made _): every stream has a kind, and a table, of
// its own.
func (s *suite) kindName(base, stream string) string {
	if !s.bound() {
		return base
	}
	if s.firstStream == nil {
		s.firstStream = map[string]string{}
	}
	first, ok := s.firstStream[base]
	if !ok {
		s.firstStream[base], first = stream, stream
	}
	if first == stream {
		return base
	}
	var b strings.Builder
	b.WriteString(base + "_")
	for _, r := range stream {
		if r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()[:min(b.Len(), 63)]
}

// streamKind returns k as the suite declares it for stream: k itself, or,
// when the suite binds its kinds, k renamed by kindName and bound by the
// harness's Bind.
func (s *suite) streamKind(k recordstore.Kind, stream string) recordstore.Kind {
	if !s.bound() {
		return k
	}
	k = k.Clone()
	k.Name = s.kindName(k.Name, stream)
	return s.bind(k)
}

// kindAt returns the name of the kind (the suite's kind base) that the
// suite writes to stream with, and remembers its declaration for the
// batches that use it (see schemasOf).
func (s *suite) kindAt(base, stream string) string {
	if !s.bound() {
		return base
	}
	k, ok := s.declared[base]
	if !ok {
		k, ok = suiteKinds()[base]
	}
	ExpectWithOffset(1, ok).To(BeTrue(), "the spec declared no kind %s", base)
	sk := s.streamKind(k, stream)
	s.remember(sk)
	return sk.Name
}

// remember keeps the declaration of a per-stream kind for schemasOf.
func (s *suite) remember(k recordstore.Kind) {
	if s.streamKinds == nil {
		s.streamKinds = map[string]recordstore.Kind{}
	}
	s.streamKinds[k.Name] = k
}

// ensureKind declares the kind the suite writes to stream with instead of
// base when it binds its kinds (created, or already there), and returns
// its name; unbound, it returns base, which the spec declared.
func (s *suite) ensureKind(base, stream string) string {
	name := s.kindAt(base, stream)
	if s.bound() {
		st, err := s.b.DeclareKind(s.ctx, s.streamKinds[name])
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "declare kind %s", name)
		ExpectWithOffset(1, st).To(BeElementOf(recordstore.KindCreated, recordstore.KindUnchanged), "declare kind %s", name)
	}
	return name
}

// declareAt declares kinds that must be new, each as the suite declares
// it for stream (see streamKind).
func (s *suite) declareAt(stream string, kinds ...recordstore.Kind) {
	for _, k := range kinds {
		k = s.streamKind(k, stream)
		if s.bound() {
			s.remember(k)
		}
		st, err := s.b.DeclareKind(s.ctx, k)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "declare kind %s", k.Name)
		ExpectWithOffset(1, st).To(Equal(recordstore.KindCreated), "declare kind %s", k.Name)
	}
}

// schemasOf returns the declarations, as the suite makes them, of the
// kinds the entries name (append and declare entries; a kind the suite
// does not know is left out).
func (s *suite) schemasOf(entries []recordstore.BatchEntry) []recordstore.Kind {
	var out []recordstore.Kind
	seen := map[string]bool{}
	for _, e := range entries {
		k, ok := s.streamKinds[e.Kind]
		if !ok || seen[e.Kind] || (e.Op != recordstore.OpAppend && e.Op != recordstore.OpDeclare) {
			continue
		}
		seen[e.Kind] = true
		out = append(out, k)
	}
	return out
}

// genStart is the first seq of a new generation of a stream whose earlier
// generations used seqs up to high: 1, or, when the suite binds its kinds,
// high+1 (a bound table never reuses an id: a new generation starts after
// the highest its table has used, with BindTable's AUTOINCREMENT).
func (s *suite) genStart(high int64) int64 {
	if s.bound() {
		return high + 1
	}
	return 1
}
