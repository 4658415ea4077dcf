// Reading row input against a kind: every row is normalized as it is read,
// so that a row that does not fit is reported by its input line. A key
// given twice is for the library to refuse (the spool's and the backend's
// one rule), when the rows are written.

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/spool"
)

// openInput opens src, a file path or "-" for stdin, and returns it with
// the name errors should use for it and a function closing it.
func (a *app) openInput(src string) (io.Reader, string, func(), error) {
	if src == "-" {
		return a.env.Stdin, "stdin", func() {}, nil
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, src, nil, inputErr(src, err)
	}
	return f, src, func() { _ = f.Close() }, nil
}

// readRows reads every row of in as a row of kind and hands each row's
// normalized values to keep; the row itself is let go at once. It stops at
// the first bad line (ErrInvalid naming it) and at the row that takes the
// rows past lim (ErrCapacity naming its line: more than lim.MaxRows rows,
// or more than lim.MaxBytes bytes as the spool's NDJSON lines, see
// spool.Meter), so that an input is refused by the same limits whether it
// is applied here or through the spool.
//
// It returns the Meter that counted the rows kept.
func readRows(in *rowReader, kind *recordstore.Kind, lim spool.Limits, keep func(recordstore.Values) error) (*spool.Meter, error) {
	meter := spool.NewMeter(kind, lim)
	sc := newValueScanner(kind)
	for {
		vals, line, err := in.NextValues(sc)
		if errors.Is(err, io.EOF) {
			return meter, nil
		}
		if err != nil {
			return nil, err
		}
		err = meter.Add(vals)
		if err == nil {
			err = keep(vals)
		}
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", in.name, line, err)
		}
	}
}
