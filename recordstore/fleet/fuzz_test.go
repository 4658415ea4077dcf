// Fuzz targets of the pure parts: the tenant id validator and the path
// template parser. Every refusal must wrap recordstore.ErrInvalid; every
// accepted input must give a path that stays under the root and reads back
// as its key.

package fleet_test

import (
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
)

func FuzzTenantID(f *testing.F) {
	for _, s := range []string{"acme", "Acme", "con", "a-b_c", "", "-x", strings.Repeat("a", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := fleet.ValidateTenantID(id)
		if err != nil {
			if !errors.Is(err, recordstore.ErrInvalid) {
				t.Fatalf("refusal of %q is not ErrInvalid: %v", id, err)
			}
			if len(err.Error()) > 4*64+120 {
				t.Fatalf("refusal of %q quotes too much: %d bytes", id, len(err.Error()))
			}
			return
		}
		if strings.ContainsAny(id, "/\\.:\x00") || strings.ToLower(id) != id || len(id) > fleet.MaxTenantID {
			t.Fatalf("accepted %q", id)
		}
		k, err := fleet.ParseKey("tenant:" + id)
		if err != nil || k.Tenant != id {
			t.Fatalf("key of accepted id %q: %v %v", id, k, err)
		}
	})
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"{bucket}/{tenant}.db", "{bucket}/slot-{slot}.db", "../{tenant}.db", "{tenant}", "a//{slot}.db", "{x}.db", "{tenant.db", "{tenant}.db.lock", "{bucket}/slot-{slot}.db.spool", "{tenant}.owner.JSON"} {
		f.Add(s, "acme", 42, true)
	}
	f.Fuzz(func(t *testing.T, text, id string, slot int, tenant bool) {
		mode := fleet.ModeSlot
		if tenant {
			mode = fleet.ModeTenant
		}
		tpl, err := fleet.ParseTemplate(text, mode)
		if err != nil {
			if !errors.Is(err, recordstore.ErrInvalid) {
				t.Fatalf("refusal of %q is not ErrInvalid: %v", text, err)
			}
			return
		}
		var k fleet.Key
		if tenant {
			if k, err = fleet.TenantKey(id); err != nil {
				return
			}
		} else if k, err = fleet.SlotKey(slot); err != nil {
			return
		}
		p, err := tpl.Path(k)
		if err != nil {
			t.Fatalf("path of %s in %q: %v", k, text, err)
		}
		if path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "..") || strings.Contains(p, "\\") {
			t.Fatalf("template %q places %s at %q", text, k, p)
		}
		for _, side := range []string{"-wal", "-shm", "-journal", ".lock", ".owner.json", ".spool", ".sock"} {
			if _, ok := tpl.Match(p + side); ok {
				t.Fatalf("template %q reads sidecar %q as a store", text, p+side)
			}
			if strings.HasSuffix(strings.ToLower(p), side) {
				t.Fatalf("template %q places %s at %q, named as another store's engine file", text, k, p)
			}
		}
		if back, ok := tpl.Match(p); !ok || back != k {
			t.Fatalf("template %q: %q reads back as %v %v, want %s", text, p, back, ok, k)
		}
	})
}
