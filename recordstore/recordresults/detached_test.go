// Open on a store whose owner runs a build of another catalog version: a
// child process owns the store claiming the next catalog version, and this
// process, opening it with Open, must come out detached — reads fail with
// catalog_version (in Go and over HTTP), writes reach the child through the
// spool and come back with its exact result.

package recordresults_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/recordresults"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/sqlite"
	"github.com/fb46ecde/records/recordstore/submitonly"
)

// otherCatalogVersion is the catalog version the owner child claims.
const otherCatalogVersion = sqlite.CatalogVersion + 1

// catalogOwnerRole is the child role (mpChildEnv) of runCatalogOwner.
const catalogOwnerRole = "catalog-owner"

// runCatalogOwner owns the store at path as a build of otherCatalogVersion
// would: owner.Open with that version, so that its state file says so, over
// the SQLite backend (whose live file stays this build's). It prints
// "ready <pid>", then "entry <json>" for each entry of every spooled batch
// it applies, and closes the store when its input ends.
func runCatalogOwner(ctx context.Context, path string) (err error) {
	s, err := owner.Open(ctx, owner.Options[*sqlite.Backend]{
		Path:           path,
		CatalogVersion: otherCatalogVersion,
		Build:          catalogOwnerRole,
		StartWait:      time.Minute,
		Events: owner.Events{Batch: func(res recordstore.BatchResult) {
			for _, e := range res.Entries {
				line, err := json.Marshal(e)
				if err != nil {
					line = fmt.Appendf(nil, "%q", err.Error())
				}
				mpSay("entry %s", line)
			}
		}},
		Open: func(ctx context.Context, readOnly bool, submit owner.Submitter) (*sqlite.Backend, error) {
			return sqlite.Open(ctx, path, sqlite.Options{ReadOnly: readOnly, Submit: submit, SweepInterval: -1})
		},
	})
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	if s.Role() != owner.RoleOwner {
		return fmt.Errorf("opened the store as %s, want %s", s.Role(), owner.RoleOwner)
	}
	mpSay("ready %d", os.Getpid())
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// catalogOwner is a running runCatalogOwner child.
type catalogOwner struct {
	session *gexec.Session
	stdin   io.WriteCloser
}

// startCatalogOwner starts a catalog owner child on the store at path and
// waits until it owns it. It is stopped at cleanup, killed if need be.
func startCatalogOwner(path string) *catalogOwner {
	GinkgoHelper()
	exe, err := os.Executable()
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), mpChildEnv+"="+catalogOwnerRole, mpStoreEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	session, err := gexec.Start(cmd, nil, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	c := &catalogOwner{session: session, stdin: stdin}
	DeferCleanup(func() {
		_ = c.stdin.Close()
		if c.session.Wait(apiWait).ExitCode() == -1 {
			c.session.Kill().Wait(apiWait)
		}
	})
	Eventually(session.Out, apiWait).Should(gbytes.Say(`ready \d+\n`))
	return c
}

// entries returns the entry results the child printed so far.
func (c *catalogOwner) entries() []recordstore.EntryResult {
	var out []recordstore.EntryResult
	for _, line := range strings.Split(string(c.session.Out.Contents()), "\n") {
		data, ok := strings.CutPrefix(line, "entry ")
		if !ok {
			continue
		}
		var e recordstore.EntryResult
		Expect(json.Unmarshal([]byte(data), &e)).To(Succeed(), line)
		out = append(out, e)
	}
	return out
}

// stop closes the child's input and checks that it closed its store and
// exited cleanly.
func (c *catalogOwner) stop() {
	GinkgoHelper()
	Expect(c.stdin.Close()).To(Succeed())
	Eventually(c.session, apiWait).Should(gexec.Exit(0))
}

// expectCatalogVersion checks that err is a detached process's refusal to
// read.
func expectCatalogVersion(err error) {
	GinkgoHelper()
	Expect(errors.Is(err, owner.ErrCatalogVersion)).To(BeTrue(), "%v", err)
	var ce *owner.CatalogVersionError
	Expect(errors.As(err, &ce)).To(BeTrue(), "%v", err)
	Expect(*ce).To(Equal(owner.CatalogVersionError{Owner: otherCatalogVersion, Build: sqlite.CatalogVersion}))
	Expect(recordstore.Code(err)).To(Equal("catalog_version"))
}

// msgRows returns one apiEvents row per msg.
func msgRows(msgs ...string) []recordstore.Row {
	rows := make([]recordstore.Row, len(msgs))
	for i, m := range msgs {
		rows[i] = recordstore.Row{"msg": m}
	}
	return rows
}

var _ = Describe("Open on a store owned by a build of another catalog version", Label("integration"), func() {
	var (
		path  string
		child *catalogOwner
		st    *records.Store
	)

	BeforeEach(func(ctx SpecContext) {
		path = filepath.Join(GinkgoT().TempDir(), "store", "records.sqlite")
		child = startCatalogOwner(path)
		var err error
		st, err = records.Open(ctx, path, records.Options{SweepInterval: -1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = st.Close() })
	})

	It("opens detached: reads fail with catalog_version, writes come back with the owner's exact result", func(ctx SpecContext) {
		Expect(st.Role()).To(Equal(owner.RoleDetached))
		status, err := st.Status(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(status.Role).To(Equal(owner.RoleDetached))
		Expect(status.CatalogVersion).To(Equal(otherCatalogVersion))
		Expect(status.PID).To(Equal(child.session.Command.Process.Pid))

		b := st.Backend()
		Expect(b).To(BeAssignableToTypeOf(&submitonly.Backend{}), "the submit-only backend, not the SQLite one")
		_, err = b.Meta(ctx, "s")
		expectCatalogVersion(err)
		_, err = b.Scan(ctx, "s", recordstore.ScanOptions{})
		expectCatalogVersion(err)
		_, err = b.Streams(ctx, "")
		expectCatalogVersion(err)
		_, err = b.Kinds(ctx)
		expectCatalogVersion(err)
		_, err = b.Kind(ctx, apiEvents.Name)
		expectCatalogVersion(err)

		_, err = b.Append(ctx, "s", apiEvents.Name, msgRows("early"))
		Expect(errors.Is(err, recordstore.ErrNotFound)).To(BeTrue(), "a kind not declared here is refused: %v", err)
		expectCatalogVersion(err)
		Expect(child.entries()).To(BeEmpty(), "the refused append reached the owner")

		reserved := apiEvents
		reserved.Name = "record_events"
		_, err = b.DeclareKind(ctx, reserved)
		Expect(errors.Is(err, recordstore.ErrInvalid)).To(BeTrue(), "a name the SQLite backend reserves: %v", err)
		var refused *recordstore.BatchError
		Expect(errors.As(err, &refused)).To(BeFalse(), "refused here, not by the owner: %v", err)
		Expect(child.entries()).To(BeEmpty(), "the reserved name reached the owner")

		declared, err := b.DeclareKind(ctx, apiEvents)
		Expect(err).NotTo(HaveOccurred())
		Expect(declared).To(Equal(recordstore.KindCreated))
		first, err := b.Append(ctx, "s", apiEvents.Name, msgRows("a", "b", "c"))
		Expect(err).NotTo(HaveOccurred())
		Expect(first).To(Equal(recordstore.AppendResult{Stream: "s", Kind: apiEvents.Name, From: 1, To: 3, Appended: 3}))
		second, err := b.Append(ctx, "s", apiEvents.Name, msgRows("d"))
		Expect(err).NotTo(HaveOccurred())
		Expect(second).To(Equal(recordstore.AppendResult{Stream: "s", Kind: apiEvents.Name, From: 4, To: 4, Appended: 1}))
		sealed, err := b.Seal(ctx, "s")
		Expect(err).NotTo(HaveOccurred())
		Expect(sealed.Sealed).To(BeTrue())
		Expect(sealed.HighSeq).To(BeEquivalentTo(4))

		Eventually(child.entries, apiWait).Should(HaveLen(4))
		applied := child.entries()
		Expect(applied[0]).To(Equal(recordstore.EntryResult{Op: recordstore.OpDeclare, Status: recordstore.KindCreated}))
		Expect(applied[1]).To(Equal(recordstore.EntryResult{Op: recordstore.OpAppend, Stream: "s", Append: &first}))
		Expect(applied[2]).To(Equal(recordstore.EntryResult{Op: recordstore.OpAppend, Stream: "s", Append: &second}))
		Expect(applied[3].Op).To(Equal(recordstore.OpSeal))
		Expect(*applied[3].Meta).To(Equal(sealed))

		// The rows are in the live file the child writes, as this build
		// reads it.
		r, err := sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(r.Close)
		recs, err := r.Scan(ctx, "s", recordstore.ScanOptions{})
		Expect(err).NotTo(HaveOccurred())
		var msgs []string
		for _, rec := range recs {
			msgs = append(msgs, rec.Values["msg"].(string))
		}
		Expect(msgs).To(Equal([]string{"a", "b", "c", "d"}))

		Expect(st.Close()).To(Succeed())
		child.stop()
	})

	It("serves the HTTP API: every read answers 503 with code catalog_version, health and status answer", func(ctx SpecContext) {
		_, err := st.Backend().DeclareKind(ctx, apiEvents)
		Expect(err).NotTo(HaveOccurred())
		_, err = st.Backend().Append(ctx, "s", apiEvents.Name, msgRows("a"))
		Expect(err).NotTo(HaveOccurred())
		srv := httptest.NewServer(recordresults.Handler(st.Backend(), recordresults.HandlerOptions{Status: st.Status}))
		DeferCleanup(srv.Close)
		get := func(path string) (int, string) {
			GinkgoHelper()
			resp, err := apiClient.Get(srv.URL + path)
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			Expect(err).NotTo(HaveOccurred())
			return resp.StatusCode, string(body)
		}

		for _, p := range []string{"/api/v1/streams", "/api/v1/streams?kind=events", "/api/v1/streams/s",
			"/api/v1/streams/s/rows", "/api/v1/streams/s/follow", "/api/v1/streams/s/follow?after=1", "/"} {
			status, body := get(p)
			Expect(status).To(Equal(http.StatusServiceUnavailable), "%s: %s", p, body)
			code, msg := apiError(body)
			Expect(code).To(Equal("catalog_version"), p)
			Expect(msg).To(ContainSubstring("detached"), p)
			Expect(msg).To(ContainSubstring(fmt.Sprintf("the owner uses catalog version %d, this build %d", otherCatalogVersion, sqlite.CatalogVersion)), p)
		}

		status, body := get("/healthz")
		Expect(status).To(Equal(http.StatusOK), body)
		status, body = get("/api/v1/status")
		Expect(status).To(Equal(http.StatusOK), body)
		var printed recordresults.Status
		Expect(json.Unmarshal([]byte(body), &printed)).To(Succeed())
		Expect(printed.CatalogVersion).To(Equal(otherCatalogVersion))
		Expect(printed.PID).To(Equal(child.session.Command.Process.Pid))

		Expect(st.Close()).To(Succeed())
		child.stop()
	})
})
