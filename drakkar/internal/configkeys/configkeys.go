// Package configkeys is the key table behind the drakkar packages'
// configurations (recorder.Config, archive.Config): each key knows how to
// set its field from --set text, read it back, and check it, and the table
// answers Set, Get, Validate and the list of keys the same way for all.
package configkeys

import "github.com/fb46ecde/records/recordstore"

// Key is one configuration key of a config type C.
type Key[C any] struct {
	// Name is the spec's dotted key name.
	Name string
	// Set sets the field from its text; it may refuse text that does not
	// parse, leaving c unchanged. Range rules belong in Check.
	Set func(c *C, v string) error
	// Get returns the field in the text form Set accepts.
	Get func(c C) string
	// Check judges the value; nil accepts any.
	Check func(c C) error
}

// Table is the keys of a config type, in a fixed order.
type Table[C any] []Key[C]

// Names lists the keys, in order.
func (t Table[C]) Names() []string {
	out := make([]string, len(t))
	for i, k := range t {
		out[i] = k.Name
	}
	return out
}

// Set sets key from value. An unknown key or an unparsable value is an
// error wrapping sentinel that names the key, and c is unchanged.
func (t Table[C]) Set(c *C, key, value string, sentinel error) error {
	for _, k := range t {
		if k.Name == key {
			if err := k.Set(c, value); err != nil {
				return recordstore.Errorf(sentinel, "%s: %s", key, err.Error())
			}
			return nil
		}
	}
	return recordstore.Errorf(sentinel, "unknown key %s", recordstore.Quote(key))
}

// Get returns key's value in the text form Set accepts, and false for an
// unknown key.
func (t Table[C]) Get(c C, key string) (string, bool) {
	for _, k := range t {
		if k.Name == key {
			return k.Get(c), true
		}
	}
	return "", false
}

// Validate checks every key, in order, and returns an error wrapping
// sentinel for the first bad one, naming it.
func (t Table[C]) Validate(c C, sentinel error) error {
	for _, k := range t {
		if k.Check == nil {
			continue
		}
		if err := k.Check(c); err != nil {
			return recordstore.Errorf(sentinel, "%s: %s", k.Name, err.Error())
		}
	}
	return nil
}
