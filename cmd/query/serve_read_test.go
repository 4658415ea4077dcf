// query serve's read-side flags: --views, --search and --max-export-rows.

package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
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

		code, _, body = get(base + "/api/v1/streams/s/rows?limit=2")
		Expect(code).To(Equal(200), body)
		Expect(decodeLines(body)).To(HaveLen(2), "within --max-export-rows")
		code, _, body = get(base + "/api/v1/streams/s/rows")
		Expect(code).To(Equal(400), "3 rows do not fit in --max-export-rows 2: %s", body)
	})

	It("refuses a CSV download with more rows than --max-export-rows before sending any, instead of a clean cut file", func() {
		var rows strings.Builder
		for i := 1; i <= 12; i++ {
			fmt.Fprintf(&rows, `{"title":"t-%d","n":%d}`+"\n", i, i)
		}
		s.ok(rows.String(), "append", "--stream", "big", "--kind", "notes")
		_, base := startServeWith(s, "--max-export-rows", "5")

		resp, err := client.Get(base + "/api/v1/streams/big/rows?format=csv&download=1")
		Expect(err).NotTo(HaveOccurred())
		body, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Body.Close()).To(Succeed())
		Expect(resp.StatusCode).To(Equal(400), string(body))
		Expect(resp.Header.Get("Content-Disposition")).To(BeEmpty(), "no file is offered")
		code, msg := errorOf(string(body))
		Expect(code).To(Equal("invalid"))
		Expect(msg).To(ContainSubstring("the export has more than 5 rows"))

		status, _, csvBody := get(base + "/api/v1/streams/big/rows?format=csv&download=1&limit=5")
		Expect(status).To(Equal(200), csvBody)
		Expect(strings.Count(csvBody, "\n")).To(Equal(6), "the header and 5 rows")
	})

	It("refuses to start on a view that runs statements after its SELECT, changing nothing", func() {
		views := filepath.Join(s.dir, "views.json")
		attack := `SELECT * FROM rows) ; PRAGMA query_only=0; DELETE FROM record_streams; DROP TABLE notes; SELECT (1`
		data, err := json.Marshal(map[string]any{"views": []map[string]string{{"name": "v", "kind": "notes", "sql": attack}}})
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(views, data, 0o600)).To(Succeed())
		cmd := exec.Command(queryBin, "--store", s.path, "serve", "--addr", "127.0.0.1:0", "--views", views)
		cmd.Env = withoutStoreEnv()
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { session.Kill().Wait(10 * time.Second) })
		Eventually(session).WithTimeout(60 * time.Second).Should(gexec.Exit(1))
		Expect(string(session.Err.Contents())).To(ContainSubstring("invalid: "))
		Expect(string(session.Err.Contents())).To(ContainSubstring("more than one statement"))
		Expect(s.ok("", "kind", "list")).To(ContainSubstring("notes"), "the kind's table is there")
		Expect(s.lines("", "scan", "--stream", "s")).To(HaveLen(3), "the stream and its rows are there")
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
