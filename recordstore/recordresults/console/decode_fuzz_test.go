// The page's decoders (assets/decode.js) run in goja, a JavaScript engine
// written in Go, so that go test -fuzz drives them without a browser: the
// exact JSON reader against encoding/json, and the filter box against the
// server's own filter parser and its quoting.

package console_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/fb46ecde/records/recordstore/recordresults"
)

// decodeHelpers are the test's own JavaScript over recordsDecode: a parsed
// value as a tagged tree (["n",text], ["s",string], ["b",bool], ["z"],
// ["a",[...]], ["o",[[key,value]...]]) in JSON (tree null past 2000
// levels: encoding/json reads the tagged form only to 10000), with a check
// that every object member's raw text reads back as the member (to 40
// levels: each level reads its members again); and the filter box's
// result, or its FilterError, in JSON.
const decodeHelpers = `
function tag(v, depth) {
  depth = depth || 0;
  if (depth > 2000) throw new RangeError('deep');
  if (v === null) return ['z'];
  if (v instanceof recordsDecode.Num) return ['n', v.text];
  if (typeof v === 'string') return ['s', v];
  if (typeof v === 'boolean') return ['b', v];
  if (Array.isArray(v)) return ['a', v.map(function (e) { return tag(e, depth + 1); })];
  if (typeof v !== 'object' || Object.getPrototypeOf(v) !== null) throw new Error('unexpected value ' + typeof v);
  return ['o', Object.keys(v).map(function (k) { return [k, tag(v[k], depth + 1)]; })];
}
function rawOK(v, depth) {
  depth = depth || 0;
  if (depth > 40 || v === null || typeof v !== 'object' || v instanceof recordsDecode.Num) return true;
  if (Array.isArray(v)) return v.every(function (e) { return rawOK(e, depth + 1); });
  return Object.keys(v).every(function (k) {
    var raw = recordsDecode.rawText(v, k);
    return typeof raw === 'string' && JSON.stringify(tag(recordsDecode.parse(raw))) === JSON.stringify(tag(v[k])) && rawOK(v[k], depth + 1);
  });
}
function readJSON(text) {
  var v;
  try { v = recordsDecode.parse(text); } catch (e) {
    if (e instanceof SyntaxError) return JSON.stringify({ ok: false, err: e.message });
    throw e;
  }
  var tree = null;
  try { tree = tag(v); } catch (e) { if (!(e instanceof RangeError)) throw e; }
  return JSON.stringify({ ok: true, tree: tree, raw: tree === null || rawOK(v) });
}
function readFilters(s) {
  try { return JSON.stringify({ ok: true, filters: recordsDecode.filters(s) }); } catch (e) {
    if (e instanceof recordsDecode.FilterError) return JSON.stringify({ ok: false, err: e.message });
    throw e;
  }
}
function quoteValue(s) { return recordsDecode.quote(s); }
`

// js is one goja runtime with decode.js and the helpers loaded; a fuzz
// worker calls it from one goroutine at a time (mu says so).
var js struct {
	once                       sync.Once
	mu                         sync.Mutex
	err                        error
	vm                         *goja.Runtime
	readJSON, readFilters, quo goja.Callable
}

func decoders(t testing.TB) {
	js.once.Do(func() {
		src, err := os.ReadFile("assets/decode.js")
		if err != nil {
			js.err = err
			return
		}
		vm := goja.New()
		js.vm = vm
		if _, err := vm.RunScript("decode.js", string(src)); err != nil {
			js.err = err
			return
		}
		if _, err := vm.RunScript("helpers.js", decodeHelpers); err != nil {
			js.err = err
			return
		}
		for name, dst := range map[string]*goja.Callable{"readJSON": &js.readJSON, "readFilters": &js.readFilters, "quoteValue": &js.quo} {
			f, ok := goja.AssertFunction(vm.Get(name))
			if !ok {
				js.err = fmt.Errorf("helpers.js: %s is not a function", name)
				return
			}
			*dst = f
		}
	})
	if js.err != nil {
		t.Fatalf("load decode.js in goja: %v", js.err)
	}
}

// runJS runs one helper on s and returns the JSON text it answered.
func runJS(t testing.TB, f goja.Callable, s string) string {
	t.Helper()
	js.mu.Lock()
	defer js.mu.Unlock()
	v, err := f(goja.Undefined(), js.vm.ToValue(s))
	if err != nil {
		t.Fatalf("decode.js threw on %q: %v", s, err)
	}
	return v.String()
}

// tagOf is v, as encoding/json decodes it with UseNumber, in the tagged
// form of the helpers' tag, object keys in order.
func tagOf(v any) any {
	switch x := v.(type) {
	case nil:
		return []any{"z"}
	case json.Number:
		return []any{"n", string(x)}
	case string:
		return []any{"s", x}
	case bool:
		return []any{"b", x}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tagOf(e)
		}
		return []any{"a", out}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		members := make([]any, len(keys))
		for i, k := range keys {
			members[i] = []any{k, tagOf(x[k])}
		}
		return []any{"o", members}
	}
	panic(fmt.Sprintf("unexpected %T", v))
}

