// Kinds: the schema of a stream's rows — typed columns, an optional key, a
// conflict policy for repeated keys, retention — and their JSON shape.

package recordstore

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// ColumnType is the declared type of a column.
type ColumnType string

// The column types. See Normalize for what each accepts and stores.
const (
	TypeString   ColumnType = "string"   // UTF-8 text
	TypeInteger  ColumnType = "integer"  // int64, exact (never through float64)
	TypeNumber   ColumnType = "number"   // float64; integral JSON numbers accepted
	TypeBool     ColumnType = "bool"     // true or false
	TypeDatetime ColumnType = "datetime" // RFC 3339 in; fixed-width UTC text with microseconds stored
	TypeJSON     ColumnType = "json"     // any JSON value but null, stored as compact text; a JSON null is SQL NULL
)

func (t ColumnType) valid() bool {
	switch t {
	case TypeString, TypeInteger, TypeNumber, TypeBool, TypeDatetime, TypeJSON:
		return true
	}
	return false
}

// Column is one typed column of a kind.
type Column struct {
	Name     string     `json:"name"`
	Type     ColumnType `json:"type"`
	Required bool       `json:"required,omitempty"`
}

// OnConflict is a kind's policy for a row whose key is already stored in the
// stream.
type OnConflict string

// The conflict policies.
const (
	// ConflictSkip keeps the stored row; the incoming row counts as skipped.
	ConflictSkip OnConflict = "skip"
	// ConflictReplace deletes the stored row and appends the incoming one at
	// the next seq, in the same transaction.
	ConflictReplace OnConflict = "replace"
	// ConflictLWW lets the incoming row win (as with replace) only when its
	// version column is strictly greater, or on an equal version when its
	// tiebreak column is lexicographically smaller; otherwise it is skipped.
	ConflictLWW OnConflict = "lww"
)

// LWW names the columns a last-writer-wins kind compares.
type LWW struct {
	Version  string `json:"version"`
	Tiebreak string `json:"tiebreak,omitempty"`
}

// RetentionMode says what a kind's retention ttl applies to.
type RetentionMode string

// The retention modes.
const (
	// RetainStream expires the whole stream ttl after its first append.
	RetainStream RetentionMode = "stream"
	// RetainRows trims the appends older than ttl as new appends arrive
	// (and when the sweeper runs).
	RetainRows RetentionMode = "rows"
)

// Retention is a kind's retention rule.
type Retention struct {
	Mode RetentionMode `json:"mode"`
	TTL  Duration      `json:"ttl"`
}

// Duration is a time.Duration that reads and writes JSON as Go duration text
// ("24h", "90s"). Reading also accepts an integer count of nanoseconds (the
// spool format allows it for an expire entry's ttl); a kind's retention ttl
// does not (see Retention.UnmarshalJSON).
type Duration time.Duration

// MarshalJSON writes the duration as text.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads duration text or an integer count of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return Invalidf("duration %s: want Go duration text like \"24h\" or \"90s\"", Quote(s))
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return Invalidf("duration %s: want text like \"24h\"", clipBytes(b))
	}
	*d = Duration(n)
	return nil
}

// Kind is a declared schema. Its JSON shape is the one the CLI's kind files
// and spool manifests use.
type Kind struct {
	Name       string     `json:"name"`
	Columns    []Column   `json:"columns"`
	Key        []string   `json:"key,omitempty"`
	OnConflict OnConflict `json:"onConflict,omitempty"`
	LWW        *LWW       `json:"lww,omitempty"`
	Retention  *Retention `json:"retention,omitempty"`
	TimeColumn string     `json:"timeColumn,omitempty"`
	Indexes    [][]string `json:"indexes,omitempty"`
	// Table, when set, binds the kind to a table the caller creates with
	// its own DDL instead of a table the store lays out (see BoundTable).
	Table *BoundTable `json:"table,omitempty"`
}

// Clone returns a deep copy of k: changing the copy's slices or the
// values its pointers point to leaves k as it was.
func (k Kind) Clone() Kind {
	c := k
	c.Columns = slices.Clone(k.Columns)
	c.Key = slices.Clone(k.Key)
	if k.LWW != nil {
		lww := *k.LWW
		c.LWW = &lww
	}
	if k.Retention != nil {
		r := *k.Retention
		c.Retention = &r
	}
	if k.Table != nil {
		c.Table = &BoundTable{Name: k.Table.Name, DDL: slices.Clone(k.Table.DDL)}
	}
	if k.Indexes != nil {
		c.Indexes = make([][]string, len(k.Indexes))
		for i, idx := range k.Indexes {
			c.Indexes[i] = slices.Clone(idx)
		}
	}
	return c
}

// KindFile is the JSON document `query kind apply` reads: {"kinds": [...]}.
type KindFile struct {
	Kinds []Kind `json:"kinds"`
}

