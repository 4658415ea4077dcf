// Seams for the package's specs.

package cache

import "context"

// FailApply makes every Apply of c fail with the error f returns (nil f:
// no fault).
func FailApply(c *Cache, f func() error) { c.faults.apply = f }

// SlowPage makes every page read of c run f first.
func SlowPage(c *Cache, f func(context.Context)) { c.faults.page = f }
