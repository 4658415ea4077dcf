// Package httpx is the HTTP plumbing the library's handlers share (the read
// API of recordresults, the fleet's API of fleethttp, the request metrics of
// ownermetrics): the one response writer that remembers the status a
// handler sent, and the JSON bodies of answers and errors. It knows no
// error codes: callers pass the code and message recordstore.Code and
// recordstore.Message give.
package httpx

import (
	"encoding/json"
	"net/http"
)

// StatusWriter is an http.ResponseWriter that remembers the status a
// handler sent, for a log line or a metric. Unwrap lets
// http.ResponseController reach the connection's deadlines; FlushError
// (and Flush, for handlers that assert http.Flusher) flush the connection,
// so that follow and rows responses stream through it.
type StatusWriter struct {
	http.ResponseWriter
	status int
}

// NewStatusWriter returns a StatusWriter over w that has sent nothing yet.
func NewStatusWriter(w http.ResponseWriter) *StatusWriter {
	return &StatusWriter{ResponseWriter: w}
}

// WriteHeader sends code, remembering the first status sent.
func (w *StatusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write writes to the body; with no status sent yet, net/http sends 200
// first, and so the StatusWriter remembers 200.
func (w *StatusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// FlushError flushes the underlying writer and returns its error (the
// client hung up, say); http.ResponseController calls it.
func (w *StatusWriter) FlushError() error {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush is FlushError without the error, for handlers that assert
// http.Flusher.
func (w *StatusWriter) Flush() { _ = w.FlushError() }

// Unwrap returns the underlying writer (http.ResponseController).
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status is the status sent: 200 when the handler wrote nothing, since
// net/http sends 200 then.
func (w *StatusWriter) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// WriteJSON answers with status and v as one JSON document (HTML
// characters left as they are), the way every route of the library
// answers. A write error is dropped: the client is gone, and there is
// nothing left to tell it.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// ErrorBody is the JSON shape of every error response of the library's
// HTTP APIs: {"error":{"code":...,"message":...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of an ErrorBody.
type ErrorDetail struct {
	// Code is the stable code of the error (recordstore.Code).
	Code string `json:"code"`
	// Message is its text without the code (recordstore.Message).
	Message string `json:"message"`
}

// WriteError answers with status and the ErrorBody of code and message.
func WriteError(w http.ResponseWriter, status int, code, message string) {
	WriteJSON(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: message}})
}
