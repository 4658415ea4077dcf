// query serve's read-side flags: --views, --search and --max-export-rows.

package main_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query serve's read-side flags", func() {
	var s *store

	BeforeEach(func() {
		s = newStore()
		s.ok(`{"kinds":[{"name":"notes","columns":[{"name":"title","type":"string"},{"name":"body","type":"string"},{"name":"n","type":"integer"}]}]}`, "kind", "apply", "-")
		s.ok(`{"title":"alpha","body":"zebra","n":1}
{"title":"zebra","body":"alpha","n":2}
{"title":"beta","body":"gamma","n":3}
`, "append", "--stream", "s", "--kind", "notes")
	})

	It("serves the views of --views, searches the --search columns, and caps a response at --max-export-rows", func() {
		views := filepath.Join(s.dir, "views.json")
		Expect(os.WriteFile(views, []byte(`{"views":[{"name":"big","kind":"notes","sql":"SELECT title, n FROM rows WHERE n >= 2 ORDER BY n"}]}`), 0o600)).To(Succeed())
		_, base := startServeWith(s, "--views", views, "--search", "notes=title", "--max-export-rows", "2")

		code, _, body := get(base + "/api/v1/views")
		Expect(code).To(Equal(200), body)
		Expect(body).To(ContainSubstring(`"big"`))
		code, _, body = get(base + "/api/v1/views/big?stream=s")
		Expect(code).To(Equal(200), body)
		Expect(strings.Count(body, "\n")).To(Equal(2))
		Expect(body).To(ContainSubstring(`"zebra"`))

		// q searches title only: "zebra" is the title of row 2, the body of row 1.
		code, _, body = get(base + "/api/v1/streams/s/rows?q=zebra")
		Expect(code).To(Equal(200), body)
		Expect(decodeLines(body)).To(HaveLen(1))
		Expect(body).To(ContainSubstring(`"_seq":2`))

		code, _, body = get(base + "/api/v1/streams/s/rows")
		Expect(code).To(Equal(200), body)
		Expect(decodeLines(body)).To(HaveLen(2), "capped at --max-export-rows")
	})

	DescribeTable("refuses what cannot be served before serving",
		func(flags []string, code int, want string) {
			r := s.run("", append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...)...)
			Expect(r.code).To(Equal(code))
			Expect(r.stderr).To(ContainSubstring(want))
		},
		Entry("--search without =", []string{"--search", "notes"}, 2, "KIND=COL"),
		Entry("a negative cap", []string{"--max-export-rows", "-1"}, 2, "--max-export-rows"),
		Entry("a search column the kind lacks", []string{"--search", "notes=nope"}, 1, "nope"),
		Entry("--views with --fleet", []string{"--fleet", "/tmp", "--views", "v.json"}, 2, "--fleet"),
		Entry("a views file that is not there", []string{"--views", "/nonexistent/views.json"}, 1, "views file"),
	)
})
