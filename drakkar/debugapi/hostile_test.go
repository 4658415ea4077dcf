// Hostile requests: traversal in every spelling, NUL, backslashes, planted
// symlinks, long paths, a swap between check and open, a huge merge body.
// All answer 404 or 400, and no byte from outside shared.dir is served.

package debugapi_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/debugapi"
)

const secret = "TOP-SECRET-OUTSIDE-SHARED"

var _ = Describe("hostile requests", func() {
	var storage, shared, outside, sealed string
	var h http.Handler

	BeforeEach(func() {
		storage, shared = tempDirs()
		sealed = sealFile(storage, shared, "w2", started("a", 1, 1, nil))
		outside = filepath.Join(filepath.Dir(shared), "outside")
		Expect(os.MkdirAll(outside, 0o700)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(outside, "secret.db"), []byte(secret), 0o600)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(filepath.Dir(shared), "top.db"), []byte(secret), 0o600)).To(Succeed())
		hist := filepath.Join(shared, "history", "search_hot")
		Expect(os.Symlink(filepath.Join(outside, "secret.db"), filepath.Join(hist, "link.db"))).To(Succeed())
		Expect(os.Symlink(outside, filepath.Join(shared, "history", "linkdir"))).To(Succeed())
		Expect(os.MkdirAll(filepath.Join(shared, "merged"), 0o700)).To(Succeed())
		Expect(os.Symlink(filepath.Join(outside, "secret.db"), filepath.Join(shared, "merged", "m.db"))).To(Succeed())
		Expect(syscall.Mkfifo(filepath.Join(hist, "fifo.db"), 0o600)).To(Succeed())
		Expect(os.Mkdir(filepath.Join(hist, "dir.db"), 0o700)).To(Succeed())
		h = newAPI(debugapi.Options{Config: apiConfig(storage, shared, "w1")})
		Expect(get(h, "/api/v1/debug/download/"+sealed).Status).To(Equal(200))
	})

	DescribeTable("download answers 404 and serves nothing",
		func(target string) {
			a := get(h, "/api/v1/debug/download/"+target)
			Expect(a.Status).To(Equal(404), string(a.Body))
			Expect(string(a.Body)).To(Equal(`{"error":"File not found"}`))
			Expect(bytes.Contains(a.Body, []byte(secret))).To(BeFalse())
		},
		Entry("dot-dot", "history/../../top.db"),
		Entry("dot-dot inside", "history/search_hot/../../../outside/secret.db"),
		Entry("a dot segment", "history/./search_hot/x.db"),
		Entry("encoded slashes", "history%2F..%2F..%2Ftop.db"),
		Entry("encoded dots", "history/%2e%2e/%2e%2e/top.db"),
		Entry("encoded dots, upper case", "history/%2E%2E/%2E%2E/top.db"),
		Entry("double-encoded", "history/%252e%252e/top.db"),
		Entry("backslashes", `history\..\..\top.db`),
		Entry("encoded backslashes", "history%5c..%5c..%5ctop.db"),
		Entry("an absolute path", "/etc/passwd"),
		Entry("an empty path", ""),
		Entry("a double slash", "history//search_hot/x.db"),
		Entry("a symlink to a file outside", "history/search_hot/link.db"),
		Entry("a symlinked merge result", "merged/m.db"),
		Entry("a symlinked folder", "history/linkdir/secret.db"),
		Entry("a FIFO", "history/search_hot/fifo.db"),
		Entry("a folder", "history/search_hot/dir.db"),
		Entry("a meta file", "history/search_hot/x.db.meta.json"),
		Entry("a hidden work file", "history/search_hot/.x.db"),
		Entry("two levels under merged", "merged/a/b.db"),
		Entry("an own file in storage.dir", "w1-2026-01-01__00_00_00.db"),
		Entry("a very long path", "history/search_hot/"+strings.Repeat("a", 5000)+".db"),
		Entry("a very long segment", "history/"+strings.Repeat("b", 300)+"/x.db"),
	)

	DescribeTable("download answers 400 {error} to a quote, a semicolon or a control character, and serves nothing",
		func(target string) {
			a := get(h, "/api/v1/debug/download/"+target)
			Expect(a.Status).To(Equal(400), string(a.Body))
			Expect(string(a.Body)).To(Equal(`{"error":"Invalid filename"}`))
		},
		Entry("a double quote", "history/search_hot/x%22.db"),
		Entry("a single quote", "history/search_hot/x'.db"),
		Entry("a semicolon", "history/search_hot/x;y.db"),
		Entry("a NUL", "history/search_hot/x%00.db"),
		Entry("a newline", "history/search_hot/x%0a.db"),
		Entry("a DEL", "history/search_hot/x%7f.db"),
		Entry("a quote in a traversal", "history/../%22/top.db"),
	)

	It("does not follow a file swapped for a symlink between the check and the open", func() {
		full := filepath.Join(shared, filepath.FromSlash(sealed))
		debugapi.SetBeforeOpen(func(rel string) {
			Expect(os.Remove(full)).To(Succeed())
			Expect(os.Symlink(filepath.Join(outside, "secret.db"), full)).To(Succeed())
		})
		DeferCleanup(func() { debugapi.SetBeforeOpen(nil) })
		a := get(h, "/api/v1/debug/download/"+sealed)
		Expect(a.Status).To(Equal(404))
		Expect(bytes.Contains(a.Body, []byte(secret))).To(BeFalse())
	})

	It("discards a merge whose source was swapped for a symlink while it ran", func() {
		other := sealFile(storage, shared, "w3", started("b", 1, 2, nil))
		full := filepath.Join(shared, filepath.FromSlash(other))
		debugapi.SetAfterMerge(func() {
			Expect(os.Remove(full)).To(Succeed())
			Expect(os.Symlink(filepath.Join(outside, "secret.db"), full)).To(Succeed())
		})
		DeferCleanup(func() { debugapi.SetAfterMerge(nil) })
		a := post(h, "/api/v1/debug/merge", `{"filenames":["`+sealed+`","`+other+`"]}`)
		Expect(a.Status).To(Equal(404))
		Expect(string(a.Body)).To(Equal(`{"error":"File not found: ` + other + `"}`))
		ents, _ := os.ReadDir(filepath.Join(shared, "merged"))
		Expect(ents).To(HaveLen(1), "only the planted m.db")
	})

	DescribeTable("merge answers 400 or 404 and writes nothing",
		func(fn string, status int) {
			a := post(h, "/api/v1/debug/merge", `{"filenames":["`+sealed+`",`+fn+`]}`)
			Expect(a.Status).To(Equal(status), string(a.Body))
			Expect(filepath.Join(shared, "merged", "m.db")).To(BeAnExistingFile())
			ents, _ := os.ReadDir(filepath.Join(shared, "merged"))
			Expect(ents).To(HaveLen(1))
		},
		Entry("dot-dot", `"history/../../top.db"`, 400),
		Entry("backslashes", `"history\\..\\top.db"`, 400),
		Entry("a NUL", `"history/search_hot/x\u0000.db"`, 400),
		Entry("an absolute path", `"/etc/passwd"`, 400),
		Entry("a symlink to a file outside", `"history/search_hot/link.db"`, 404),
		Entry("a symlinked merge result", `"merged/m.db"`, 404),
		Entry("a symlinked folder", `"history/linkdir/secret.db"`, 404),
		Entry("a FIFO", `"history/search_hot/fifo.db"`, 404),
		Entry("not a string", `42`, 400),
		Entry("a double quote", `"history/search_hot/x\".db"`, 400),
		Entry("a single quote", `"history/search_hot/x'.db"`, 400),
		Entry("a semicolon", `"history/search_hot/x;y.db"`, 400),
		Entry("a tab", `"history/search_hot/x\t.db"`, 400),
	)

	It("answers 404 {detail} to unclean paths outside download instead of redirecting", func() {
		a := get(h, "/api/v1/debug/../debug/databases")
		Expect(a.Status).To(Equal(404))
		Expect(string(a.Body)).To(Equal(`{"detail":"Not Found"}`))
	})
})
