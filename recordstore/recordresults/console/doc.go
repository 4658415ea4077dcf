// Package console is the web console of query serve: a dependency-free
// HTML/CSS/JS page, embedded in the binary (no build step), over the read
// API of recordresults.Handler, plus the few JSON routes only the console
// needs (a kind's schema, the owner's status with its heartbeat age, the
// spool's failed batches with their error.json, and the retry of one).
//
// Everything the console serves carries a strict Content-Security-Policy:
// scripts and styles only from the console's own files, no inline script,
// no inline style, no plugin, no framing. The page puts every value it
// reads into the document with textContent, never as markup, so a row
// holding "<script>" shows as that text.
//
// The handler writes to the store in one case only: POST
// /console/api/spool/failed/{batch}/retry, which moves a failed batch back
// to incoming/ (spool.Dir.Retry), and only when Options.AllowWrites is set;
// otherwise it answers 403 with code read_only and changes nothing. It is
// safe for concurrent requests.
package console