var (
	kindNameRE   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)
	columnNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)
	streamIDRE   = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,200}$`)
)

// ValidateKindName returns an ErrInvalid error unless name is a valid kind
// name (^[A-Za-z][A-Za-z0-9_]{0,62}$).
func ValidateKindName(name string) error {
	if !kindNameRE.MatchString(name) {
		return Invalidf("kind name %s: want ^[A-Za-z][A-Za-z0-9_]{0,62}$", Quote(name))
	}
	return nil
}

// ValidateStreamID returns an ErrInvalid error unless id is a valid stream
// id (^[A-Za-z0-9._:-]{1,200}$, and not "." or "..").
func ValidateStreamID(id string) error {
	if !streamIDRE.MatchString(id) || id == "." || id == ".." {
		return Invalidf("stream id %s: want ^[A-Za-z0-9._:-]{1,200}$, not . or ..", Quote(id))
	}
	return nil
}

// Policy returns the kind's conflict policy, ConflictSkip when unset.
func (k *Kind) Policy() OnConflict {
	if k.OnConflict == "" {
		return ConflictSkip
	}
	return k.OnConflict
}

// ColumnIndex returns the position of the named column, or -1.
func (k *Kind) ColumnIndex(name string) int {
	for i, c := range k.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Column returns the named column.
func (k *Kind) Column(name string) (Column, bool) {
	if i := k.ColumnIndex(name); i >= 0 {
		return k.Columns[i], true
	}
	return Column{}, false
}

// KeyIndexes returns the positions of the key columns, in key order.
func (k *Kind) KeyIndexes() []int {
	out := make([]int, len(k.Key))
	for i, name := range k.Key {
		out[i] = k.ColumnIndex(name)
	}
	return out
}

// Validate checks a declaration and returns an ErrInvalid error naming the
// first problem found: the rules of ValidateStored, and those every new
// declaration must also meet (see validateDeclared: the store's limits, no
// json key column, no contradictory lww columns, a ttl of at least a
// second). A valid kind is also normalized: OnConflict is set and a
// repeated index is dropped. Every path that declares a kind calls it.
func (k *Kind) Validate() error {
	if err := k.validateStored(); err != nil {
		return err
	}
	if err := k.validateDeclared(); err != nil {
		return err
	}
	k.normalize()
	return nil
}

// ValidateStored checks a kind read back from a store's catalog: it holds
// the kind to the rules that every earlier build enforced when the kind
// was declared, not the ones added since (see Validate), so a store
// written by an earlier build still opens and reads. It normalizes the
// kind as Validate does. It is for catalog reads only: a declaration goes
// through Validate.
func (k *Kind) ValidateStored() error {
	if err := k.validateStored(); err != nil {
		return err
	}
	k.normalize()
	return nil
}

func (k *Kind) validateStored() error {
	if err := ValidateKindName(k.Name); err != nil {
		return err
	}
	if len(k.Columns) == 0 {
		return Invalidf("kind %s: no columns", k.Name)
	}
	seen := map[string]bool{}
	for _, c := range k.Columns {
		if !columnNameRE.MatchString(c.Name) || reservedColumn(c.Name) {
			return Invalidf("kind %s: column name %s: want ^[A-Za-z_][A-Za-z0-9_]{0,62}$, not starting with _seq", k.Name, Quote(c.Name))
		}
		low := lower(c.Name)
		if seen[low] {
			return Invalidf("kind %s: column %q declared twice", k.Name, c.Name)
		}
		seen[low] = true
		if !c.Type.valid() {
			return Invalidf("kind %s: column %s: unknown type %s", k.Name, c.Name, Quote(string(c.Type)))
		}
	}
	if err := k.validateKey(); err != nil {
		return err
	}
	if err := k.validatePolicy(); err != nil {
		return err
	}
	if err := k.validateRetention(); err != nil {
		return err
	}
	if k.TimeColumn != "" {
		c, ok := k.Column(k.TimeColumn)
		if !ok || c.Type != TypeDatetime {
			return Invalidf("kind %s: timeColumn %s must name a datetime column", k.Name, Quote(k.TimeColumn))
		}
	}
	if err := k.validateBound(); err != nil {
		return err
	}
	for _, idx := range k.Indexes {
		if len(idx) == 0 {
			return Invalidf("kind %s: empty index", k.Name)
		}
		for _, name := range idx {
			if k.ColumnIndex(name) < 0 {
				return Invalidf("kind %s: index names unknown column %s", k.Name, Quote(name))
			}
		}
	}
	return nil
}

func (k *Kind) validateKey() error {
	seen := map[string]bool{}
	for _, name := range k.Key {
		if k.ColumnIndex(name) < 0 {
			return Invalidf("kind %s: key names unknown column %s", k.Name, Quote(name))
		}
		if seen[name] {
			return Invalidf("kind %s: key names column %q twice", k.Name, name)
		}
		seen[name] = true
	}
	return nil
}

func (k *Kind) validatePolicy() error {
	switch k.Policy() {
	case ConflictSkip:
	case ConflictReplace:
		if len(k.Key) == 0 {
			return Invalidf("kind %s: onConflict replace needs a key", k.Name)
		}
	case ConflictLWW:
		if len(k.Key) == 0 || k.LWW == nil || k.LWW.Version == "" {
			return Invalidf("kind %s: onConflict lww needs a key and lww.version", k.Name)
		}
		v, ok := k.Column(k.LWW.Version)
		if !ok || v.Type == TypeJSON || v.Type == TypeBool {
			return Invalidf("kind %s: lww.version %s must name a string, integer, number or datetime column", k.Name, Quote(k.LWW.Version))
		}
		if t := k.LWW.Tiebreak; t != "" {
			if c, ok := k.Column(t); !ok || c.Type != TypeString {
				return Invalidf("kind %s: lww.tiebreak %s must name a string column", k.Name, Quote(t))
			}
		}
		return nil
	default:
		return Invalidf("kind %s: onConflict %s: want skip, replace or lww", k.Name, Quote(string(k.OnConflict)))
	}
	if k.LWW != nil {
		return Invalidf("kind %s: lww is only allowed with onConflict lww", k.Name)
	}
	return nil
}

func (k *Kind) validateRetention() error {
	r := k.Retention
	if r == nil {
		return nil
	}
	if r.Mode != RetainStream && r.Mode != RetainRows {
		return Invalidf("kind %s: retention.mode %s: want stream or rows", k.Name, Quote(string(r.Mode)))
	}
	if r.TTL <= 0 {
		return Invalidf("kind %s: retention.ttl must be positive", k.Name)
	}
	return nil
}

// KindStatus says what declaring a kind did.
type KindStatus string

// The outcomes of declaring a kind.
const (
	KindCreated   KindStatus = "created"
	KindUnchanged KindStatus = "unchanged"
	KindUpdated   KindStatus = "updated"
)

// Reconcile compares an incoming declaration with the stored one and returns
// the kind to store. Identical declarations are KindUnchanged; a declaration
// that only appends new columns is KindUpdated; any other difference (a
// changed or removed column, key, policy, lww, retention, time column,
// indexes or table binding; or a column added to a bound kind)
// is an ErrSchemaConflict error, and added columns that would
// make more than MaxColumns an ErrInvalid one. With subset true an incoming kind
// may also omit stored columns (they are kept): that is how a batch written
// by an older build reconciles. Both kinds must already be valid.
func Reconcile(stored, incoming Kind, subset bool) (Kind, KindStatus, error) {
	conflict := func(what string) (Kind, KindStatus, error) {
		return stored, "", Errorf(ErrSchemaConflict, "kind %s: %s differs from the stored declaration", stored.Name, what)
	}
	if stored.Name != incoming.Name {
		return conflict("name")
	}
	if !slices.Equal(stored.Key, incoming.Key) {
		return conflict("key")
	}
	if stored.Policy() != incoming.Policy() || !equalPtr(stored.LWW, incoming.LWW) {
		return conflict("onConflict")
	}
	if !equalPtr(stored.Retention, incoming.Retention) {
		return conflict("retention")
	}
	if stored.TimeColumn != incoming.TimeColumn {
		return conflict("timeColumn")
	}
	if !slices.EqualFunc(stored.Indexes, incoming.Indexes, slices.Equal[[]string]) {
		return conflict("indexes")
	}
	if !stored.Table.Equal(incoming.Table) {
		return conflict("table binding")
	}
	merged := stored
	merged.Columns = slices.Clone(stored.Columns)
	matched := 0
	for _, in := range incoming.Columns {
		have, ok := stored.Column(in.Name)
		if !ok {
			merged.Columns = append(merged.Columns, in)
			continue
		}
		if have != in {
			return conflict("column " + in.Name)
		}
		matched++
	}
	if matched < len(stored.Columns) {
		if !subset {
			return conflict("column list (a stored column is missing)")
		}
	}
	if len(merged.Columns) == len(stored.Columns) {
		return stored, KindUnchanged, nil
	}
	if stored.Table != nil {
		return conflict("column list of a bound kind (its table's DDL is fixed)")
	}
	if len(merged.Columns) > MaxColumns {
		return stored, "", Invalidf("kind %s: adding %d columns to its %d would make %d: %s",
			stored.Name, len(merged.Columns)-len(stored.Columns), len(stored.Columns), len(merged.Columns), maxColumnsRule)
	}
	return merged, KindUpdated, nil
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func reservedColumn(name string) bool {
	return len(name) >= 4 && lower(name[:4]) == "_seq"
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// String renders the kind as compact JSON.
func (k Kind) String() string {
	b, err := json.Marshal(k)
	if err != nil {
		return fmt.Sprintf("kind %s", k.Name)
	}
	return string(b)
}
