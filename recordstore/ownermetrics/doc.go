// Package ownermetrics makes the owner's measurement hooks (owner.Metrics)
// Prometheus metrics, registered on the caller's registry:
//
//	reg := prometheus.NewRegistry()
//	m, err := ownermetrics.New(reg)
//	st, err := records.Open(ctx, path, records.Options{Owner: records.OwnerOptions{Metrics: m.Hooks()}})
//
// It is the one package of the library that depends on client_golang, so
// that a program that wants no Prometheus does not link it: the owner
// package only calls hooks. Every label set is bounded (the roles of
// owner.Role, two await outcomes, two sweep results). The metrics are
// safe for concurrent use, as the hooks are called from the store's
// goroutines.
package ownermetrics
