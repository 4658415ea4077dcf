package records_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

func TestRecords(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "records")
}

// waitLong bounds the waits for another process's or goroutine's work: generous,
// for a loaded two-core machine.
const waitLong = 20 * time.Second

// events is the kind the specs write.
var events = recordstore.Kind{Name: "events", Columns: []recordstore.Column{{Name: "msg", Type: recordstore.TypeString}}}
