// A Go service that embeds the fleet: fleethttp's handler, the request
// metrics and the fleet collector of ownermetrics, mounted in a plain
// net/http server over a real fleet root with real stores. Rows appended
// through the fleet are scanned over HTTP, the tenants listed, and the
// metrics count it.

package fleethttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore"
	"github.com/fb46ecde/records/recordstore/fleet"
	"github.com/fb46ecde/records/recordstore/fleet/fleethttp"
	"github.com/fb46ecde/records/recordstore/owner"
	"github.com/fb46ecde/records/recordstore/ownermetrics"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
)

// eventKind is the kind the embedding service appends.
var eventKind = recordstore.Kind{Name: "events", Columns: []recordstore.Column{{Name: "msg", Type: recordstore.TypeString}}}

// service is a fleet served by a plain http.Server on a loopback port.
type service struct {
	f    *fleet.Fleet
	base string // http://127.0.0.1:PORT
	// stop shuts the server down (once; the spec's cleanup calls it too)
	// and returns Shutdown's error.
	stop func(context.Context) error
}

// startService opens a tenant fleet on a fresh root (never creating a
// store on a read), and serves it with the metrics on /metrics until the
// spec ends; the server shuts down, then the fleet closes.
func startService() *service {
	f, err := fleet.Open(newRoot(), fleet.Options{Mode: fleet.ModeTenant, SweepInterval: -1, CreateOnDemand: fleet.OnDemandRefuse})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(f.Close) // after the server's shutdown below (cleanups run in reverse)

	reg := prometheus.NewRegistry()
	hm, err := ownermetrics.NewHTTP(reg, ownermetrics.HTTPOptions{
		Routes: append(fleethttp.RoutePatterns(), ownermetrics.MetricsPath), Follow: fleethttp.RouteFollow,
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(reg.Register(ownermetrics.NewFleetCollector(f))).To(Succeed())

	done := make(chan struct{})
	api := fleethttp.Handler(f, fleethttp.Options{Logger: discardLog(), Done: done})
	srv := &http.Server{Handler: hm.Wrap(ownermetrics.Mount(api, ownermetrics.Handler(reg, discardLog()))), ReadHeaderTimeout: time.Minute}
	srv.RegisterOnShutdown(func() { close(done) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var once sync.Once
	var stopErr error
	stop := func(ctx context.Context) error {
		once.Do(func() {
			stopErr = srv.Shutdown(ctx)
			if err := <-served; !errors.Is(err, http.ErrServerClosed) && stopErr == nil {
				stopErr = err
			}
		})
		return stopErr
	}
	DeferCleanup(func(ctx SpecContext) { Expect(stop(ctx)).To(Succeed()) }, NodeTimeout(time.Minute))
	return &service{f: f, base: "http://" + ln.Addr().String(), stop: stop}
}

// appendEvents appends one events row per msg to the tenant's stream
// through the fleet, as the service's own write path would.
func (s *service) appendEvents(ctx context.Context, tenant, stream string, msgs ...string) {
	k, err := fleet.TenantKey(tenant)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	lease, err := s.f.Acquire(ctx, k)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer lease.Release()
	rows := make([]recordstore.Row, len(msgs))
	for i, m := range msgs {
		rows[i] = recordstore.Row{"msg": m}
	}
	_, err = lease.Store().Append(ctx, stream, eventKind.Name, rows, owner.AppendOptions{Declare: &eventKind})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
}

// get fetches path and returns the status and the body.
func (s *service) get(path string) (int, string) {
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get(s.base + path)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return resp.StatusCode, string(body)
}

// msgs returns the msg of each NDJSON row of body.
func msgs(body string) []string {
	out := []string{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		var row struct{ Msg string }
		ExpectWithOffset(1, json.Unmarshal(sc.Bytes(), &row)).To(Succeed(), sc.Text())
		out = append(out, row.Msg)
	}
	return out
}

// sample returns the value of the metric line "name{labels} value" of a
// /metrics body ("" when there is none).
func sample(body, series string) string {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

var _ = Describe("a Go service embedding the fleet handler in a plain net/http server", func() {
	It("serves each tenant's rows appended through the fleet, lists the tenants, and counts it in its metrics", func(ctx SpecContext) {
		s := startService()
		for _, t := range []string{"acme", "beta"} {
			k, err := fleet.TenantKey(t)
			Expect(err).NotTo(HaveOccurred())
			Expect(s.f.Provision(ctx, k)).To(Succeed())
		}
		s.appendEvents(ctx, "acme", "s1", "a1", "a2")
		s.appendEvents(ctx, "beta", "s1", "b1")

		By("scanning each tenant's stream: its own rows only")
		status, body := s.get("/api/v1/tenants/acme/streams/s1/rows")
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(msgs(body)).To(Equal([]string{"a1", "a2"}))
		status, body = s.get("/api/v1/tenants/tenant:beta/streams/s1/rows")
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(msgs(body)).To(Equal([]string{"b1"}))

		By("appending again, then scanning after the rows already read")
		s.appendEvents(ctx, "acme", "s1", "a3")
		status, body = s.get("/api/v1/tenants/acme/streams/s1/rows?after=2")
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(msgs(body)).To(Equal([]string{"a3"}))

		By("listing the tenants, sorted by key, a page at a time")
		var page struct {
			Tenants []struct{ Key string }
			Next    string
		}
		status, body = s.get("/api/v1/tenants?limit=1")
		Expect(status).To(Equal(http.StatusOK), body)
		Expect(json.Unmarshal([]byte(body), &page)).To(Succeed())
		Expect(page.Tenants).To(HaveLen(1))
		Expect(page.Tenants[0].Key).To(Equal("tenant:acme"))
		status, body = s.get("/api/v1/tenants?after=" + page.Next)
		Expect(status).To(Equal(http.StatusOK), body)
		page.Next = ""
		Expect(json.Unmarshal([]byte(body), &page)).To(Succeed())
		Expect(page.Tenants).To(HaveLen(1))
		Expect(page.Tenants[0].Key).To(Equal("tenant:beta"))
		Expect(page.Next).To(BeEmpty())

		By("refusing a missing tenant, a bad key and a missing stream with their codes")
		status, body = s.get("/api/v1/tenants/ghost/streams/s1/rows")
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(body).To(ContainSubstring(`"code":"not_found"`))
		status, body = s.get("/api/v1/tenants/Acme/streams")
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(body).To(ContainSubstring(`"code":"invalid"`))
		status, _ = s.get("/api/v1/tenants/acme/streams/nope/rows")
		Expect(status).To(Equal(http.StatusNotFound))

		By("counting the requests by route and code, and the fleet's open stores, on /metrics")
		status, body = s.get("/metrics")
		Expect(status).To(Equal(http.StatusOK))
		rows := `records_http_requests_total{code="200",route="/api/v1/tenants/{key}/streams/{stream}/rows"}`
		Expect(sample(body, rows)).To(Equal("3"))
		Expect(sample(body, `records_http_requests_total{code="404",route="/api/v1/tenants/{key}/streams/{stream}/rows"}`)).To(Equal("2"))
		Expect(sample(body, `records_http_requests_total{code="200",route="/api/v1/tenants"}`)).To(Equal("2"))
		Expect(sample(body, `records_http_requests_total{code="400",route="/api/v1/tenants/{key}/streams"}`)).To(Equal("1"))
		Expect(sample(body, "records_fleet_stores_open")).To(Equal("2"))
		Expect(sample(body, "records_fleet_stores_leased")).To(Equal("0"))
	})

	It("ends a tenant's follow at shutdown, so the server stops", func(ctx SpecContext) {
		s := startService()
		k, err := fleet.TenantKey("acme")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.f.Provision(ctx, k)).To(Succeed())
		s.appendEvents(ctx, "acme", "s1", "a1")
		resp, err := http.Get(s.base + "/api/v1/tenants/acme/streams/s1/follow")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		rd := bufio.NewReader(resp.Body)
		line, err := rd.ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		Expect(msgs(line)).To(Equal([]string{"a1"}))

		// Shutdown waits for the requests in flight: it returns only
		// because closing Done ended the follow, whose body then ends.
		Expect(s.stop(ctx)).To(Succeed())
		rest, err := io.ReadAll(rd)
		Expect(err).NotTo(HaveOccurred())
		Expect(rest).To(BeEmpty())
	}, NodeTimeout(2*time.Minute))
})
