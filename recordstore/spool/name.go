// Batch folder names: <created %020d>-<instance>-<seq %012d>-<id>, fixed
// width so that name order is publish order.

package spool

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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
	return fmt.Sprintf("%020d-%s-%012d-%s", n.Created.UnixNano(), n.Instance, n.Seq, n.ID)
}

// ParseBatchName parses a batch folder name, refusing (ErrBadBatchName)
// anything that is not exactly the documented form.
func ParseBatchName(s string) (BatchName, error) {
	bad := func(why string) (BatchName, error) {
		return BatchName{}, fmt.Errorf("%w %q: %s", ErrBadBatchName, s, why)
	}
	if len(s) != nameLen {
		return bad(fmt.Sprintf("want %d characters", nameLen))
	}
	parts := strings.Split(s, "-")
	if len(parts) != 4 {
		return bad("want <created>-<instance>-<seq>-<id>")
	}
	created, ok := parseDigits(parts[0], createdWidth)
	if !ok {
		return bad("created is not 20 decimal digits of Unix nanoseconds")
	}
	if !ValidInstance(parts[1]) {
		return bad("instance is not 16 lowercase hex characters")
	}
	seq, ok := parseDigits(parts[2], seqWidth)
	if !ok || seq < 1 {
		return bad("seq is not 12 decimal digits >= 1")
	}
	if !ValidID(parts[3]) {
		return bad("id is not 32 lowercase hex characters")
	}
	return BatchName{Created: time.Unix(0, created).UTC(), Instance: parts[1], Seq: seq, ID: parts[3]}, nil
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
