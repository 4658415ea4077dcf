package debugapi

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// The 422 messages.
const (
	MsgRequired = "Field required"
	MsgInteger  = "Input should be a valid integer"
	MsgBoolean  = "Input should be a valid boolean"
	MsgNonEmpty = "String should have at least 1 character"
	MsgInt32    = "Input should be between -2147483648 and 2147483647"
	// MsgNonNegative is the 422 message of a negative offset.
	MsgNonNegative = "Input should be greater than or equal to 0"
)

// param returns the last value of a query parameter; has is false when it
// is absent or empty.
func param(r *http.Request, name string) (v string, has bool) {
	vs, ok := r.URL.Query()[name]
	if !ok || len(vs) == 0 || vs[len(vs)-1] == "" {
		return "", false
	}
	return vs[len(vs)-1], true
}

// intParam reads a query parameter as an int64: ok false after writing 422.
func intParam(w http.ResponseWriter, r *http.Request, name string, required bool, def int64) (int64, bool) {
	v, has := param(r, name)
	if !has {
		if required {
			write422(w, name, MsgRequired)
			return 0, false
		}
		return def, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		write422(w, name, MsgInteger)
		return 0, false
	}
	return n, true
}

// rangeParam is intParam bounded to [lo, hi]: 422 "Input should be between
// lo and hi" outside.
func rangeParam(w http.ResponseWriter, r *http.Request, name string, def, lo, hi int64) (int64, bool) {
	n, ok := intParam(w, r, name, false, def)
	if !ok {
		return 0, false
	}
	if n < lo || n > hi {
		write422(w, name, "Input should be between "+strconv.FormatInt(lo, 10)+" and "+strconv.FormatInt(hi, 10))
		return 0, false
	}
	return n, true
}

// ParseBool parses a query boolean as the public contract does: true for
// 1, t, true, y, yes, on; false for 0, f, false, n, no, off (any case);
// ok false for anything else.
func ParseBool(v string) (b, ok bool) {
	switch strings.ToLower(v) {
	case "1", "t", "true", "y", "yes", "on":
		return true, true
	case "0", "f", "false", "n", "no", "off":
		return false, true
	}
	return false, false
}

// boolParam reads a query boolean (default false when absent or empty):
// ok false after writing 422.
func boolParam(w http.ResponseWriter, r *http.Request, name string) (bool, bool) {
	v, has := param(r, name)
	if !has {
		return false, true
	}
	b, ok := ParseBool(v)
	if !ok {
		write422(w, name, MsgBoolean)
		return false, false
	}
	return b, true
}

// int32Param is a required integer that must fit an int32.
func int32Param(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	n, ok := intParam(w, r, name, true, 0)
	if !ok {
		return 0, false
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		write422(w, name, MsgInt32)
		return 0, false
	}
	return n, true
}

// textParam is a required query parameter that must not be empty.
func textParam(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	vs, ok := r.URL.Query()[name]
	if !ok || len(vs) == 0 {
		write422(w, name, MsgRequired)
		return "", false
	}
	if vs[len(vs)-1] == "" {
		write422(w, name, MsgNonEmpty)
		return "", false
	}
	return vs[len(vs)-1], true
}
