// GET /: a small HTML page listing the live streams, with links to their
// metadata and rows.

package recordresults

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
)

var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>records</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:.2em .8em;text-align:left}tr:nth-child(even){background:#f4f4f4}</style>
</head>
<body>
<h1>records</h1>
{{if .}}<table>
<tr><th>stream</th><th>kind</th><th>generation</th><th>rows</th><th>seqs</th><th>sealed</th><th>updated</th><th></th></tr>
{{range .}}<tr><td><a href="/api/v1/streams/{{.Stream}}">{{.Stream}}</a></td><td>{{.Kind}}</td><td>{{.Generation}}</td><td>{{.Total}}</td><td>{{.LowSeq}}–{{.HighSeq}}</td><td>{{.Sealed}}</td><td>{{.UpdatedAt.UTC.Format "2006-01-02 15:04:05Z"}}</td><td><a href="/api/v1/streams/{{.Stream}}/rows?limit=100">rows</a></td></tr>
{{end}}</table>{{else}}<p>No streams yet.</p>{{end}}
</body>
</html>
`))

func (h *handler) index(w http.ResponseWriter, r *http.Request) {
	metas, err := h.b.Streams(r.Context(), "")
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	var buf bytes.Buffer
	if err := indexPage.Execute(&buf, metas); err != nil {
		writeError(w, r, h.log, fmt.Errorf("render index page: %w", err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}
