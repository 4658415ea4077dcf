// query drakkar cache set|get|del|ls and query drakkar peers, run as the
// real binary.

package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("query drakkar cache", func() {
	var dir, storage string
	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		storage = filepath.Join(dir, "storage")
	})
	q := func(args ...string) result {
		return runQuery(dir, nil, "", append([]string{"drakkar", "cache"}, args...)...)
	}
	w := []string{"--storage", "", "--name", "w1"}
	flags := func(extra ...string) []string {
		w[1] = storage
		return append(append([]string{}, extra...), w...)
	}

	It("sets, gets, lists in key order and deletes entries in <name>-cache.db", func() {
		r := q(flags("set", "--scope", "global", "b", `{"x": [1, 2]}`)...)
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(Equal(`{"key":"b","spooled":false}` + "\n"))
		Expect(q(flags("set", "a", `"v"`, "--ttl", "1h")...).code).To(Equal(0))
		Expect(filepath.Join(storage, "w1-cache.db")).To(BeAnExistingFile())

		g := q(flags("get", "b")...)
		Expect(g.code).To(Equal(0), g.stderr)
		var e map[string]any
		Expect(json.Unmarshal([]byte(g.stdout), &e)).To(Succeed())
		Expect(e).To(HaveKeyWithValue("value", `{"x": [1, 2]}`))
		Expect(e).To(HaveKeyWithValue("scope", "global"))
		Expect(e).To(HaveKeyWithValue("origin_worker_id", "w1"))
		Expect(e).To(HaveKeyWithValue("expires_at_ms", BeNil()))

		ls := q(flags("ls")...)
		Expect(ls.code).To(Equal(0), ls.stderr)
		lines := strings.Split(strings.TrimSpace(ls.stdout), "\n")
		Expect(lines).To(HaveLen(2))
		Expect(lines[0]).To(HavePrefix(`{"key":"a",`))
		Expect(lines[1]).To(HavePrefix(`{"key":"b",`))

		Expect(q(flags("del", "a")...).code).To(Equal(0))
		r = q(flags("get", "a")...)
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix("query: not_found: "))
		Expect(strings.Count(q(flags("ls")...).stdout, "\n")).To(Equal(1))
	})

	DescribeTable("refuses bad input with code invalid and writes nothing",
		func(args ...string) {
			r := q(flags(args...)...)
			Expect(r.code).To(Equal(1))
			Expect(r.stderr).To(HavePrefix("query: invalid: "))
			Expect(r.stdout).To(BeEmpty())
			ls := q(flags("ls")...)
			Expect(ls.stdout).To(BeEmpty())
		},
		Entry("a value that is not JSON", "set", "k", "{nope"),
		Entry("an unknown scope", "set", "--scope", "fleet", "k", "1"),
		Entry("a negative ttl", "set", "--ttl", "-1s", "k", "1"),
		Entry("an empty key", "set", "", "1"),
	)
})

var _ = Describe("read-only drakkar commands on a mistyped path", func() {
	DescribeTable("answer not_found and create nothing",
		func(args ...string) {
			dir := GinkgoT().TempDir()
			missing := filepath.Join(dir, "storage-typo")
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "MISSING", missing)
			}
			r := runQuery(dir, nil, "", args...)
			Expect(r.code).To(Equal(1), r.stdout)
			Expect(r.stderr).To(HavePrefix("query: not_found: "))
			Expect(r.stderr).To(ContainSubstring(missing))
			Expect(r.stdout).To(BeEmpty())
			Expect(missing).NotTo(BeAnExistingFile())
		},
		Entry("cache get", "drakkar", "cache", "get", "--storage", "MISSING", "--name", "w1", "k"),
		Entry("cache ls", "drakkar", "cache", "ls", "--storage", "MISSING", "--name", "w1"),
		Entry("ls --shared", "drakkar", "ls", "--shared", "MISSING"),
	)

	It("cache get answers not_found in an existing storage folder without the worker's cache, creating nothing", func() {
		dir := GinkgoT().TempDir()
		r := runQuery(dir, nil, "", "drakkar", "cache", "get", "--storage", dir, "--name", "w1", "k")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(HavePrefix(`query: not_found: no cache of worker "w1": `))
		ents, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(ents).To(BeEmpty())
	})
})

var _ = Describe("query drakkar peers", func() {
	It("prints the cards with their online state, and leaves no clock marker", func() {
		dir := GinkgoT().TempDir()
		cards := filepath.Join(dir, "fleet", "workers")
		Expect(os.MkdirAll(cards, 0o700)).To(Succeed())
		card := `{"cluster":"c","features":{"cache":{}},"instance":"0123456789abcdef","published_at":"2026-10-13T08:00:01.000000Z","started_at":"2026-10-13T08:00:00.000000Z","state":"running","url":"http://127.0.0.1:1","version":1,"worker":"a"}`
		Expect(os.WriteFile(filepath.Join(cards, "a.json"), []byte(card), 0o600)).To(Succeed())
		stopped := strings.NewReplacer(`"running"`, `"stopped"`, `"worker":"a"`, `"worker":"b"`, `{"cache":{}}`, `{}`).Replace(card)
		Expect(os.WriteFile(filepath.Join(cards, "b.json"), []byte(stopped), 0o600)).To(Succeed())

		r := runQuery(dir, nil, "", "drakkar", "peers", "--shared", dir)
		Expect(r.code).To(Equal(0), r.stderr)
		var got []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var m map[string]any
			Expect(json.Unmarshal([]byte(l), &m)).To(Succeed())
			got = append(got, m)
		}
		Expect(got).To(HaveLen(2))
		Expect(got[0]).To(HaveKeyWithValue("worker", "a"))
		Expect(got[0]).To(HaveKeyWithValue("online", true))
		Expect(got[0]).To(HaveKeyWithValue("cache", map[string]any{}))
		Expect(got[1]).To(HaveKeyWithValue("worker", "b"))
		Expect(got[1]).To(HaveKeyWithValue("online", false))
		Expect(got[1]).To(HaveKeyWithValue("cache", BeNil()))
		ents, err := os.ReadDir(cards)
		Expect(err).NotTo(HaveOccurred())
		Expect(ents).To(HaveLen(2))
	})
})
