// The web console of a real query serve in a real headless Chromium: the
// streams table, a stream's rows, a search, a follow that shows a row
// appended by another process, hostile rows shown as text, and a page
// readable at 375 px; screenshots go to the test artifacts folder.

package main_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore/spool"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Hostile rows: markup that would run or inject an element if the console
// wrote values as HTML.
const (
	scriptRow = `<script>alert("xss-script")</script>`
	imgRow    = `"><img src=x onerror=alert("xss-img")>`
)

// chromiumPath finds Debian's chromium (or another Chrome). When there is
// none, the spec is skipped with a message, except in CI (CI=true), where
// .ci/run installs it and its absence is a failure.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		Fail("no chromium binary on PATH, and CI=true: .ci/run installs Debian's chromium; the console's browser specs cannot run without it")
	}
	Skip("no chromium binary on PATH (apt-get install chromium): the console's browser specs are skipped; in CI (CI=true) this fails")
	return ""
}

// artifactsDir is where the browser specs save screenshots: $TEST_ARTIFACTS,
// else test-artifacts/ at the repository's root (gitignored).
func artifactsDir() string {
	dir := os.Getenv("TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "test-artifacts")
	}
	dir = filepath.Join(dir, "console")
	Expect(os.MkdirAll(dir, 0o700)).To(Succeed())
	return dir
}

// browser is a headless Chromium tab, with what it reported: JavaScript
// dialogs (an alert would mean injected script ran) and uncaught
// exceptions.
type browser struct {
	ctx        context.Context
	mu         sync.Mutex
	dialogs    []string
	exceptions []string
}

// actionTimeout bounds one browser action, so that a page that never gets
// ready fails the spec instead of hanging it.
const actionTimeout = 30 * time.Second

func newBrowser(path string) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1440, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	DeferCleanup(func() { cancelTab(); cancelAlloc() })
	b := &browser{ctx: ctx}
	// Listen starts the browser (with no timeout on ctx: a timeout there
	// would stop the browser itself).
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			b.mu.Lock()
			b.dialogs = append(b.dialogs, ev.Message)
			b.mu.Unlock()
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}()
		case *runtime.EventExceptionThrown:
			b.mu.Lock()
			b.exceptions = append(b.exceptions, ev.ExceptionDetails.Text)
			b.mu.Unlock()
		}
	})
	Expect(err).NotTo(HaveOccurred(), "start chromium at %s", path)
	return b
}

// run runs the actions in order, each bounded by actionTimeout.
func (b *browser) run(actions ...chromedp.Action[chromedp.Void]) {
	for _, a := range actions {
		ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
		_, err := chromedp.Run(ctx, a)
		cancel()
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
	}
}

// eval evaluates a JavaScript expression of the test's own making.
func eval[T any](b *browser, js string) T {
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	ExpectWithOffset(2, err).NotTo(HaveOccurred(), js)
	return v
}

