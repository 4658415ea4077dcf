// docs/drakkar.md is checked against the repository: every path it points
// at exists, and the request bodies it must describe are there.

package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("docs/drakkar.md", func() {
	docs := filepath.Join("..", "..", "docs")
	var text string

	BeforeEach(func() {
		b, err := os.ReadFile(filepath.Join(docs, "drakkar.md"))
		Expect(err).NotTo(HaveOccurred())
		text = string(b)
	})

	It("points only at files of the repository", func() {
		links := regexp.MustCompile(`\]\(([^)#:]+)\)`).FindAllStringSubmatch(text, -1)
		rel := regexp.MustCompile("`(\\.\\./[^` ]+)`").FindAllStringSubmatch(text, -1)
		Expect(len(links)).To(BeNumerically(">", 0))
		for _, m := range append(links, rel...) {
			target := filepath.Join(docs, m[1])
			Expect(target).To(BeAnExistingFile(), "docs/drakkar.md names %s", m[1])
			abs, err := filepath.Abs(target)
			Expect(err).NotTo(HaveOccurred())
			root, err := filepath.Abs(filepath.Join("..", ".."))
			Expect(err).NotTo(HaveOccurred())
			Expect(strings.HasPrefix(abs, root+string(filepath.Separator))).To(BeTrue(), "%s is outside the repository", m[1])
		}
	})

	It("describes the merge route's request body", func() {
		i := strings.Index(text, "**Merge** needs")
		Expect(i).To(BeNumerically(">=", 0))
		para := text[i:]
		para = para[:strings.Index(para, "\n\n")]
		Expect(para).To(ContainSubstring(`{"filenames": [`))
	})
})
