// Regenerates testdata/validation/: one mini spool per case, each built by
// publishing a real batch and then damaging it the way the case says.
//
//	go run ./recordstore/spool/testdata/gen_validation.go
//
// Run from the module root; it rewrites every case folder.

//go:build ignore

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

const out = "recordstore/spool/testdata/validation"

var kind = recordstore.Kind{Name: "event", Key: []string{"id"}, Columns: []recordstore.Column{
	{Name: "id", Type: recordstore.TypeString},
	{Name: "n", Type: recordstore.TypeInteger},
	{Name: "at", Type: recordstore.TypeDatetime},
	{Name: "doc", Type: recordstore.TypeJSON},
}}

var seq int64

// publish writes a valid three-row batch into a fresh case folder and
// returns the batch folder path.
func publish(name, format string) string {
	root := filepath.Join(out, name)
	must(os.RemoveAll(root))
	d, err := spool.OpenRoot(context.Background(), root, spool.Options{})
	must(err)
	seq++
	var rows []recordstore.Values
	for i := range 3 {
		v, err := kind.Normalize(recordstore.Row{"id": fmt.Sprintf("e%d", i), "n": int64(1) << 62,
			"at": "2030-01-02T03:04:05Z", "doc": json.RawMessage(`{"i":` + fmt.Sprint(i) + `}`)})
		must(err)
		rows = append(rows, v)
	}
	del := &recordstore.Batch{
		ID:       fmt.Sprintf("%032x", seq),
		Producer: recordstore.Producer{Instance: "00000000000000aa", Seq: seq, PID: 0, Host: "testhost", Build: "testdata"},
		Created:  time.Date(2030, 1, 2, 3, 4, 5, int(seq), time.UTC),
		Schemas:  []recordstore.Kind{kind},
		Entries: []recordstore.BatchEntry{
			{Op: recordstore.OpAppend, Stream: "events", Kind: "event", Rows: rows},
			{Op: recordstore.OpSeal, Stream: "events"},
		},
	}
	bn, err := d.Publish(context.Background(), del, format)
	must(err)
	for _, s := range []string{"tmp", "failed", "trash"} {
		must(os.Remove(filepath.Join(root, s)))
	}
	return filepath.Join(root, "incoming", bn.String())
}

// editManifest rewrites the manifest of batch through fn.
func editManifest(batch string, fn func(m map[string]any)) {
	p := filepath.Join(batch, spool.ManifestFile)
	data, err := os.ReadFile(p)
	must(err)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	must(dec.Decode(&m))
	fn(m)
	data, err = json.MarshalIndent(m, "", "  ")
	must(err)
	must(os.WriteFile(p, append(data, '\n'), 0o600))
}

func entry0(m map[string]any) map[string]any { return m["entries"].([]any)[0].(map[string]any) }

// rewriteData replaces the data file of entry 0 and fixes bytes and sha256
// in the manifest, so that only the content is wrong.
func rewriteData(batch string, content []byte) {
	var file string
	editManifest(batch, func(m map[string]any) {
		e := entry0(m)
		file = e["file"].(string)
		sum := sha256.Sum256(content)
		e["bytes"] = len(content)
		e["sha256"] = hex.EncodeToString(sum[:])
	})
	must(os.WriteFile(filepath.Join(batch, file), content, 0o600))
}

func dataOf(batch string) []byte {
	var file string
	editManifest(batch, func(m map[string]any) { file = entry0(m)["file"].(string) })
	b, err := os.ReadFile(filepath.Join(batch, file))
	must(err)
	return b
}

func main() {
	publish("ok-ndjson", spool.FormatNDJSON)
	publish("ok-ndjson-gz", spool.FormatNDJSONGz)

	b := publish("torn-manifest", spool.FormatNDJSON)
	data, _ := os.ReadFile(filepath.Join(b, spool.ManifestFile))
	must(os.WriteFile(filepath.Join(b, spool.ManifestFile), data[:len(data)/2], 0o600))

	b = publish("missing-manifest", spool.FormatNDJSON)
	must(os.Remove(filepath.Join(b, spool.ManifestFile)))

	b = publish("wrong-sha256", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { entry0(m)["sha256"] = strings.Repeat("0", 64) })

	b = publish("wrong-size", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { entry0(m)["bytes"] = 5 })

	b = publish("dotdot-file", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { entry0(m)["file"] = "../e00001.ndjson" })

	b = publish("absolute-file", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { entry0(m)["file"] = "/etc/passwd.ndjson" })

	b = publish("symlinked-data", spool.FormatNDJSON)
	must(os.Rename(filepath.Join(b, "e00001.ndjson"), filepath.Join(b, "real.ndjson")))
	must(os.Symlink("real.ndjson", filepath.Join(b, "e00001.ndjson")))

	b = publish("missing-data", spool.FormatNDJSON)
	must(os.Remove(filepath.Join(b, "e00001.ndjson")))

	b = publish("truncated-gzip", spool.FormatNDJSONGz)
	gz := dataOf(b)
	rewriteData(b, gz[:len(gz)-10])

	b = publish("format-2", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { m["format"] = 2 })

	b = publish("unknown-codec", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { entry0(m)["format"] = "csv" })

	b = publish("row-count-fewer", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { entry0(m)["rows"] = 4 })

	b = publish("row-count-more", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { entry0(m)["rows"] = 2 })

	b = publish("bad-row", spool.FormatNDJSON)
	rewriteData(b, bytes.Replace(dataOf(b), []byte(`"n":4611686018427387904`), []byte(`"n":"four"`), 1))

	b = publish("unknown-column", spool.FormatNDJSON)
	rewriteData(b, bytes.Replace(dataOf(b), []byte(`"n":`), []byte(`"zz":`), 1))

	b = publish("bad-id", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { m["id"] = "NOT-AN-ID" })

	b = publish("name-mismatch", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { m["producer"].(map[string]any)["seq"] = 999 })

	b = publish("unknown-field", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { m["priority"] = "high" })

	b = publish("unknown-op", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { m["entries"].([]any)[1].(map[string]any)["op"] = "truncate" })

	b = publish("kind-not-in-schemas", spool.FormatNDJSON)
	editManifest(b, func(m map[string]any) { m["schemas"] = []any{} })

	// orphan-tmp: a complete batch that never got renamed out of tmp/.
	b = publish("orphan-tmp", spool.FormatNDJSON)
	root := filepath.Join(out, "orphan-tmp")
	must(os.MkdirAll(filepath.Join(root, "tmp"), 0o700))
	must(os.Rename(b, filepath.Join(root, "tmp", "00000000000000aa-"+filepath.Base(b)[len(filepath.Base(b))-32:])))
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
