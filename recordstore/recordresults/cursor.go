// Cursors of paged reads: opaque text that carries where a read stopped,
// the generation and last seq it is pinned to, and a fingerprint of the
// query it belongs to.

package recordresults

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

// cursorBody is a cursor's content, base64url-encoded JSON.
type cursorBody struct {
	Stream string          `json:"s"`
	Gen    int64           `json:"g"`
	To     int64           `json:"t"`           // the pinned last seq
	Seq    int64           `json:"q"`           // the last row's seq
	Value  json.RawMessage `json:"v,omitempty"` // the last row's sort value (stored form); absent when sorting by seq
	Print  string          `json:"f"`           // fingerprint of the query
}

// cursor returns the cursor that continues the read after its last fetch.
func (p *plan) cursor() string {
	c := cursorBody{Stream: p.stream, Gen: p.gen, To: p.rq.To, Seq: p.rq.CursorSeq, Print: strconv.FormatUint(p.fp, 36)}
	if !p.rq.SortsBySeq() {
		c.Value, _ = json.Marshal(recordstore.StoredValue(p.rq.CursorValue))
	}
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// resume continues the plan from a cursor that an earlier page of the same
// query returned; any other cursor is ErrInvalid.
func (p *plan) resume(text string) error {
	bad := recordstore.Invalidf("cursor %s is not one this query returned: start the read again without a cursor", recordstore.Quote(clip(text)))
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return bad
	}
	var c cursorBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.Stream != p.stream || c.Print != strconv.FormatUint(p.fp, 36) ||
		c.Gen <= 0 || c.Seq <= 0 || c.To < c.Seq {
		return bad
	}
	if !p.rq.SortsBySeq() {
		v, err := cursorValue(&p.kind, p.rq.Sort, c.Value)
		if err != nil {
			return bad
		}
		p.rq.CursorValue = v
	} else if len(c.Value) != 0 {
		return bad
	}
	p.gen, p.rq.To, p.rq.HasCursor, p.rq.CursorSeq = c.Gen, c.To, true, c.Seq
	return nil
}

// cursorValue reads a sort value of column col back into its reader form.
func cursorValue(k *recordstore.Kind, col string, raw json.RawMessage) (any, error) {
	c, _ := k.Column(col)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	if n, ok := v.(json.Number); ok {
		if c.Type == recordstore.TypeNumber {
			f, err := n.Float64()
			return f, err
		}
		i, err := n.Int64()
		if err != nil {
			return nil, err
		}
		return recordstore.DecodeValue(c.Type, i), nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, recordstore.Invalidf("cursor value")
	}
	if c.Type == recordstore.TypeDatetime {
		t, ok := recordstore.ParseStoredDatetime(s)
		if !ok {
			return nil, recordstore.Invalidf("cursor value")
		}
		return t, nil
	}
	return s, nil
}

// fingerprint hashes what a query selects and its order (not its paging),
// so that a cursor is only taken by the query that returned it.
func fingerprint(q Query) uint64 {
	h := fnv.New64a()
	parts := []string{q.Stream, strconv.FormatInt(q.After, 10), strconv.FormatInt(q.To, 10),
		recordstore.FormatDatetime(q.From), recordstore.FormatDatetime(q.Until), q.Text, q.Sort}
	for _, f := range q.Where {
		parts = append(parts, f.String())
	}
	for _, s := range parts {
		_, _ = h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	return h.Sum64()
}

// clip shortens text for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return strings.Clone(s)
}
