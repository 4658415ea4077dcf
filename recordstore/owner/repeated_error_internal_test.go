package owner

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the log of a retry loop's failures", func() {
	var (
		buf bytes.Buffer
		log *slog.Logger
		r   *repeatedError
	)
	lines := func() []string { return strings.Split(strings.TrimSpace(buf.String()), "\n") }
	BeforeEach(func() {
		buf.Reset()
		log = slog.New(slog.NewTextHandler(&buf, nil))
		r = &repeatedError{}
	})

	It("logs the first failure and leaves out the same one while it repeats within a minute", func() {
		for range 5 {
			r.log(log, "retrying", errors.New("socket in use"))
		}
		Expect(lines()).To(HaveLen(1))
		Expect(lines()[0]).To(ContainSubstring(`error="socket in use"`))
		Expect(lines()[0]).NotTo(ContainSubstring("repeats"))
	})

	It("logs a failure whose text differs at once, with the count of those left out", func() {
		r.log(log, "retrying", errors.New("socket in use"))
		r.log(log, "retrying", errors.New("socket in use"))
		r.log(log, "retrying", errors.New("socket in use"))
		r.log(log, "retrying", errors.New("permission denied"))
		Expect(lines()).To(HaveLen(2))
		Expect(lines()[1]).To(ContainSubstring(`error="permission denied" repeats=2`))
	})

	It("logs the same failure again once a minute has passed since it was logged", func() {
		r.log(log, "retrying", errors.New("socket in use"))
		r.log(log, "retrying", errors.New("socket in use"))
		r.at = r.at.Add(-time.Minute) // as if the minute had passed
		r.log(log, "retrying", errors.New("socket in use"))
		r.log(log, "retrying", errors.New("socket in use"))
		Expect(lines()).To(HaveLen(2))
		Expect(lines()[1]).To(ContainSubstring(`error="socket in use" repeats=1`))
	})
})
