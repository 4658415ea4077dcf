// Failpoints in a child: named points the store reports reaching, counted,
// and the actions armed rules take there (kill, pause, exit, block).

package recordstoretest

import (
	"os"
	"sync"

	"github.com/fb46ecde/records/recordstore"
)

// failpoints counts the hits of every name and fires armed rules.
type failpoints struct {
	mu    sync.Mutex
	hits  map[string]int         // guarded by mu: hits so far per name
	armed map[string][]armedRule // guarded by mu: rules waiting to fire
	c     *child
}

// armedRule fires at the at-th hit of its name.
type armedRule struct {
	rule FailpointRule
	at   int
}

// arm arms r to fire at its Hit-th hit from now (1: the next one).
func (f *failpoints) arm(r FailpointRule) error {
	if err := checkAction(r.Action); err != nil {
		return err
	}
	n := max(r.Hit, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed[r.Name] = append(f.armed[r.Name], armedRule{rule: r, at: f.hits[r.Name] + n})
	return nil
}

func checkAction(a string) error {
	switch a {
	case ActKill, ActPause, ActExit, ActBlock, ActReport:
		return nil
	}
	return recordstore.Errorf(recordstore.ErrInvalid, "failpoint action %q: want kill, pause, exit, block or report", a)
}

// hit counts one hit of name and fires the rules armed for it.
func (f *failpoints) hit(name string) {
	f.mu.Lock()
	f.hits[name]++
	n := f.hits[name]
	var due []FailpointRule
	rest := f.armed[name][:0]
	for _, a := range f.armed[name] {
		if a.at == n {
			due = append(due, a.rule)
		} else {
			rest = append(rest, a)
		}
	}
	f.armed[name] = rest
	f.mu.Unlock()
	for _, r := range due {
		_ = f.fire(r, n)
	}
}

// hitWith counts one hit of r.Name and fires r, armed or not.
func (f *failpoints) hitWith(r FailpointRule) error {
	if err := checkAction(r.Action); err != nil {
		return err
	}
	f.mu.Lock()
	f.hits[r.Name]++
	n := f.hits[r.Name]
	f.mu.Unlock()
	return f.fire(r, n)
}

// fire prints the failpoint event, then acts.
func (f *failpoints) fire(r FailpointRule, hit int) error {
	if err := checkAction(r.Action); err != nil {
		return err
	}
	f.c.event(EventFailpoint, r.Name, map[string]any{"name": r.Name, "hit": hit, "action": r.Action})
	switch r.Action {
	case ActKill:
		killSelf()
	case ActPause:
		stopSelf()
	case ActExit:
		os.Exit(3)
	case ActBlock:
		<-f.c.release
	}
	return nil
}
