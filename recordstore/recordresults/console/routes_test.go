// RoutePatterns against the routes Handler answers.

package console_test

import (
	"context"
	"net/http"
	"strings"

	"github.com/fb46ecde/records/recordstore/recordresults/console"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the console's RoutePatterns", func() {
	It("lists only routes Handler answers, none of them with its no-route error", func() {
		srv := newFixture(context.Background()).server(false)
		for _, p := range console.RoutePatterns() {
			path := strings.NewReplacer("{$}", "", "{kind}", "events", "{batch}", "x").Replace(p)
			method := http.MethodGet
			if strings.HasSuffix(p, "/retry") {
				method = http.MethodPost
			}
			resp, body := call(method, srv.URL+path, nil)
			Expect(body).NotTo(ContainSubstring("no console route"), "%s %s", method, path)
			Expect(resp.StatusCode).NotTo(Equal(http.StatusNotFound), "%s %s: %s", method, path, body)
		}
		_, body := call(http.MethodGet, srv.URL+"/console/nothing", nil)
		Expect(body).To(ContainSubstring("no console route"), "the check above can fail")
	})
})
