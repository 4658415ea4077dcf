package debugapi

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/fb46ecde/records/drakkar/dbfiles"
)

// downloadPrefix is the download route's path prefix.
const downloadPrefix = "/api/v1/debug/download/"

// TextFileNotFound is the download route's 404 text.
const TextFileNotFound = "File not found"

// TextInvalidFilename is the 400 text of a download path or merge name
// that carries a quote, a semicolon or a control character.
const TextInvalidFilename = "Invalid filename"

// unsafeChars reports whether p carries a character no file name of the
// allowed shapes has and that the public contract's filename hardening
// refuses with 400: a double or single quote, a semicolon, or a control
// character (below 0x20, or DEL).
func unsafeChars(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f || c == '"' || c == '\'' || c == ';' {
			return true
		}
	}
	return false
}

// rawDownloadPath returns the path after the route's prefix as the request
// wrote it, refusing any percent-encoded slash, backslash, dot or NUL
// (a name of the allowed shapes never needs one) and then unescaping.
func rawDownloadPath(r *http.Request) (string, bool) {
	esc := r.URL.EscapedPath()
	if !strings.HasPrefix(esc, downloadPrefix) {
		return "", false
	}
	esc = strings.TrimPrefix(esc, downloadPrefix)
	low := strings.ToLower(esc)
	for _, bad := range []string{"%2f", "%5c", "%2e", "%00"} {
		if strings.Contains(low, bad) {
			return "", false
		}
	}
	return r.PathValue("path"), true
}

// download serves GET /api/v1/debug/download/{path}.
func (s *server) download(w http.ResponseWriter, r *http.Request) {
	rel, ok := rawDownloadPath(r)
	if !ok {
		writeError(w, http.StatusNotFound, TextFileNotFound)
		return
	}
	s.serveFile(w, r, rel)
}

// serveFile sends rel (relative to shared.dir) as an attachment when it
// is one of the allowed shapes with a name of its kind's grammar
// (classifyNamed) and opens as a regular file with a single link; else
// 404.
func (s *server) serveFile(w http.ResponseWriter, r *http.Request, rel string) {
	kind, err := classifyNamed(rel)
	if err != nil {
		writeError(w, http.StatusNotFound, TextFileNotFound)
		return
	}
	f, err := openShared(s.opts.Config.shared(), rel)
	if err != nil {
		writeError(w, http.StatusNotFound, TextFileNotFound)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		writeError(w, http.StatusNotFound, TextFileNotFound)
		return
	}
	name := rel[strings.LastIndex(rel, "/")+1:]
	ct := "application/x-sqlite3"
	if kind == KindArchive {
		ct = "application/gzip"
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	h.Set("Cache-Control", "no-store, private")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.CopyN(w, f, fi.Size()); err != nil {
		s.log.Warn("debugapi_download_failed", "path", rel, "err", err)
	}
}

// archive serves GET /api/v1/debug/archives/{name}: the archive of that
// name in the history folder of the cluster its name carries. A name that
// is not an archive name, or no such regular file, answers 404.
func (s *server) archive(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	cl, _, _, ok := dbfiles.ParseArchiveName(name)
	if !ok || !safeSegment(name) {
		writeError(w, http.StatusNotFound, TextFileNotFound)
		return
	}
	s.serveFile(w, r, dbfiles.HistoryFolder+"/"+cl+"/"+name)
}

// archives serves GET /api/v1/debug/archives.
func (s *server) archives(w http.ResponseWriter, _ *http.Request) {
	list, err := listArchives(s.opts.Config.shared())
	if err != nil {
		s.log.Error("debugapi_archives_failed", "err", err)
		writeError(w, http.StatusInternalServerError, "Could not list archives")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"archives": list})
}
