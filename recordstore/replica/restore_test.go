package replica_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/superfly/ltx"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/replica"
	"github.com/fb46ecde/records/recordstore/sqlite"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// metas opens the store read-only with the engine and returns its streams.
func metas(ctx context.Context, store string) map[string]recordstore.Meta {
	b, err := sqlite.Open(ctx, store, sqlite.Options{ReadOnly: true, SweepInterval: -1})
	Expect(err).NotTo(HaveOccurred())
	defer b.Close()
	all, err := b.Streams(ctx, "")
	Expect(err).NotTo(HaveOccurred())
	out := map[string]recordstore.Meta{}
	for _, m := range all {
		out[m.Stream] = m
	}
	return out
}

// damage rewrites one replica file with a few bytes flipped in its middle.
func damage(ctx context.Context, url string, f *ltx.FileInfo) {
	client, err := replica.NewClient(url)
	Expect(err).NotTo(HaveOccurred())
	rc, err := client.OpenLTXFile(ctx, f.Level, f.MinTXID, f.MaxTXID, 0, 0)
	Expect(err).NotTo(HaveOccurred())
	b, err := io.ReadAll(rc)
	Expect(err).NotTo(HaveOccurred())
	Expect(rc.Close()).To(Succeed())
	Expect(len(b)).To(BeNumerically(">", ltx.HeaderSize+64))
	for i := len(b) / 2; i < len(b)/2+4; i++ {
		b[i] ^= 0x5a
	}
	Expect(client.DeleteLTXFiles(ctx, []*ltx.FileInfo{f})).To(Succeed())
	_, err = client.WriteLTXFile(ctx, f.Level, f.MinTXID, f.MaxTXID, bytesReader(b))
	Expect(err).NotTo(HaveOccurred())
}

type byteReader struct {
	b []byte
	i int
}

func bytesReader(b []byte) *byteReader { return &byteReader{b: b} }

func (r *byteReader) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.i:])
	r.i += n
	return n, nil
}

