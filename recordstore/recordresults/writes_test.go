// The Store's one-call writes (Append with a declaration, Mutate,
// DeclareKinds, AppendFrom) from a process that does not own the store: a
// child process owns it, this one writes through the spool — waiting, not
// waiting, and while the owner is stopped (SIGSTOP).

package recordresults_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/records"
	"github.com/fb46ecde/records/recordstore/spool"
	"github.com/fb46ecde/records/recordstoretest"
)

// plainOwnerRole is the child role (mpChildEnv) of runPlainOwner.
const plainOwnerRole = "plain-owner"

// runPlainOwner owns the store at path, prints "ready <pid>" and closes
// the store when its input ends.
func runPlainOwner(ctx context.Context, path string) (err error) {
	s, err := mpOpenAs(ctx, path, mpOptions(), owner.RoleOwner)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	mpSay("ready %d", os.Getpid())
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}

// startPlainOwner starts a runPlainOwner child on path and waits until it
// owns the store; it is stopped (its input closed) at cleanup.
func startPlainOwner(path string) *gexec.Session {
	GinkgoHelper()
	exe, err := os.Executable()
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(exe, "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), mpChildEnv+"="+plainOwnerRole, mpStoreEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	Expect(err).NotTo(HaveOccurred())
	session, err := gexec.Start(cmd, nil, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		_ = session.Command.Process.Signal(syscall.SIGCONT)
		_ = stdin.Close()
		if session.Wait(apiWait).ExitCode() == -1 {
			session.Kill().Wait(apiWait)
		}
	})
	Eventually(session.Out, apiWait).Should(gbytes.Say(`ready \d+\n`))
	return session
}

var (
	eventsKind = recordstore.Kind{Name: "events", Columns: []recordstore.Column{{Name: "msg", Type: recordstore.TypeString}}}
	jobsKind   = recordstore.Kind{Name: "jobs", Columns: []recordstore.Column{{Name: "id", Type: recordstore.TypeInteger}}, Key: []string{"id"}}
)

// rowSlice is a RowReader over rows, failing with err (when set) after
// them.
type rowSlice struct {
	rows []recordstore.Row
	err  error
}

func (r *rowSlice) Next() (recordstore.Row, error) {
	if len(r.rows) == 0 {
		if r.err != nil {
			return nil, r.err
		}
		return nil, io.EOF
	}
	row := r.rows[0]
	r.rows = r.rows[1:]
	return row, nil
}

// jobRows are rows of jobs with these ids.
func jobRows(ids ...int) []recordstore.Row {
	out := make([]recordstore.Row, len(ids))
	for i, id := range ids {
		out[i] = recordstore.Row{"id": id}
	}
	return out
}

