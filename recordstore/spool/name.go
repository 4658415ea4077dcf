// Batch folder names: <created %020d>-<instance>-<seq %012d>-<id>, fixed
// width so that name order is publish order.

package spool

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/fb46ecde/records/recordstore"
)

// BatchName is a parsed batch folder name.
type BatchName struct {
	// Created is when the producer cut the batch (Unix nanoseconds in the
	// name).
	Created time.Time
	// Instance is the producer's instance id.
	Instance string
	// Seq is the producer seq.
	Seq int64
	// ID is the batch id.
	ID string
}

// createdWidth, seqWidth: decimal digits of the name fields.
const (
	createdWidth = 20
	seqWidth     = 12
	nameLen      = createdWidth + 1 + InstanceLen + 1 + seqWidth + 1 + IDLen
)

// String renders the folder name.
func (n BatchName) String() string {
	b := make([]byte, 0, nameLen)
	b = appendPadded(b, n.Created.UnixNano(), createdWidth)
	b = append(b, '-')
	b = append(b, n.Instance...)
	b = append(b, '-')
	b = appendPadded(b, n.Seq, seqWidth)
	b = append(b, '-')
	b = append(b, n.ID...)
	return string(b)
}

// appendPadded appends v in decimal, zero-padded to width digits (as
// %0*d does: a negative v gets its sign first and counts it).
func appendPadded(b []byte, v int64, width int) []byte {
	if v < 0 {
		b = append(b, '-')
		width--
		if v == math.MinInt64 {
			return append(b, "9223372036854775808"...)
		}
		v = -v
	}
	var digits [20]byte
	i := len(digits)
	for {
		i--
		digits[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	for pad := width - (len(digits) - i); pad > 0; pad-- {
		b = append(b, '0')
	}
	return append(b, digits[i:]...)
}

// Where the three dashes of a batch name are.
const (
	dashCreated  = createdWidth
	dashInstance = dashCreated + 1 + InstanceLen
	dashSeq      = dashInstance + 1 + seqWidth
)

// ParseBatchName parses a batch folder name, refusing (ErrBadBatchName)
// anything that is not exactly the documented form. The fields have fixed
// widths and none holds a dash, so the dashes' places split the name.
func ParseBatchName(s string) (BatchName, error) {
	bad := func(why string) (BatchName, error) {
		return BatchName{}, fmt.Errorf("%w %s: %s", ErrBadBatchName, recordstore.Quote(s), why)
	}
	if len(s) != nameLen {
		return bad(fmt.Sprintf("want %d characters", nameLen))
	}
	if s[dashCreated] != '-' || s[dashInstance] != '-' || s[dashSeq] != '-' {
		return bad("want <created>-<instance>-<seq>-<id>")
	}
	created, ok := parseDigits(s[:dashCreated], createdWidth)
	if !ok {
		return bad("created is not 20 decimal digits of Unix nanoseconds")
	}
	instance := s[dashCreated+1 : dashInstance]
	if !ValidInstance(instance) {
		return bad("instance is not 16 lowercase hex characters")
	}
	seq, ok := parseDigits(s[dashInstance+1:dashSeq], seqWidth)
	if !ok || seq < 1 {
		return bad("seq is not 12 decimal digits >= 1")
	}
	id := s[dashSeq+1:]
	if !ValidID(id) {
		return bad("id is not 32 lowercase hex characters")
	}
	return BatchName{Created: time.Unix(0, created).UTC(), Instance: instance, Seq: seq, ID: id}, nil
}

func parseDigits(s string, width int) (int64, bool) {
	if len(s) != width {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
