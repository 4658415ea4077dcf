// RoutePatterns against the routes Handler answers: every pattern listed
// is a route, so that a label of the request metrics is never a path the
// API does not serve.

package recordresults_test

import (
	"net/http"
	"strings"

	"github.com/fb46ecde/records/recordstore/recordresults"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// patternPath is a request path a pattern matches: each {name} wildcard
// replaced with "x", the {$} anchor dropped.
func patternPath(p string) string {
	p = strings.ReplaceAll(p, "{$}", "")
	for {
		i := strings.Index(p, "{")
		if i < 0 {
			return p
		}
		j := strings.Index(p[i:], "}")
		p = p[:i] + "x" + p[i+j+1:]
	}
}

var _ = Describe("RoutePatterns", func() {
	It("lists only routes Handler answers (a POST to each is refused as a method, not as a path)", func() {
		a := newAPIServer(recordresults.HandlerOptions{}, true)
		patterns := recordresults.RoutePatterns()
		Expect(patterns).To(ContainElement(recordresults.RouteFollow))
		for _, p := range patterns {
			req, err := http.NewRequest(http.MethodPost, a.srv.URL+patternPath(p), nil)
			Expect(err).NotTo(HaveOccurred())
			resp, err := apiClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			Expect(resp.Body.Close()).To(Succeed())
			Expect(resp.StatusCode).To(Equal(http.StatusMethodNotAllowed), "POST %s (pattern %s)", patternPath(p), p)
		}
	})

	It("answers a path outside every pattern with 404: the check above can fail", func() {
		a := newAPIServer(recordresults.HandlerOptions{}, true)
		req, err := http.NewRequest(http.MethodPost, a.srv.URL+"/api/v1/things", nil)
		Expect(err).NotTo(HaveOccurred())
		resp, err := apiClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Body.Close()).To(Succeed())
		Expect(resp.StatusCode).To(Equal(http.StatusNotFound))
	})
})