var _ = Describe("Restore", func() {
	var (
		ctx context.Context
		dir string
	)
	BeforeEach(func() {
		ctx = context.Background()
		dir = GinkgoT().TempDir()
	})

	// Each replica kind the specs run against.
	replicas := map[string]func() string{
		"a file replica": func() string { return "file://" + filepath.Join(dir, "replica") },
		"an S3 replica": func() string {
			return specS3().URL("stores/a")
		},
	}
	for name, newURL := range replicas {
		Context("from "+name, func() {
			var url string
			var src *source
			BeforeEach(func() {
				url = newURL()
				src = newSource(ctx, dir, url)
				src.round(ctx, 10, "s1")
				src.round(ctx, 5, "s1", "s2")
				src.round(ctx, 7, "s2")
			})

			It("restores the newest state into a store with no live file, proven and 0600", func() {
				want := metas(ctx, src.store)
				dst := filepath.Join(dir, "dst", "records.sqlite")
				res, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: url})
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Replaced).To(BeFalse())
				Expect(res.Report.Streams).To(HaveLen(2))
				fi, err := os.Stat(sqlite.LivePath(dst))
				Expect(err).NotTo(HaveOccurred())
				Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o600)))
				got := metas(ctx, dst)
				Expect(got).To(HaveLen(2))
				for id, m := range want {
					Expect(got[id].HighSeq).To(Equal(m.HighSeq), id)
					Expect(got[id].Total).To(Equal(m.Total), id)
				}
				entries, err := os.ReadDir(filepath.Dir(sqlite.LivePath(dst)))
				Expect(err).NotTo(HaveOccurred())
				for _, e := range entries {
					Expect(e.Name()).NotTo(ContainSubstring(".restore-"), "no staging file is left")
				}
			})

			It("refuses a hole in the history (a middle file deleted) with ErrGap, and replaces nothing", func() {
				dst := filepath.Join(dir, "dst", "records.sqlite")
				_, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: url})
				Expect(err).NotTo(HaveOccurred())
				files := level0(ctx, url)
				Expect(len(files)).To(BeNumerically(">=", 3))
				client, err := replica.NewClient(url)
				Expect(err).NotTo(HaveOccurred())
				Expect(client.DeleteLTXFiles(ctx, files[1:2])).To(Succeed())
				before := fingerprint(filepath.Join(dir, "dst"))

				_, err = replica.Restore(ctx, dst, replica.RestoreOptions{From: url, Force: true})
				Expect(err).To(MatchError(replica.ErrGap))
				Expect(recordstore.Code(err)).To(Equal("gap"))
				Expect(fingerprint(filepath.Join(dir, "dst"))).To(Equal(before))
				Expect(level0(ctx, url)).To(HaveLen(len(files)-1), "the replica is not trimmed")

				fresh := filepath.Join(dir, "fresh", "records.sqlite")
				_, err = replica.Restore(ctx, fresh, replica.RestoreOptions{From: url})
				Expect(err).To(MatchError(replica.ErrGap))
				Expect(sqlite.LivePath(fresh)).NotTo(BeAnExistingFile())

				By("a point before the hole is still restorable")
				res, err := replica.Restore(ctx, fresh, replica.RestoreOptions{From: url, TXID: uint64(files[0].MaxTXID)})
				Expect(err).NotTo(HaveOccurred())
				Expect(res.TXID).To(Equal(uint64(files[0].MaxTXID)))
			})

			It("refuses a replica file whose bytes were flipped with ErrChecksum, and replaces nothing", func() {
				dst := filepath.Join(dir, "dst", "records.sqlite")
				_, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: url})
				Expect(err).NotTo(HaveOccurred())
				files := level0(ctx, url)
				damage(ctx, url, files[len(files)-1])
				before := fingerprint(filepath.Join(dir, "dst"))

				_, err = replica.Restore(ctx, dst, replica.RestoreOptions{From: url, Force: true})
				Expect(err).To(MatchError(replica.ErrChecksum))
				Expect(recordstore.Code(err)).To(Equal("checksum"))
				Expect(fingerprint(filepath.Join(dir, "dst"))).To(Equal(before))
			})

			It("restores from one file without the compactor, and refuses that file flipped with ErrChecksum", func() {
				files := level0(ctx, url)
				one := files[0]
				Expect(one.MinTXID).To(BeEquivalentTo(1))
				dst := filepath.Join(dir, "one", "records.sqlite")
				res, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: url, TXID: uint64(one.MaxTXID)})
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Files).To(Equal(1))
				Expect(res.TXID).To(Equal(uint64(one.MaxTXID)))
				Expect(res.Report.Streams).NotTo(BeEmpty())

				damage(ctx, url, one)
				before := fingerprint(filepath.Join(dir, "one"))
				_, err = replica.Restore(ctx, dst, replica.RestoreOptions{From: url, TXID: uint64(one.MaxTXID), Force: true})
				Expect(err).To(MatchError(replica.ErrChecksum))
				Expect(fingerprint(filepath.Join(dir, "one"))).To(Equal(before))
			})
		})
	}

	Context("from a file replica", func() {
		var url string
		var src *source
		BeforeEach(func() {
			url = "file://" + filepath.Join(dir, "replica")
			src = newSource(ctx, dir, url)
		})

		It("restores to a txid and to a time", func() {
			src.round(ctx, 3, "s1")
			first := level0(ctx, url)
			mid := first[len(first)-1].MaxTXID
			at := time.Now()
			Eventually(time.Now).WithTimeout(time.Second).Should(BeTemporally(">", at.Add(5*time.Millisecond)))
			src.round(ctx, 4, "s1", "s2")

			dst := filepath.Join(dir, "at-txid", "records.sqlite")
			res, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: url, TXID: uint64(mid)})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.TXID).To(Equal(uint64(mid)))
			got := metas(ctx, dst)
			Expect(got).To(HaveLen(1))
			Expect(got["s1"].HighSeq).To(Equal(int64(3)))

			when := filepath.Join(dir, "at-time", "records.sqlite")
			res, err = replica.Restore(ctx, when, replica.RestoreOptions{From: url, At: at})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.TXID).To(Equal(uint64(mid)))
			Expect(metas(ctx, when)).To(HaveLen(1))

			_, err = replica.Restore(ctx, filepath.Join(dir, "both", "records.sqlite"), replica.RestoreOptions{From: url, At: at, TXID: 1})
			Expect(err).To(MatchError(recordstore.ErrInvalid))

			latest := filepath.Join(dir, "latest", "records.sqlite")
			_, err = replica.Restore(ctx, latest, replica.RestoreOptions{From: url})
			Expect(err).NotTo(HaveOccurred())
			Expect(metas(ctx, latest)["s1"].HighSeq).To(Equal(int64(7)))

			_, err = replica.Restore(ctx, filepath.Join(dir, "far", "records.sqlite"), replica.RestoreOptions{From: url, TXID: uint64(mid) + 1000})
			Expect(err).To(MatchError(recordstore.ErrNotFound))
		})

		It("refuses an existing store without force, and a store another process owns even with force", func() {
			src.round(ctx, 3, "s1")
			dst := filepath.Join(dir, "dst", "records.sqlite")
			_, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: url})
			Expect(err).NotTo(HaveOccurred())
			before := fingerprint(filepath.Join(dir, "dst"))
			_, err = replica.Restore(ctx, dst, replica.RestoreOptions{From: url})
			Expect(err).To(MatchError(replica.ErrExists))
			Expect(recordstore.Code(err)).To(Equal("exists"))

			paths := owner.PathsFor(dst)
			release, err := owner.Exclusive(paths.Lock, "")
			Expect(err).NotTo(HaveOccurred())
			_, err = replica.Restore(ctx, dst, replica.RestoreOptions{From: url, Force: true})
			Expect(release()).To(Succeed())
			Expect(err).To(MatchError(replica.ErrInUse))
			Expect(recordstore.Code(err)).To(Equal("in_use"))
			Expect(fingerprint(filepath.Join(dir, "dst"))).To(Equal(before))

			res, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: url, Force: true})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Replaced).To(BeTrue())
		})

		It("replaces a store a crashed owner left with a -wal: the old -wal is not replayed onto the restored file", func() {
			src.round(ctx, 3, "s1")
			dst := filepath.Join(dir, "dst", "records.sqlite")
			_, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: url})
			Expect(err).NotTo(HaveOccurred())
			live := sqlite.LivePath(dst)

			By("an owner appends, and dies before any checkpoint: its -wal stays")
			b, err := sqlite.Open(ctx, dst, sqlite.Options{SweepInterval: -1})
			Expect(err).NotTo(HaveOccurred())
			_, err = b.Append(ctx, "s9", eventKind.Name, []recordstore.Row{{"n": int64(1)}, {"n": int64(2)}})
			Expect(err).NotTo(HaveOccurred())
			wal, err := os.ReadFile(live + "-wal")
			Expect(err).NotTo(HaveOccurred())
			Expect(wal).NotTo(BeEmpty())
			mainFile, err := os.ReadFile(live)
			Expect(err).NotTo(HaveOccurred())
			Expect(b.Close()).To(Succeed())
			Expect(os.WriteFile(live, mainFile, 0o600)).To(Succeed())
			Expect(os.WriteFile(live+"-wal", wal, 0o600)).To(Succeed())
			Expect(live + "-wal").To(BeAnExistingFile())

			_, err = replica.Restore(ctx, dst, replica.RestoreOptions{From: url, Force: true})
			Expect(err).NotTo(HaveOccurred())
			got := metas(ctx, dst)
			Expect(got).NotTo(HaveKey("s9"))
			Expect(got["s1"].HighSeq).To(Equal(int64(3)))
			_, err = sqlite.CheckFile(ctx, live)
			Expect(err).NotTo(HaveOccurred())
		})

		It("refuses a copy that fails the engine's checks with ErrCheckFailed", func() {
			src.round(ctx, 3, "s1")
			raw, err := sql.Open("sqlite", sqlite.FileURI(src.live, nil))
			Expect(err).NotTo(HaveOccurred())
			_, err = raw.ExecContext(ctx, `UPDATE record_streams SET total = total + 1 WHERE id = 's1'`)
			Expect(err).NotTo(HaveOccurred())
			Expect(raw.Close()).To(Succeed())
			Expect(src.db.SyncAndWait(ctx)).To(Succeed())

			dst := filepath.Join(dir, "dst", "records.sqlite")
			_, err = replica.Restore(ctx, dst, replica.RestoreOptions{From: url})
			Expect(err).To(MatchError(replica.ErrCheckFailed))
			Expect(err.Error()).To(ContainSubstring("records 4 rows"))
			Expect(sqlite.LivePath(dst)).NotTo(BeAnExistingFile())
		})

		It("refuses a copy the caller's check refuses with ErrCheckFailed", func() {
			src.round(ctx, 3, "s1")
			dst := filepath.Join(dir, "dst", "records.sqlite")
			_, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: url, Check: func(_ context.Context, staged string) error {
				Expect(staged).To(BeAnExistingFile())
				return errors.New("not this store")
			}})
			Expect(err).To(MatchError(replica.ErrCheckFailed))
			Expect(err.Error()).To(ContainSubstring("not this store"))
			Expect(sqlite.LivePath(dst)).NotTo(BeAnExistingFile())
		})

		It("refuses an empty replica with not_found and bad options with invalid", func() {
			dst := filepath.Join(dir, "dst", "records.sqlite")
			_, err := replica.Restore(ctx, dst, replica.RestoreOptions{From: "file://" + filepath.Join(dir, "empty")})
			Expect(err).To(MatchError(recordstore.ErrNotFound))
			_, err = replica.Restore(ctx, dst, replica.RestoreOptions{From: "http://x/y"})
			Expect(err).To(MatchError(replica.ErrBadURL))
			Expect(sqlite.LivePath(dst)).NotTo(BeAnExistingFile())
		})
	})
})
