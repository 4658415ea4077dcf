// Keys: a tenant id or a routing slot, how they print ("tenant:acme",
// "slot:00042") and parse, and the id rules a tenant id must meet because
// it becomes a file name.

package fleet

import (
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/fb46ecde/records/recordstore"
)

// Mode says what a fleet's keys are.
type Mode string

// The fleet modes.
const (
	// ModeTenant: one store per tenant id; a store is not created on
	// first use unless asked.
	ModeTenant Mode = "tenant"
	// ModeSlot: one store per routing slot (Slots of them, by a stable
	// hash of the routing key); created on first use.
	ModeSlot Mode = "slot"
)

// Limits of keys.
const (
	// Slots is the number of routing slots.
	Slots = 16384
	// BucketSlots is the number of contiguous slots in a bucket.
	BucketSlots = 64
	// Buckets is the number of buckets (Slots / BucketSlots).
	Buckets = Slots / BucketSlots
	// MaxTenantID is the longest tenant id, in bytes.
	MaxTenantID = 128
	// quoteLimit is how much of a refused id an error message quotes.
	quoteLimit = 64
)

// ParseMode returns the mode named s ("tenant" or "slot").
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeTenant, ModeSlot:
		return Mode(s), nil
	}
	return "", recordstore.Invalidf("fleet mode %q: want tenant or slot", cut(s))
}

// Key names one store of a fleet: a tenant id (ModeTenant) or a slot
// (ModeSlot). The zero Key is no key.
type Key struct {
	// Mode is the fleet mode the key belongs to.
	Mode Mode
	// Tenant is the tenant id (ModeTenant only).
	Tenant string
	// Slot is the slot (ModeSlot), or the slot of the tenant id
	// (ModeTenant), which places it in a bucket.
	Slot int
}

// String prints the key as list prints it: "tenant:<id>" or "slot:<nnnnn>".
func (k Key) String() string {
	if k.Mode == ModeTenant {
		return "tenant:" + k.Tenant
	}
	return "slot:" + pad(k.Slot, 5)
}

// Bucket is the key's bucket: its slot / BucketSlots.
func (k Key) Bucket() int { return k.Slot / BucketSlots }

// TenantKey returns the key of tenant id, or an ErrInvalid error when id
// breaks the id rules (see ValidateTenantID).
func TenantKey(id string) (Key, error) {
	if err := ValidateTenantID(id); err != nil {
		return Key{}, err
	}
	return Key{Mode: ModeTenant, Tenant: id, Slot: SlotOf(id)}, nil
}

// SlotKey returns the key of slot n, or an ErrInvalid error when n is not
// in [0, Slots).
func SlotKey(n int) (Key, error) {
	if n < 0 || n >= Slots {
		return Key{}, recordstore.Invalidf("slot %d: want 0 to %d", n, Slots-1)
	}
	return Key{Mode: ModeSlot, Slot: n}, nil
}

// RoutingKey returns the slot key a routing key (any string) maps to.
func RoutingKey(routing string) Key {
	return Key{Mode: ModeSlot, Slot: SlotOf(routing)}
}

// SlotOf is the stable slot of a routing key: FNV-1a (32 bits) of its
// bytes modulo Slots. It never changes between builds: stores are placed
// by it.
func SlotOf(routing string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(routing))
	return int(h.Sum32() % Slots)
}

// ParseKey parses a key as list prints it ("tenant:acme", "slot:00042";
// "tenant/acme" and "slot/42" are also taken). A slot may be written
// without its leading zeros. Anything else is an ErrInvalid error.
func ParseKey(s string) (Key, error) {
	mode, rest, ok := strings.Cut(s, ":")
	if !ok {
		mode, rest, ok = strings.Cut(s, "/")
	}
	if !ok {
		return Key{}, recordstore.Invalidf("key %q: want tenant:<id> or slot:<n>", cut(s))
	}
	switch Mode(mode) {
	case ModeTenant:
		return TenantKey(rest)
	case ModeSlot:
		n, err := parseSlot(rest)
		if err != nil {
			return Key{}, err
		}
		return SlotKey(n)
	}
	return Key{}, recordstore.Invalidf("key %q: mode %q: want tenant or slot", cut(s), cut(mode))
}

// parseSlot reads 1 to 5 decimal digits.
func parseSlot(s string) (int, error) {
	if len(s) == 0 || len(s) > 5 {
		return 0, recordstore.Invalidf("slot %q: want 1 to 5 digits", cut(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, recordstore.Invalidf("slot %q: want 1 to 5 digits", cut(s))
		}
	}
	n, _ := strconv.Atoi(s)
	return n, nil
}

// windowsDevices are the names Windows reserves for devices, with any
// extension: a tenant id equal to one would name a device, not a file.
var windowsDevices = map[string]bool{
	"con": true, "prn": true, "aux": true, "nul": true,
	"com0": true, "com1": true, "com2": true, "com3": true, "com4": true,
	"com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt0": true, "lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true,
	"lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

// ValidateTenantID checks that id can name a file: only [a-z0-9_-],
// starting with a letter or a digit, 1 to MaxTenantID bytes, and not a
// Windows device name. Uppercase is refused, not folded (on a
// case-insensitive file system "Acme" and "acme" would share a file). The
// error wraps recordstore.ErrInvalid and quotes at most 64 bytes of id.
func ValidateTenantID(id string) error {
	switch {
	case id == "":
		return recordstore.Invalidf("tenant id is empty")
	case len(id) > MaxTenantID:
		return recordstore.Invalidf("tenant id %q...: longer than %d bytes", cut(id), MaxTenantID)
	case strings.ContainsAny(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
		return recordstore.Invalidf("tenant id %q: uppercase is refused, not folded (send ids lowercase)", cut(id))
	case !alnum(id[0]):
		return recordstore.Invalidf("tenant id %q: must start with a-z or 0-9", cut(id))
	case windowsDevices[id]:
		return recordstore.Invalidf("tenant id %q: a Windows device name", id)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !alnum(c) && c != '_' && c != '-' {
			return recordstore.Invalidf("tenant id %q: byte %d is not one of a-z 0-9 _ -", cut(id), i)
		}
	}
	return nil
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// cut returns at most quoteLimit bytes of s, for error messages.
func cut(s string) string {
	if len(s) > quoteLimit {
		return s[:quoteLimit]
	}
	return s
}

// pad prints n with at least width digits.
func pad(n, width int) string {
	s := strconv.Itoa(n)
	for len(s) < width {
		s = "0" + s
	}
	return s
}