// texts returns the textContent of every element matching sel.
func (b *browser) texts(sel string) []string {
	return eval[[]string](b, fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(e => e.textContent)`, sel))
}

func (b *browser) count(sel string) int {
	return eval[int](b, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

// column returns, for each row of the rows table, the cell of the column
// headed name: its text, class and title.
func (b *browser) column(name string) []cellView {
	return eval[[]cellView](b, fmt.Sprintf(`(() => {
		const i = Array.from(document.querySelectorAll("#rows thead th")).findIndex(th => th.textContent === %q);
		if (i < 0) return [];
		return Array.from(document.querySelectorAll("#rows tbody tr")).map(tr => {
			const td = tr.children[i];
			return {text: td.textContent, class: td.className, title: td.title};
		});
	})()`, name))
}

// cellView is one table cell as column reads it.
type cellView struct {
	Text  string `json:"text"`
	Class string `json:"class"`
	Title string `json:"title"`
}

// readyPrefix waits until the console has rendered a page whose hash
// starts with prefix, and returns that hash.
func (b *browser) readyPrefix(prefix string) string {
	b.run(chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`body[data-ready^=%q]`, prefix))))
	return eval[string](b, `document.body.getAttribute("data-ready")`)
}

// requested returns the paths and queries of the requests the page made
// since the last clearRequests, from the browser's resource timing.
func (b *browser) requested() []string {
	return eval[[]string](b, `performance.getEntriesByType("resource").map(e => { const u = new URL(e.name); return u.pathname + u.search; })`)
}

func (b *browser) clearRequests() {
	eval[bool](b, `performance.clearResourceTimings(), true`)
}

// to sets the page's hash and waits until it is rendered.
func (b *browser) to(hash string) {
	Expect(eval[string](b, fmt.Sprintf(`location.hash = %q`, hash))).To(Equal(hash))
	b.ready(hash)
}

// ready waits until the console has rendered the page of hash.
func (b *browser) ready(hash string) {
	b.run(chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`body[data-ready=%q]`, hash))))
}

func (b *browser) screenshot(name string) {
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(artifactsDir(), name)
	Expect(os.WriteFile(path, png, 0o600)).To(Succeed())
	GinkgoWriter.Printf("screenshot: %s\n", path)
}

func (b *browser) reported() (dialogs, exceptions []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...), append([]string(nil), b.exceptions...)
}

var _ = Describe("the web console in a headless Chromium", Label("integration", "browser"), func() {
	var (
		s *store
		b *browser
	)

	BeforeEach(func() {
		path := chromiumPath()
		s = newStore()
		s.ok("", "kind", "apply", kindsFile())
		rows := []string{`{"msg":"hello"}`, fmt.Sprintf(`{"msg":%q}`, scriptRow), fmt.Sprintf(`{"msg":%q}`, imgRow)}
		s.ok(strings.Join(rows, "\n"), "append", "--stream", "e1", "--kind", "events")
		s.ok(`{"id":1,"name":"first"}`, "append", "--stream", "j1", "--kind", "jobs")
		b = newBrowser(path)
	})

	// serveOwner starts query serve with flags and waits until it owns
	// the store.
	serveOwner := func(flags ...string) string {
		session, base := startServeWith(s, flags...)
		Eventually(logOf(session)).WithTimeout(liveness).Should(ContainSubstring("msg=role role=owner"))
		return base
	}

	It("lists the streams, opens one, searches it, follows another process's append and shows hostile rows as text", func() {
		base := serveOwner()
		By("the streams table")
		b.run(chromedp.Navigate(base + "/console/"))
		b.ready("#/")
		Expect(b.texts("#streams tbody tr td:first-child")).To(Equal([]string{"e1", "j1"}))
		Expect(b.texts(`#streams tr[data-stream="e1"] td`)[1:3]).To(Equal([]string{"events", "3"}))

		By("opening a stream: its rows, hostile ones as text, and its schema")
		b.run(chromedp.Click(chromedp.CSS(`#streams a[href="#/stream/e1"]`)))
		b.ready("#/stream/e1")
		Expect(b.texts("#rows tbody tr td:nth-child(2)")).To(Equal([]string{"hello", scriptRow, imgRow}))
		Expect(b.count("#main img, #main script, #rows [onerror]")).To(BeZero(), "no element injected by a value")
		Expect(b.texts("#schema-columns tbody td:first-child")).To(Equal([]string{"msg"}))
		b.screenshot("stream-1440.png")

		By("searching")
		b.run(chromedp.SendKeys(chromedp.CSS("#q"), "xss-script"), chromedp.Click(chromedp.CSS("#search-go")))
		b.ready("#/stream/e1?q=xss-script")
		Expect(b.texts("#rows tbody tr td:nth-child(2)")).To(Equal([]string{scriptRow}))

		By("filtering (the server's where= filters, or the page's own on a server without them)")
		Expect(eval[string](b, `location.hash = "#/stream/e1?f=msg~HELLO"`)).To(Equal("#/stream/e1?f=msg~HELLO"))
		b.ready("#/stream/e1?f=msg~HELLO")
		Expect(b.texts("#rows tbody tr td:nth-child(2)")).To(Equal([]string{"hello"}))
		Expect(b.count("#error:not([hidden])")).To(BeZero())

		By("following: a row appended by another process appears")
		Expect(eval[string](b, `location.hash = "#/stream/e1"`)).To(Equal("#/stream/e1"))
		b.ready("#/stream/e1")
		Expect(b.texts("#rows tbody tr td:nth-child(2)")).To(HaveLen(3))
		b.run(chromedp.Click(chromedp.CSS("#follow")))
		Eventually(func() []string { return b.texts("#follow-status") }).Should(ConsistOf(HavePrefix("Following")))
		s.ok(fmt.Sprintf(`{"msg":"from another process"}`+"\n"+`{"msg":%q}`, imgRow), "append", "--stream", "e1", "--kind", "events")
		Eventually(func() []string { return b.texts("#rows tbody tr.new td:nth-child(2)") }).
			WithTimeout(2 * time.Second).WithPolling(50 * time.Millisecond).
			Should(Equal([]string{"from another process", imgRow}))
		Expect(b.count("#main img, #main script")).To(BeZero(), "no element injected by a followed value")

		By("the owner and spool pages")
		b.run(chromedp.Navigate(base + "/console/#/owner"))
		b.ready("#/owner")
		Expect(b.texts(`#owner dd[data-fact="phase"]`)).To(Equal([]string{"ready"}))
		Expect(b.texts(`#owner dd[data-fact="stale"]`)).To(Equal([]string{"no"}))
		b.run(chromedp.Navigate(base + "/console/#/spool"))
		b.ready("#/spool")
		Expect(b.count("button.retry")).To(BeZero(), "no retry button without --allow-writes")

		By("readable at 375 px: nothing wider than the screen but the tables' own scroll boxes")
		b.run(chromedp.EmulateViewport(375, 800), chromedp.Navigate(base+"/console/#/stream/e1"))
		b.ready("#/stream/e1")
		overflow := eval[int](b, `document.documentElement.scrollWidth - document.documentElement.clientWidth`)
		Expect(overflow).To(BeNumerically("<=", 0))
		b.screenshot("stream-375.png")

		dialogs, exceptions := b.reported()
		Expect(dialogs).To(BeEmpty(), "no alert ran")
		Expect(exceptions).To(BeEmpty(), "the console's script threw nothing")
	})

	It("shows a failed batch with its error.json and, with --allow-writes, retries it from the spool page", func() {
		other := newStore()
		other.ok("", "kind", "apply", kindsFile())
		name := other.publish()
		file := filepath.Join(spool.PathFor(other.path), "incoming", name, "e00001.ndjson")
		good, err := os.ReadFile(file)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(file, append(bytes.Clone(good), '\n'), 0o600)).To(Succeed())
		Expect(os.Rename(filepath.Dir(file), filepath.Join(spool.PathFor(s.path), "incoming", name))).To(Succeed())
		wbase := serveOwner("--allow-writes")
		Eventually(func() []string { return s.entries(spool.StateFailed) }).WithTimeout(liveness).Should(ConsistOf(name))

		b.run(chromedp.Navigate(wbase + "/console/#/spool"))
		b.ready("#/spool")
		Expect(b.texts("#failed tbody tr td:first-child")).To(Equal([]string{name}))
		Expect(b.texts(`#failed tr[data-batch="` + name + `"] pre`)).To(ConsistOf(And(ContainSubstring(`"code": "invalid"`), ContainSubstring(name))))
		b.screenshot("spool-1440.png")

		By("the file fixed, Retry puts the batch back and the owner applies it")
		failedFile := filepath.Join(spool.PathFor(s.path), "failed", name, "e00001.ndjson")
		Expect(os.WriteFile(failedFile, good, 0o600)).To(Succeed())
		b.run(chromedp.Click(chromedp.CSS(`button.retry[data-batch="` + name + `"]`)))
		Eventually(func() []string { return s.entries(spool.StateFailed) }).WithTimeout(liveness).Should(BeEmpty())
		Eventually(func(g Gomega) {
			r := s.run("", "meta", "--stream", "s1") // not_found until the owner applies the batch
			g.Expect(r.code).To(Equal(0), r.stderr)
			g.Expect(r.stdout).To(ContainSubstring(`"stream":"s1"`))
		}).WithTimeout(liveness).Should(Succeed())
		b.run(chromedp.Navigate(wbase + "/console/#/"))
		b.ready("#/")
		Expect(b.texts("#streams tbody tr td:first-child")).To(ContainElement("s1"))
		dialogs, exceptions := b.reported()
		Expect(dialogs).To(BeEmpty())
		Expect(exceptions).To(BeEmpty())
	})

	It("shows integers and json values with every digit, json strings quoted, and SQL NULL apart", func() {
		s.ok(`{"id":9223372036854775807,"name":"big","payload":{"big":12345678901234567890,"s":"x"},"score":0.1}`+"\n"+
			`{"id":2,"name":"-9007199254740993","payload":"text"}`+"\n"+
			`{"id":3,"payload":null}`, "append", "--stream", "j2", "--kind", "jobs")
		base := serveOwner()
		b.run(chromedp.Navigate(base + "/console/#/stream/j2"))
		b.ready("#/stream/j2")
		Expect(b.column("id")).To(Equal([]cellView{
			{Text: "9223372036854775807", Class: "num"}, {Text: "2", Class: "num"}, {Text: "3", Class: "num"}}))
		Expect(b.column("payload")).To(Equal([]cellView{
			{Text: `{"big":12345678901234567890,"s":"x"}`, Class: "json"},
			{Text: `"text"`, Class: "json"},
			{Text: "—", Class: "null-sql", Title: "NULL: no value"}}))
		Expect(b.column("name")).To(Equal([]cellView{
			{Text: "big"}, {Text: "-9007199254740993"}, {Text: "—", Class: "null-sql", Title: "NULL: no value"}}))
		Expect(b.column("score")[0].Text).To(Equal("0.1"))
		b.screenshot("exact-1440.png")
		_, exceptions := b.reported()
		Expect(exceptions).To(BeEmpty())
	})

	It("reads quoted filter values, refuses a filter without an operator before any query, and asks CSV for the formula guard", func() {
		s.ok(`{"msg":"hello, world"}`+"\n"+`{"msg":"say \"hi\", then go"}`, "append", "--stream", "e1", "--kind", "events")
		base := serveOwner()
		b.run(chromedp.Navigate(base + "/console/#/stream/e1"))
		b.ready("#/stream/e1")

		By("the CSV link asks for the guard, the others do not")
		hrefs := eval[map[string]string](b, `Object.fromEntries(Array.from(document.querySelectorAll("#export a")).map(a => [a.dataset.format, a.getAttribute("href")]))`)
		Expect(hrefs).To(HaveLen(3))
		Expect(hrefs["csv"]).To(And(ContainSubstring("format=csv"), ContainSubstring("csv_guard=1"), ContainSubstring("download=1")))
		Expect(hrefs["ndjson"]).NotTo(ContainSubstring("csv_guard"))
		Expect(hrefs["parquet"]).NotTo(ContainSubstring("csv_guard"))

		By("a quoted value keeps its comma")
		b.clearRequests()
		b.run(chromedp.SendKeys(chromedp.CSS("#filters"), `msg="hello, world"`), chromedp.Click(chromedp.CSS("#search-go")))
		b.readyPrefix("#/stream/e1?f=")
		Expect(b.texts("#rows tbody tr td:nth-child(2)")).To(Equal([]string{"hello, world"}))
		Expect(b.requested()).To(ContainElement(ContainSubstring("where=msg%3Dhello%2C+world")))
		Expect(b.count("#error:not([hidden])")).To(BeZero())

		By("a doubled quote is a quote")
		b.to(`#/stream/e1?f=` + url.QueryEscape(`msg="say ""hi"", then go"`))
		Expect(b.texts("#rows tbody tr td:nth-child(2)")).To(Equal([]string{`say "hi", then go`}))

		By("a part without an operator is refused in the page, and nothing is queried")
		b.clearRequests()
		b.to(`#/stream/e1?f=` + url.QueryEscape(`msg=hello, world`))
		Expect(b.texts("#error:not([hidden])")).To(ConsistOf(
			`invalid: filter "world": no operator after column world; want COLUMN OP VALUE with OP one of = != < <= > >= ~; quote a value that holds a comma: msg="hello, world"`))
		Expect(b.count("#rows")).To(BeZero(), "no rows shown")
		Expect(b.requested()).NotTo(ContainElement(Or(ContainSubstring("/page"), ContainSubstring("/rows"), ContainSubstring("/follow"))))
		Expect(eval[string](b, `document.getElementById("filters").value`)).To(Equal("msg=hello, world"), "the box keeps the text to fix")

		By("an open quote is refused alike")
		b.clearRequests()
		b.to(`#/stream/e1?f=` + url.QueryEscape(`msg="hello`))
		Expect(b.texts("#error:not([hidden])")).To(ConsistOf(HavePrefix(`invalid: filter "msg=\"hello": the quote at offset 4 is not closed`)))
		Expect(b.requested()).NotTo(ContainElement(Or(ContainSubstring("/page"), ContainSubstring("/rows"))))
		_, exceptions := b.reported()
		Expect(exceptions).To(BeEmpty())
	})

	It("jumps to the last page of a query with one click, and follows from now on any page", func() {
		s.ok(msgLines("m", 1, 250), "append", "--stream", "big", "--kind", "events")
		base := serveOwner()
		b.run(chromedp.Navigate(base + "/console/#/stream/big?limit=25"))
		b.ready("#/stream/big?limit=25")
		Expect(b.texts("#rows tbody tr td:first-child")).To(HaveLen(25))
		Expect(eval[bool](b, `document.getElementById("follow").disabled`)).To(BeTrue(), "Follow works on the last page only")

		By("Last: the stream's last 25 rows, where Follow works")
		b.run(chromedp.Click(chromedp.CSS("#page-last")))
		Expect(b.readyPrefix("#/stream/big?after=")).To(Equal("#/stream/big?after=225&limit=25"))
		seqs := b.texts("#rows tbody tr td:first-child")
		Expect(seqs).To(HaveLen(25))
		Expect(seqs[0]).To(Equal("226"))
		Expect(seqs[24]).To(Equal("250"))
		Expect(b.count("#page-next")).To(BeZero())
		Expect(eval[bool](b, `document.getElementById("follow").disabled`)).To(BeFalse())

		By("Last of a filtered query: its last 25 matches, not the stream's last seqs")
		b.to("#/stream/big?f=" + url.QueryEscape("msg~m-1") + "&limit=25")
		b.run(chromedp.Click(chromedp.CSS("#page-last")))
		b.readyPrefix("#/stream/big?after=")
		msgs := b.texts("#rows tbody tr td:nth-child(2)")
		Expect(msgs).To(HaveLen(25))
		Expect(msgs[0]).To(Equal("m-175"))
		Expect(msgs[24]).To(Equal("m-199"))

		By("Follow from now, on the first page: the table empties and shows the rows appended since")
		b.to("#/stream/big?limit=25")
		b.run(chromedp.Click(chromedp.CSS("#follow-now")))
		Eventually(func() []string { return b.texts("#follow-status") }).WithTimeout(liveness).
			Should(ConsistOf("Following from now (after seq 250)…"))
		Expect(b.count("#rows tbody tr")).To(BeZero())
		s.ok(msgLines("late", 1, 2), "append", "--stream", "big", "--kind", "events")
		Eventually(func() []string { return b.texts("#rows tbody tr.new td:nth-child(2)") }).WithTimeout(liveness).
			Should(Equal([]string{"late-1", "late-2"}))
		Expect(b.texts("#rows tbody tr td:first-child")).To(Equal([]string{"251", "252"}))

		By("Stop ends it")
		b.run(chromedp.Click(chromedp.CSS("#follow")))
		Eventually(func() []string { return b.texts("#follow-status") }).WithTimeout(liveness).Should(ConsistOf("Stopped after 2 new rows."))
		dialogs, exceptions := b.reported()
		Expect(dialogs).To(BeEmpty())
		Expect(exceptions).To(BeEmpty())
	})
})
