// Package registry is the Drakkar fleet registry's filesystem provider
// (drakkar-local-databases.md "Worker autodiscovery"): each worker writes
// a card <shared.dir>/fleet/workers/<worker>.json (<storage.dir>/fleet/...
// when shared.dir is empty) at start and every heartbeat, reads its peers'
// cards every refresh, and judges a peer online while its card is no older
// than offline_after on the file server's clock: the modification time of
// a marker .clock.<instance> it touches in the same folder, so no host's
// wall clock is compared with another's.
//
// A card (canonical JSON, mode 0600, replaced atomically through
// recordstore/fsutil; the format is documented in docs/drakkar.md, "The
// registry"):
//
//	{"cluster":"search","features":{"cache":{"global":{"key":"k","ms":17}}},
//	 "instance":"0123456789abcdef","published_at":"2026-10-13T08:00:00.000000Z",
//	 "started_at":"2026-10-13T07:59:58.123456Z","state":"running",
//	 "url":"http://10.0.0.7:8081","version":1,"worker":"search-1"}
//
// One worker name has one card: a process does not publish over a fresh
// running card of another instance of its name (Registry.Duplicate reports
// it until that card is stopped or stale), and a stop marks only its own
// card stopped. Ages are clamped to the file server's clock: a card
// stamped in the future neither reads as seen after now nor stays online
// once it is not rewritten.
//
// Concurrency: every method of Registry is safe for concurrent use; Peers
// answers from the snapshot of the last refresh. What survives a crash: the
// last published card, which goes offline by age; a clean Close publishes a
// card whose state is "stopped".
package registry
