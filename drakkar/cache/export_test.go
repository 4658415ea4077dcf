// Seams for the package's specs.

package cache

import "context"

// FailApply makes every Apply of c fail with the error f returns (nil f:
// no fault).
func FailApply(c *Cache, f func() error) { c.faults.apply = f }

// SlowPage makes every page read of c run f first.
func SlowPage(c *Cache, f func(context.Context)) { c.faults.page = f }

// BetweenScopes makes every two-scope page read of c run f between its
// two scopes' searches.
func BetweenScopes(c *Cache, f func()) { c.faults.betweenScopes = f }

// SetPeers replaces the peer lister of c's pull.
func SetPeers(c *Cache, p PeerLister) { c.opts.Peers = p }

// AfterFlush makes every flush of c run f after its commit, before its
// entries are kept in memory.
func AfterFlush(c *Cache, f func()) { c.faults.afterFlush = f }
