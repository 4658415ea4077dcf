// Fuzz target of the card decoder (listed in FUZZ_TARGETS).

package registry_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/fb46ecde/records/drakkar/registry"
)

// FuzzDecodeCard: DecodeCard never panics, refuses with ErrBadCard only,
// and a card it accepts encodes to bytes that decode to the same card.
func FuzzDecodeCard(f *testing.F) {
	f.Add([]byte(`{"version":1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := registry.DecodeCard(raw)
		if err != nil {
			if !errors.Is(err, registry.ErrBadCard) {
				t.Fatalf("error %v is not ErrBadCard", err)
			}
			return
		}
		b, err := c.Encode()
		if err != nil {
			t.Fatalf("encode a decoded card: %v", err)
		}
		back, err := registry.DecodeCard(b)
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("round trip: %+v != %+v", back, c)
		}
	})
}