// sortedTag puts the members of every object of a tagged tree decoded
// from the helpers' JSON in key order, as tagOf has them.
func sortedTag(v any) any {
	t := v.([]any)
	switch t[0] {
	case "a":
		items := t[1].([]any)
		for i := range items {
			items[i] = sortedTag(items[i])
		}
	case "o":
		members := t[1].([]any)
		for i := range members {
			m := members[i].([]any)
			m[1] = sortedTag(m[1])
		}
		slices.SortFunc(members, func(a, b any) int { return strings.Compare(a.([]any)[0].(string), b.([]any)[0].(string)) })
	}
	return t
}

func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{
		`{"_seq":1,"id":9223372036854775807,"doc":{"big":12345678901234567890}}`,
		`{"a":-0.5e-7,"b":[1,2.25,{"c":null}],"d":"x\"y\\u00e9\ud83d\ude00","e":true,"f":false}`,
		`{"__proto__":{"x":1},"constructor":2}`,
		`{"k":1,"k":2}`,
		` [ 1 , [ ] , { } , "" ] `,
		`"\ud800"`, `01`, `1.`, `-`, `1e`, `{"a" 1}`, `[1,]`, `{"a":1,}`, `tru`, `"a` + "\x01" + `"`, `"\x"`, `{}x`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 9999) + strings.Repeat("]", 9999),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		decoders(t)
		var got struct {
			OK   bool
			Err  string
			Tree any
			Raw  bool
		}
		out := runJS(t, js.readJSON, text)
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("helper answer %q: %v", out, err)
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(text)))
		dec.UseNumber()
		var want any
		err := dec.Decode(&want)
		valid := json.Valid([]byte(text)) && err == nil
		if got.OK != valid {
			t.Fatalf("decode.js ok=%v (%s), encoding/json valid=%v for %q", got.OK, got.Err, valid, text)
		}
		if !valid {
			if !strings.HasPrefix(got.Err, "JSON at offset ") {
				t.Fatalf("error %q does not say where", got.Err)
			}
			return
		}
		if got.Tree == nil {
			return // too deep to compare: validity was
		}
		if !got.Raw {
			t.Fatalf("a member's raw text does not read back as the member, in %q", text)
		}
		wantJSON, _ := json.Marshal(tagOf(want))
		gotJSON, _ := json.Marshal(sortedTag(got.Tree))
		if !bytes.Equal(wantJSON, gotJSON) {
			t.Fatalf("decode.js read %q as\n%s\nencoding/json as\n%s", text, gotJSON, wantJSON)
		}
	})
}

var filterColumn = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

func FuzzDecodeFilters(f *testing.F) {
	for _, seed := range [][2]string{
		{`msg=hello, world`, `hello, world`},
		{`msg="hello, world"`, `say "hi"`},
		{`msg="say ""hi"", then go" , n>=3,`, `""`},
		{`a=1,,b!=2, c~x ,d<=4,e>5,f<6`, ``},
		{`msg="open`, ` lead and trail `},
		{`msg="x" y`, `,`},
		{`=1`, `"`},
		{`a b=1`, "tab\there"},
		{`msg= "not quoted"`, `é, ☃`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, box, value string) {
		decoders(t)
		var got struct {
			OK      bool
			Err     string
			Filters []struct{ Col, Op, Value, Text string }
		}
		out := runJS(t, js.readFilters, box)
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("helper answer %q: %v", out, err)
		}
		if !got.OK {
			if !strings.HasPrefix(got.Err, "filter ") {
				t.Fatalf("error %q for %q does not name the filter", got.Err, box)
			}
		}
		for _, flt := range got.Filters {
			if !filterColumn.MatchString(flt.Col) || flt.Text != flt.Col+flt.Op+flt.Value {
				t.Fatalf("filter %+v of %q", flt, box)
			}
			// The server reads the where= text the page sends as the page does.
			sf, err := recordresults.ParseFilter(flt.Text)
			if err != nil || sf.Column != flt.Col || string(sf.Op) != flt.Op || sf.Value != flt.Value {
				t.Fatalf("page read %+v from %q; server reads %q as %+v, %v", flt, box, flt.Text, sf, err)
			}
		}
		if !utf8.ValidString(value) || strings.ContainsRune(value, utf8.RuneError) {
			return // goja would not hand the value back byte for byte
		}
		// A quoted value comes back whole, whatever it holds.
		quoted := `"` + strings.ReplaceAll(value, `"`, `""`) + `"`
		if q := runJS(t, js.quo, value); q != quoted {
			t.Fatalf("quote(%q) = %q, want %q", value, q, quoted)
		}
		out = runJS(t, js.readFilters, "msg="+quoted+" , n~"+quoted)
		got.Filters = nil
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("helper answer %q: %v", out, err)
		}
		if !got.OK || len(got.Filters) != 2 || got.Filters[0].Value != value || got.Filters[1].Value != value ||
			got.Filters[0].Op != "=" || got.Filters[1].Op != "~" {
			t.Fatalf("value %q quoted as %s read back as %s", value, quoted, out)
		}
	})
}