var _ = Describe("the Store's writes", func() {
	var ctx context.Context

	BeforeEach(func() { ctx = context.Background() })

	// incoming lists the batches waiting in the store's spool.
	incoming := func(st *records.Store) []spool.BatchName {
		names, err := st.Spool().List(ctx, spool.StateIncoming)
		Expect(err).NotTo(HaveOccurred())
		return names
	}

	Describe("from a process that does not own the store", func() {
		var (
			st    *records.Store
			child *gexec.Session
		)

		BeforeEach(func() {
			path := filepath.Join(GinkgoT().TempDir(), "records.sqlite")
			child = startPlainOwner(path)
			var err error
			st, err = mpOpenAs(ctx, path, mpOptions(), owner.RoleNonOwner)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(st.Close)
			_, err = st.DeclareKinds(ctx, []recordstore.Kind{eventsKind}, owner.WriteOptions{})
			Expect(err).NotTo(HaveOccurred())
		})

		It("appends with the kind's declaration in the rows' own batch", func() {
			res, err := st.Append(ctx, "j", "jobs", jobRows(1, 2), owner.AppendOptions{Declare: &jobsKind})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Spooled).To(BeTrue())
			Expect(res.AppendResult).To(Equal(recordstore.AppendResult{Stream: "j", Kind: "jobs", From: 1, To: 2, Appended: 2}))
			out, err := st.Await(ctx, res.Batch)
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Entries).To(HaveLen(2), "the declaration and the append")
			Expect(out.Entries[0].Status).To(Equal(recordstore.KindCreated))
			Eventually(func() error { _, err := st.Backend().Kind(ctx, "jobs"); return err }, apiWait).Should(Succeed())
		})

		It("refuses, publishing nothing, a declaration that conflicts with the catalog, and rows the stream would refuse", func() {
			Eventually(func() []spool.BatchName { return incoming(st) }, apiWait).Should(BeEmpty(), "the declaration of events has left incoming/")
			changed := eventsKind
			changed.Columns = []recordstore.Column{{Name: "msg", Type: recordstore.TypeInteger}}
			_, err := st.Append(ctx, "e", "events", []recordstore.Row{{"msg": 1}}, owner.AppendOptions{Declare: &changed})
			Expect(err).To(MatchError(recordstore.ErrSchemaConflict))

			_, err = st.Append(ctx, "j", "jobs", jobRows(1, 1), owner.AppendOptions{Declare: &jobsKind, WriteOptions: owner.WriteOptions{NoWait: true}})
			Expect(err).To(MatchError(recordstore.ErrInvalid), "a key repeated")
			Expect(err).To(MatchError(ContainSubstring("rows 1 and 2 have the same key")))

			_, err = st.Mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "nope"}, owner.WriteOptions{NoWait: true})
			Expect(err).To(MatchError(recordstore.ErrNotFound))

			_, err = st.DeclareKinds(ctx, []recordstore.Kind{jobsKind, changed}, owner.WriteOptions{})
			Expect(err).To(MatchError(recordstore.ErrSchemaConflict))
			_, err = st.Backend().Kind(ctx, "jobs")
			Expect(err).To(MatchError(recordstore.ErrNotFound), "no kind of the set is declared")
			Expect(incoming(st)).To(BeEmpty())
		})

		It("with NoWait returns the batch at once, and Await gives its outcome", func() {
			res, err := st.Append(ctx, "e", "events", []recordstore.Row{{"msg": "a"}}, owner.AppendOptions{WriteOptions: owner.WriteOptions{NoWait: true}})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Pending).To(BeTrue())
			Expect(spool.ValidID(res.Batch)).To(BeTrue())
			out, err := st.Await(ctx, res.Batch)
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Err()).NotTo(HaveOccurred())

			sealed, err := st.Mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "e"}, owner.WriteOptions{NoWait: true})
			Expect(err).NotTo(HaveOccurred())
			Expect(sealed.Pending).To(BeTrue())
			Expect(sealed.Meta).To(BeNil())
			out, err = st.Await(ctx, sealed.Batch)
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Entries).To(HaveLen(1))
			Expect(out.Entries[0].Meta.Sealed).To(BeTrue())

			declared, err := st.DeclareKinds(ctx, []recordstore.Kind{eventsKind, jobsKind}, owner.WriteOptions{NoWait: true})
			Expect(err).NotTo(HaveOccurred())
			Expect(declared.Pending).To(BeTrue())
			out, err = st.Await(ctx, declared.Batch)
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Entries).To(HaveLen(2), "every kind in one batch")
			Expect([]recordstore.KindStatus{out.Entries[0].Status, out.Entries[1].Status}).To(Equal([]recordstore.KindStatus{recordstore.KindUnchanged, recordstore.KindCreated}))
		})

		It("ends each write's wait with a pending error naming its batch while the owner is stopped, and the owner applies it once resumed", func() {
			_, err := st.Append(ctx, "e", "events", []recordstore.Row{{"msg": "a"}}, owner.AppendOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(recordstoretest.StopProcess(child.Command.Process.Pid)).To(Succeed())
			pending := func(err error) string {
				GinkgoHelper()
				var pe *owner.PendingError
				Expect(errors.As(err, &pe)).To(BeTrue(), "got %v", err)
				return pe.BatchID
			}
			bounded := func(write func(ctx context.Context) error) string {
				GinkgoHelper()
				wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
				return pending(write(wctx))
			}
			ids := []string{
				bounded(func(ctx context.Context) error {
					_, err := st.Mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpExpire, Stream: "e", TTL: time.Hour}, owner.WriteOptions{})
					return err
				}),
				bounded(func(ctx context.Context) error {
					_, err := st.DeclareKinds(ctx, []recordstore.Kind{jobsKind}, owner.WriteOptions{})
					return err
				}),
				bounded(func(ctx context.Context) error {
					_, err := st.Append(ctx, "j", "jobs", jobRows(1), owner.AppendOptions{Declare: &jobsKind})
					return err
				}),
			}
			Expect(child.Command.Process.Signal(syscall.SIGCONT)).To(Succeed())
			for _, id := range ids {
				out, err := st.Await(ctx, id)
				Expect(err).NotTo(HaveOccurred())
				Expect(out.Err()).NotTo(HaveOccurred(), "batch %s", id)
			}
			m, err := st.Backend().Meta(ctx, "e")
			Expect(err).NotTo(HaveOccurred())
			Expect(m.ExpiresAt).NotTo(BeNil(), "the expire was applied")
		})

		It("appends from a row source in batches, each all or nothing, saying what stayed when it stops", func() {
			res, err := st.AppendFrom(ctx, "j", &jobsKind, &rowSlice{rows: jobRows(1, 2, 3, 4, 5)}, owner.BulkOptions{BatchRows: 2, Declare: true})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Batches).To(Equal(3))
			Expect(res.Spooled).To(BeTrue())
			Expect(res.AppendResult).To(Equal(recordstore.AppendResult{Stream: "j", Kind: "jobs", From: 1, To: 5, Appended: 5}))

			By("a key repeated inside a batch refuses that batch whole")
			_, err = st.AppendFrom(ctx, "j2", &jobsKind, &rowSlice{rows: jobRows(1, 2, 3, 3, 4)}, owner.BulkOptions{BatchRows: 2})
			var be *owner.BulkError
			Expect(errors.As(err, &be)).To(BeTrue(), "got %v", err)
			Expect(err).To(MatchError(recordstore.ErrInvalid))
			Expect(be.Done.Batches).To(Equal(1))
			Expect(be.Done.Appended).To(Equal(int64(2)))
			Expect(err.Error()).To(HaveSuffix("(applied: 2 rows in 1 batch)"))

			By("a source error applies the rows read before it, then stops with that error")
			bad := fmt.Errorf("%w: input line 4: not a row", recordstore.ErrInvalid)
			_, err = st.AppendFrom(ctx, "j3", &jobsKind, &rowSlice{rows: jobRows(1, 2, 3), err: bad}, owner.BulkOptions{BatchRows: 2})
			Expect(err).To(MatchError(bad))
			Expect(errors.As(err, &be)).To(BeTrue())
			Expect(be.Done.Batches).To(Equal(2))
			Expect(be.Done.Appended).To(Equal(int64(3)))
		})
	})

	Describe("in the process that owns the store", func() {
		var st *records.Store

		BeforeEach(func() {
			var err error
			st, err = mpOpenAs(ctx, filepath.Join(GinkgoT().TempDir(), "records.sqlite"), mpOptions(), owner.RoleOwner)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(st.Close)
		})

		It("declares and appends at once, NoWait or not, and appends from a row source", func() {
			res, err := st.Append(ctx, "j", "jobs", jobRows(1, 2), owner.AppendOptions{Declare: &jobsKind, WriteOptions: owner.WriteOptions{NoWait: true}})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Written).To(Equal(owner.Written{}), "applied here")
			Expect(res.To).To(Equal(int64(2)))

			bulk, err := st.AppendFrom(ctx, "j", &jobsKind, &rowSlice{rows: jobRows(2, 3, 4)}, owner.BulkOptions{BatchRows: 2})
			Expect(err).NotTo(HaveOccurred())
			Expect(bulk.Spooled).To(BeFalse())
			Expect(bulk.Batches).To(Equal(2))
			Expect(bulk.Appended).To(Equal(int64(2)))
			Expect(bulk.Skipped).To(Equal(int64(1)), "key 2 is stored already")

			m, err := st.Mutate(ctx, recordstore.BatchEntry{Op: recordstore.OpSeal, Stream: "j"}, owner.WriteOptions{NoWait: true})
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Meta.Sealed).To(BeTrue())
			Expect(incoming(st)).To(BeEmpty())
		})
	})
})
