// Specs for the value rules on the direct append path: what Append
// refuses changes nothing in the file.

package sqlite_test

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("Append's value rules", func() {
	DescribeTable("refuses a json value the store's JSON grammar refuses, and stores nothing",
		func(raw, says string) {
			b := openStore(newClock())
			declare(b, eventsKind())
			_, err := b.Append(context.Background(), "s", "events", []recordstore.Row{{"name": "ok"}, {"doc": json.RawMessage(raw)}})
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(err).To(MatchError(ContainSubstring("row 2")))
			Expect(err).To(MatchError(ContainSubstring(says)))
			_, err = b.Scan(context.Background(), "s", recordstore.ScanOptions{})
			Expect(err).To(MatchError(recordstore.ErrNotFound))
		},
		Entry("bytes that are not UTF-8", "\"a\xffb\"", "not valid UTF-8"),
		Entry("a lone surrogate escape", `{"a":["\ud800"]}`, "lone UTF-16 surrogate"),
		Entry("a name twice", `{"a":1,"a":2}`, `name "a" appears twice`),
		Entry("a name twice deep down", `{"a":{"b":[{"c":1,"c":1}]}}`, `name "c" appears twice`),
	)
})
