// Signals where there are no unix signals: a child's kill and pause
// failpoints end the process instead, and Stop and Cont are unsupported.

//go:build !unix

package recordstoretest

import (
	"os"

	"github.com/fb46ecde/records/recordstore"
)

func killSelf() { os.Exit(137) }

func stopSelf() { os.Exit(145) }

// Stop is not supported on this platform.
func (c *Child) Stop() error {
	return recordstore.Errorf(recordstore.ErrUnsupported, "stopping a child needs unix signals")
}

// Cont is not supported on this platform.
func (c *Child) Cont() error {
	return recordstore.Errorf(recordstore.ErrUnsupported, "continuing a child needs unix signals")
}

// StopProcess is not supported on this platform.
func StopProcess(pid int) error {
	return recordstore.Errorf(recordstore.ErrUnsupported, "stopping process %d needs unix signals", pid)
}
