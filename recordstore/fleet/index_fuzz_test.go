// FuzzFleetIndex: the identity index decoder. Every refusal must wrap
// errCorruptIndex; every accepted file must encode back to a file that
// decodes to the same entries, within the decoder's limits. With sum set,
// the input's body gets its right checksum, so that the fuzzer reaches the
// entry parser past the checksum.

package fleet

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"testing"
)

func FuzzFleetIndex(f *testing.F) {
	one := map[string]indexEntry{"k3f/acme.db": {st: stamp{dev: 2049, ino: 1 << 40, size: 45056, mtime: 1764660000123456789, ctime: 1764660000987654321}, key: "tenant:acme"}}
	two := map[string]indexEntry{
		"k3f/acme.db":    one["k3f/acme.db"],
		"000/slot-1.db":  {st: stamp{size: -1, mtime: -5}, key: ""},
		"a/b/c/beta.db":  {st: stamp{dev: 1, ino: 2, size: 3, mtime: 4, ctime: 5}, key: "tenant:gamma"},
		"k00/\xffodd.db": {key: "slot:00001"},
	}
	for _, seed := range [][]byte{
		encodeIndex(nil), encodeIndex(one), encodeIndex(two),
		encodeIndex(two)[:40], []byte(indexMagic), []byte("SQLite format 3\x00"), {},
	} {
		f.Add(seed, false)
		if len(seed) >= 4 {
			f.Add(seed[:len(seed)-4], true)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, sum bool) {
		if sum {
			data = binary.LittleEndian.AppendUint32(append([]byte(nil), data...), crc32.Checksum(data, crcTable))
		}
		entries, err := decodeIndex(data)
		if err != nil {
			if !errors.Is(err, errCorruptIndex) {
				t.Fatalf("refusal is not errCorruptIndex: %v", err)
			}
			if entries != nil {
				t.Fatalf("refused, yet %d entries", len(entries))
			}
			return
		}
		for p, e := range entries {
			if len(p) > maxIndexPath || len(e.key) > maxIndexKey {
				t.Fatalf("accepted a path of %d bytes, an identity of %d", len(p), len(e.key))
			}
		}
		back, err := decodeIndex(encodeIndex(entries))
		if err != nil {
			t.Fatalf("re-encoded index refused: %v", err)
		}
		if len(back) != len(entries) || (len(back) > 0 && !reflect.DeepEqual(back, entries)) {
			t.Fatalf("round trip: %d entries became %d", len(entries), len(back))
		}
	})
}
