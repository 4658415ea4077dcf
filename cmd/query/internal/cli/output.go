// JSON output on stdout: one value per line.

package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// printer writes JSON values one per line through a buffer; call flush
// before returning.
type printer struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func newPrinter(w io.Writer) *printer {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &printer{w: bw, enc: enc}
}

// line writes v as compact JSON followed by a newline.
func (p *printer) line(v any) error {
	if err := p.enc.Encode(v); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// flush pushes buffered output to stdout.
func (p *printer) flush() error {
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// printOne writes a single JSON value as the whole output of a command.
func (a *app) printOne(v any) error {
	p := newPrinter(a.env.Stdout)
	if err := p.line(v); err != nil {
		return err
	}
	return p.flush()
}
