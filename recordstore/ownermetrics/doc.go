// Package ownermetrics is the library's Prometheus side: the metrics a
// service that embeds records serves, registered on the caller's registry.
// It is the one package of the library that depends on client_golang, so
// that a program that wants no Prometheus does not link it: the owner
// package only calls hooks, and the HTTP handlers know no metrics.
//
//   - New: the owner's measurement hooks (owner.Metrics) as counters and
//     histograms: appends by role, batches ingested, failed and retried,
//     latencies, promotions, sweeps.
//   - NewStoreCollector: one store's gauges, read at scrape time: its
//     role, its damage, and the owner's status (backlog, failed batches,
//     refused entries, epoch, heartbeat age). ViewOf adapts a store.
//   - NewFleetCollector: a tenant fleet's counters (fleet.Stats).
//   - NewHTTP: request metrics of an HTTP server, by route pattern and
//     status code, and the follow responses open; HTTPMetrics.Wrap counts.
//   - Handler and Mount: the /metrics route in the Prometheus text format,
//     mounted beside an API.
//
// Wiring a store served over HTTP, as query serve does:
//
//	reg := prometheus.NewRegistry()
//	m, err := ownermetrics.New(reg)
//	st, err := records.Open(ctx, path, records.Options{Owner: records.OwnerOptions{Metrics: m.Hooks()}})
//	reg.MustRegister(ownermetrics.NewStoreCollector(ownermetrics.ViewOf(st)))
//	hm, err := ownermetrics.NewHTTP(reg, ownermetrics.HTTPOptions{
//		Routes: append(recordresults.RoutePatterns(), ownermetrics.MetricsPath),
//		Follow: recordresults.RouteFollow,
//	})
//	api := recordresults.Handler(st.Backend(), recordresults.HandlerOptions{Status: st.Status, Batches: st})
//	srv := &http.Server{Handler: hm.Wrap(ownermetrics.Mount(api, ownermetrics.Handler(reg, logger)))}
//
// Every label set is bounded (the roles of owner.Role, two await
// outcomes, two sweep results, the route patterns given and "other", the
// status codes sent). Every metric name is fixed, so one registry holds
// one store's (or one fleet's, or one server's): a second needs another
// registry, or prometheus.WrapRegistererWith and a label of its own. The
// metrics and collectors are safe for concurrent use: the hooks are
// called from the store's goroutines, the collectors at each scrape.
package ownermetrics
