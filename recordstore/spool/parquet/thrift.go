// A minimal reader of the Thrift compact protocol, used to vet footers and
// page headers before arrow-go decodes them: every length and element count
// is checked against the bytes that remain, so nothing it accepts can make
// the real decoder allocate more than a small multiple of the input.

package parquet

import (
	"errors"
	"fmt"
)

// Compact protocol type ids.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
	tUUID   = 13
)

// Decoded-size estimates (bytes) used to bound what arrow-go's generated
// Thrift code would allocate for a message: a struct (the largest Parquet
// metadata structs are a few hundred bytes), a list slot (pointer or
// scalar), and the fixed cost of a string.
const (
	costStruct = 512
	costSlot   = 16
	costString = 32
	maxDepth   = 32
)

// errShort means the message ends before its bytes do: for a page header
// read in pieces, a sign to read more.
var errShort = errors.New("thrift message is truncated")

// thriftReader reads one compact-protocol message from buf.
type thriftReader struct {
	buf  []byte
	pos  int
	cost int64 // estimated decoded size so far
}

func (t *thriftReader) remaining() int { return len(t.buf) - t.pos }

func (t *thriftReader) byte() (byte, error) {
	if t.pos >= len(t.buf) {
		return 0, errShort
	}
	b := t.buf[t.pos]
	t.pos++
	return b, nil
}

func (t *thriftReader) varint() (uint64, error) {
	var v uint64
	for shift := uint(0); shift < 70; shift += 7 {
		b, err := t.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errors.New("thrift varint is too long")
}

func (t *thriftReader) i32() (int32, error) {
	u, err := t.varint()
	if err != nil {
		return 0, err
	}
	if u > 0xffffffff {
		return 0, errors.New("thrift i32 out of range")
	}
	x := uint32(u)
	return int32(x>>1) ^ -int32(x&1), nil
}

func (t *thriftReader) skipBytes(n uint64) error {
	if n > uint64(t.remaining()) {
		return errShort
	}
	t.pos += int(n)
	return nil
}

// count reads a container size and checks that the remaining bytes can hold
// that many elements of at least one byte each (bool elements and empty
// structs are one byte).
func (t *thriftReader) count(n uint64) (int, error) {
	if n > uint64(t.remaining()) {
		return 0, fmt.Errorf("thrift container of %d elements in %d bytes", n, t.remaining())
	}
	t.cost += int64(n) * costSlot
	return int(n), nil
}

// skip reads and discards one value of type typ.
func (t *thriftReader) skip(typ byte, depth int) error {
	if depth > maxDepth {
		return errors.New("thrift message is nested too deeply")
	}
	switch typ {
	case tTrue, tFalse:
		return nil
	case tByte:
		return t.skipBytes(1)
	case tI16, tI32, tI64:
		_, err := t.varint()
		return err
	case tDouble:
		return t.skipBytes(8)
	case tUUID:
		return t.skipBytes(16)
	case tBinary:
		n, err := t.varint()
		if err != nil {
			return err
		}
		t.cost += int64(min(n, 1<<40)) + costString
		return t.skipBytes(n)
	case tList, tSet:
		return t.skipList(depth)
	case tMap:
		return t.skipMap(depth)
	case tStruct:
		return t.readStruct(depth, nil)
	}
	return fmt.Errorf("thrift type %d is unknown", typ)
}

func (t *thriftReader) skipList(depth int) error {
	h, err := t.byte()
	if err != nil {
		return err
	}
	size := uint64(h >> 4)
	if size == 15 {
		if size, err = t.varint(); err != nil {
			return err
		}
	}
	n, err := t.count(size)
	if err != nil {
		return err
	}
	elem := h & 0x0f
	for i := 0; i < n; i++ {
		if elem == tTrue || elem == tFalse {
			err = t.skipBytes(1) // list booleans take one byte each
		} else {
			err = t.skip(elem, depth+1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *thriftReader) skipMap(depth int) error {
	size, err := t.varint()
	if err != nil || size == 0 {
		return err
	}
	kv, err := t.byte()
	if err != nil {
		return err
	}
	n, err := t.count(size)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := t.skip(kv>>4, depth+1); err != nil {
			return err
		}
		if err := t.skip(kv&0x0f, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// fieldFunc is called for each field of a struct. It may read the value
// itself and return true; returning false makes the reader skip it.
type fieldFunc func(id int16, typ byte) (bool, error)

// readStruct reads a struct up to its stop byte, handing each field to fn
// (which may be nil).
func (t *thriftReader) readStruct(depth int, fn fieldFunc) error {
	if depth > maxDepth {
		return errors.New("thrift message is nested too deeply")
	}
	t.cost += costStruct
	var last int16
	for {
		h, err := t.byte()
		if err != nil {
			return err
		}
		if h == tStop {
			return nil
		}
		typ := h & 0x0f
		id := last + int16(h>>4)
		if h>>4 == 0 {
			v, err := t.i32()
			if err != nil {
				return err
			}
			id = int16(v)
		}
		last = id
		handled := false
		if fn != nil {
			if handled, err = fn(id, typ); err != nil {
				return err
			}
		}
		if !handled {
			if err := t.skip(typ, depth+1); err != nil {
				return err
			}
		}
	}
}

// vetMessage walks one struct message in buf and returns an error when it
// is malformed or its estimated decoded size exceeds maxCost.
func vetMessage(buf []byte, maxCost int64) error {
	t := &thriftReader{buf: buf}
	if err := t.readStruct(0, nil); err != nil {
		return err
	}
	if t.cost > maxCost {
		return fmt.Errorf("thrift message would decode to about %d bytes, more than the %d allowed", t.cost, maxCost)
	}
	return nil
}
