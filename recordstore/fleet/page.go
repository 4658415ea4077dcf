// ListPage: the stores sorted by key, a page at a time, reading only the
// identities of the page's files.

package fleet

import (
	"context"
	"sort"

	"github.com/fb46ecde/records/recordstore"
)

// MaxPage is the largest page ListPage returns.
const MaxPage = 10000

// Page is one page of ListPage.
type Page struct {
	// Stores are sorted by key (Entry.Key), all after the cursor.
	Stores []Entry `json:"stores"`
	// Next, when set, is the cursor of the next page: the last key of this
	// one, given when files named as stores lie after it (the next page
	// may still come out empty when they all turn out misplaced).
	Next string `json:"next,omitempty"`
}

// ListPage returns at most limit (1 to MaxPage) stores of the fleet whose
// key sorts after the cursor after ("" for the first page, else a key of
// this fleet as List prints it), sorted by key. It walks the root's
// folders as List does — names only, no file opened — and reads the
// identity of the files of the page alone (and of any misplaced file it
// passes over to fill the page, which it leaves out as List skips it), so
// a page costs a walk of the tree plus at most limit identity reads, not
// one read per store; a file the root's identity index knows unchanged is
// not opened at all, and the identities read are added to the index (see
// List, index.go). A store whose identity cannot be read is in the page
// with Err set. A bad limit or cursor is refused with
// recordstore.ErrInvalid before any disk work. No store is created or
// changed.
func (f *Fleet) ListPage(ctx context.Context, after string, limit int) (Page, error) {
	if limit < 1 || limit > MaxPage {
		return Page{}, recordstore.Invalidf("page size %d: want 1 to %d", limit, MaxPage)
	}
	if after != "" {
		k, err := f.ParseKey(after)
		if err != nil {
			return Page{}, err
		}
		after = k.String()
	}
	type named struct {
		candidate
		key string
	}
	var found []named
	ix := f.loadIndex()
	err := f.walk(ctx, func(c candidate) {
		ix.saw(c.rel)
		if s := c.key.String(); s > after {
			found = append(found, named{c, s})
		}
	}, func(Skipped) {})
	if err != nil {
		return Page{}, err
	}
	sort.Slice(found, func(i, j int) bool { return found[i].key < found[j].key })
	page := Page{Stores: []Entry{}}
	i := 0
	for ; i < len(found) && len(page.Stores) < limit; i++ {
		if err := ctx.Err(); err != nil {
			return Page{}, err
		}
		c := found[i]
		e, reason := f.inspect(ctx, c.candidate.key, c.abs, c.rel, false, ix)
		if reason == "" {
			page.Stores = append(page.Stores, e)
		}
	}
	f.saveIndex(ctx, ix)
	if i < len(found) && len(page.Stores) > 0 {
		page.Next = page.Stores[len(page.Stores)-1].Key
	}
	return page, nil
}
