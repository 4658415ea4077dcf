// The fuzz target of the key parsers: whatever the text, a parser answers
// without panicking, and what it accepts reads back through the key's Get
// form.

package configkeys_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fb46ecde/records/drakkar/internal/configkeys"
)

// units are the units of the drakkar duration keys.
var units = []time.Duration{time.Millisecond, time.Second, time.Hour, 24 * time.Hour}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2.3", " true ", "false", "yes", "12", " -3 ", "1e-3", "0.0000000015", "NaN", "Inf", "3e6", "", "\t1\n"} {
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, v string, u uint8) {
		unit := units[int(u)%len(units)]
		trimmed := strings.TrimSpace(v)

		b, err := configkeys.ParseBool(v)
		if (err == nil) != (trimmed == "true" || trimmed == "false") {
			t.Fatalf("ParseBool(%q) = %v, %v", v, b, err)
		}
		if err == nil && strconv.FormatBool(b) != trimmed {
			t.Fatalf("ParseBool(%q) = %v", v, b)
		}

		n, err := configkeys.ParseInt(v)
		if err == nil {
			back, err2 := configkeys.ParseInt(strconv.Itoa(n))
			if err2 != nil || back != n {
				t.Fatalf("ParseInt(%q) = %d, which reads back as %d, %v", v, n, back, err2)
			}
		}

		d, err := configkeys.ParseDuration(v, unit)
		if err != nil {
			return
		}
		back, err := configkeys.ParseDuration(configkeys.FormatDuration(d, unit), unit)
		if err != nil {
			t.Fatalf("ParseDuration(%q) = %v, whose text %q does not read back: %v", v, d, configkeys.FormatDuration(d, unit), err)
		}
		// The text form is a float64 of unit: it keeps 53 bits of d.
		if diff := math.Abs(float64(back - d)); diff > 1+math.Abs(float64(d))*1e-15 {
			t.Fatalf("ParseDuration(%q) = %v, read back as %v", v, d, back)
		}
	})
}
