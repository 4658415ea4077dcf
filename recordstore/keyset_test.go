// KeySet: a key repeated among the rows of one append is found the same
// way whether the keys stay in memory or go to sorted runs in a file, and
// the file is gone once the set is closed.

package recordstore_test

import (
	"fmt"
	"math/rand/v2"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/recordstore"
)

var _ = Describe("KeySet", func() {
	kind := &recordstore.Kind{Name: "kv", Key: []string{"k", "n"}, Columns: []recordstore.Column{
		{Name: "k", Type: recordstore.TypeString}, {Name: "n", Type: recordstore.TypeInteger}, {Name: "v", Type: recordstore.TypeString}}}

	// inOrder is the answer of a check row by row: the first row whose key
	// an earlier row has, and that earlier row (-1, -1 when none).
	inOrder := func(rows []recordstore.Values) (int, int) {
		seen := map[string]int{}
		for i, v := range rows {
			key := string(kind.AppendRowKey(nil, v))
			if j, ok := seen[key]; ok {
				return j, i
			}
			seen[key] = i
		}
		return -1, -1
	}

	// run adds rows to a set whose memory is memory bytes (0: the
	// default), in dir, and returns the error of Add or else Check, and
	// the files left in dir while the set was open.
	run := func(rows []recordstore.Values, memory int, dir string) ([]os.DirEntry, error) {
		s := recordstore.NewKeySet(kind, dir)
		if memory > 0 {
			recordstore.SetKeySetMemory(s, memory)
		}
		defer func() { Expect(s.Close()).To(Succeed()) }()
		for i, v := range rows {
			if err := s.Add(i, v); err != nil {
				return nil, err
			}
		}
		err := s.Check()
		if err == nil {
			Expect(s.Check()).To(Succeed(), "a second Check gives the same answer")
		} else {
			Expect(s.Check()).To(MatchError(err.Error()), "a second Check gives the same answer")
		}
		left, rerr := os.ReadDir(dir)
		Expect(rerr).NotTo(HaveOccurred())
		return left, err
	}

	rowsOf := func(r *rand.Rand, n, distinct int) []recordstore.Values {
		rows := make([]recordstore.Values, n)
		for i := range rows {
			x := r.IntN(distinct)
			rows[i] = recordstore.Values{fmt.Sprintf("key-%d", x%97), int64(x / 97), "v"}
		}
		return rows
	}

	It("is nil for a kind without a key, and accepts every row", func() {
		s := recordstore.NewKeySet(&recordstore.Kind{Name: "plain", Columns: kind.Columns}, GinkgoT().TempDir())
		Expect(s).To(BeNil())
		Expect(s.Add(0, recordstore.Values{"a", int64(1), "v"})).To(Succeed())
		Expect(s.Add(1, recordstore.Values{"a", int64(1), "v"})).To(Succeed())
		Expect(s.Check()).To(Succeed())
		Expect(s.Close()).To(Succeed())
	})

	It("refuses a repeated key at once while the keys are in memory, and makes no file", func() {
		dir := GinkgoT().TempDir()
		rows := []recordstore.Values{{"a", int64(1), "x"}, {"b", int64(1), "y"}, {"a", int64(2), "z"}, {"b", int64(1), "w"}}
		_, err := run(rows, 0, dir)
		Expect(err).To(MatchError(recordstore.ErrInvalid))
		Expect(err).To(MatchError(ContainSubstring("kind kv: rows 2 and 4 have the same key")))
		Expect(os.ReadDir(dir)).To(BeEmpty())
	})

	It("finds the same pair as a check in row order once the keys are in the file", func() {
		r := rand.New(rand.NewPCG(29, 2))
		for round := range 40 {
			n := 200 + r.IntN(3000)
			rows := rowsOf(r, n, n*4)   // few repeats, anywhere
			memory := 64 + r.IntN(4096) // from one key a run to many
			dir := GinkgoT().TempDir()
			first, second := inOrder(rows)
			left, err := run(rows, memory, dir)
			if second < 0 {
				Expect(err).NotTo(HaveOccurred(), "round %d", round)
			} else {
				Expect(err).To(MatchError(recordstore.ErrInvalid), "round %d", round)
				Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("kind kv: rows %d and %d have the same key", first+1, second+1))), "round %d", round)
			}
			Expect(left).To(BeEmpty(), "the file is unlinked at once")
			Expect(os.ReadDir(dir)).To(BeEmpty())
		}
	})

	It("takes a key repeated in the map and the runs, and one repeated three times, by its first two rows", func() {
		rows := make([]recordstore.Values, 0, 5000)
		for i := range 5000 {
			rows = append(rows, recordstore.Values{"k", int64(i), "v"})
		}
		rows[4000][1] = int64(7)    // row 8's key, the map's
		rows[4500][1] = int64(7)    // and again
		rows[4200][1] = int64(3999) // a key of the runs, repeated later than 4001 but first
		rows[4999][1] = int64(4200) // a key seen only in runs
		first, second := inOrder(rows)
		Expect([]int{first, second}).To(Equal([]int{7, 4000}))
		_, err := run(rows, 2048, GinkgoT().TempDir())
		Expect(err).To(MatchError(ContainSubstring("rows 8 and 4001 have the same key")))
	})

	It("accepts unique keys past the memory bound", func() {
		rows := make([]recordstore.Values, 20_000)
		for i := range rows {
			rows[i] = recordstore.Values{"same", int64(i), "v"}
		}
		_, err := run(rows, 4096, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
	})
})
