// query export through the real binary: a folder and an S3 server on
// 127.0.0.1, incremental runs, bad destinations and flags.

package main_test

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstoretest/s3test"
)

// oneTask is one row of kind tasks.
const oneTask = `{"host":"web-1","tries":2,"at":"2026-12-01T10:00:00Z"}` + "\n"

var _ = Describe("query export", func() {
	var s *store

	BeforeEach(func() {
		s = newStore()
		s.ok(taskKinds, "kind", "apply", "-")
		s.ok(strings.Repeat(oneTask, 25), "append", "--stream", "t", "--kind", "tasks")
	})

	parts := func(dir string) []string {
		files, err := filepath.Glob(filepath.Join(dir, "stream=t", "generation=*", "part-*.parquet"))
		Expect(err).NotTo(HaveOccurred())
		for i := range files {
			files[i] = filepath.Base(files[i])
		}
		return files
	}

	It("exports to a folder, then only the rows appended since", func() {
		dir := filepath.Join(s.dir, "lake")
		rep := s.one("", "export", "--stream", "t", "--to", dir, "--rows-per-file", "10")
		Expect(rep["rows"]).To(Equal(num("25")))
		Expect(rep["highSeq"]).To(Equal(num("25")))
		Expect(parts(dir)).To(Equal([]string{
			"part-00000000000000000001-00000000000000000010.parquet",
			"part-00000000000000000011-00000000000000000020.parquet",
			"part-00000000000000000021-00000000000000000025.parquet",
		}))
		Expect(filepath.Join(dir, "stream=t", "_manifest.json")).To(BeARegularFile())

		again := s.one("", "export", "--stream", "t", "--to", dir, "--rows-per-file", "10")
		Expect(again["files"]).To(BeEmpty())
		s.ok(oneTask, "append", "--stream", "t", "--kind", "tasks")
		more := s.one("", "export", "--stream", "t", "--to", "file://"+dir, "--rows-per-file", "10")
		Expect(more["rows"]).To(Equal(num("1")))
		Expect(parts(dir)).To(HaveLen(4))
	})

	It("exports to an S3 server with credentials from the environment", func() {
		srv, err := s3test.Start("lake")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(srv.Close)
		r := runQuery(s.dir, srv.Env(), "", "--store", s.path, "export", "--stream", "t", "--to", srv.URL("wh"))
		Expect(r.code).To(Equal(0), r.stderr)
		keys, err := srv.Keys("wh/")
		Expect(err).NotTo(HaveOccurred())
		Expect(keys).To(ConsistOf("wh/stream=t/_manifest.json", "wh/stream=t/generation=1/part-00000000000000000001-00000000000000000025.parquet"))
	})

	It("refuses bad destinations and flags with a clear message, writing nothing", func() {
		r := s.run("", "export", "--stream", "t", "--to", "s3://user:secret@bkt/p")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: invalid: "))
		Expect(r.stderr).To(ContainSubstring("environment"))
		Expect(r.stderr).NotTo(ContainSubstring("secret"))

		r = s.run("", "export", "--stream", "t", "--to", "ftp://h/p")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("want s3://, file:// or a folder"))

		r = s.run("", "export", "--stream", "nope", "--to", filepath.Join(s.dir, "l2"))
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: not_found: "))

		for _, args := range [][]string{{"--stream", "t"}, {"--to", "x"}, {"--stream", "t", "--to", "x", "--format", "csv"}, {"--stream", "t", "--to", "x", "--rows-per-file", "0"}} {
			r = s.run("", append([]string{"export"}, args...)...)
			Expect(r.code).To(Equal(2), "%v: %s", args, r.stderr)
		}
		_, err := os.Stat(filepath.Join(s.dir, "x"))
		Expect(os.IsNotExist(err)).To(BeTrue())
	})

	It("partitions by a datetime column with --partition-by and keeps the scheme", func() {
		dir := filepath.Join(s.dir, "lake")
		s.ok(taskRows, "append", "--stream", "t", "--kind", "tasks")
		rep := s.one("", "export", "--stream", "t", "--to", dir, "--partition-by", "at:hour")
		Expect(rep["rows"]).To(Equal(num("29")))
		files, err := filepath.Glob(filepath.Join(dir, "stream=t", "generation=1", "at_hour=*", "part-*.parquet"))
		Expect(err).NotTo(HaveOccurred())
		for i := range files {
			files[i] = strings.TrimPrefix(files[i], filepath.Join(dir, "stream=t", "generation=1")+"/")
		}
		Expect(files).To(ConsistOf(
			"at_hour=2026-12-01T10/part-00000000000000000001-00000000000000000029.parquet",
			"at_hour=2026-12-01T11/part-00000000000000000001-00000000000000000029.parquet",
			"at_hour=2026-12-01T12/part-00000000000000000001-00000000000000000029.parquet",
			"at_hour=__HIVE_DEFAULT_PARTITION__/part-00000000000000000001-00000000000000000029.parquet",
		))

		s.ok(oneTask, "append", "--stream", "t", "--kind", "tasks")
		r := s.run("", "export", "--stream", "t", "--to", dir)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: schema_conflict: "))
		Expect(r.stderr).To(ContainSubstring("at:hour"))
		more := s.one("", "export", "--stream", "t", "--to", dir, "--partition-by", "at:hour")
		Expect(more["rows"]).To(Equal(num("1")))

		for _, bad := range []string{"host", "nope:day"} {
			r = s.run("", "export", "--stream", "t", "--to", filepath.Join(s.dir, "l3"), "--partition-by", bad)
			Expect(r.code).To(Equal(1), r.stderr)
			Expect(r.stderr).To(HavePrefix("query: invalid: "))
		}
		r = s.run("", "export", "--stream", "t", "--to", filepath.Join(s.dir, "l3"), "--partition-by", "at:week")
		Expect(r.code).To(Equal(2), r.stderr)
		Expect(r.stderr).To(ContainSubstring("hour, day or month"))
		Expect(filepath.Join(s.dir, "l3", "stream=t", "generation=1")).NotTo(BeADirectory())
	})
})
