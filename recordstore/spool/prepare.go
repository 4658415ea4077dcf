// Prepared batch folders: a Dir that publishes again and again keeps one
// empty batch folder ready in tmp/, made off the publish's path, so that a
// publish does not wait for a mkdir and two file creations — journal
// operations that queue behind any commit in flight, about 0.3 ms each on
// a busy ext4.

package spool

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fb46ecde/records/recordstore/fsutil"
)

// preparedMaxAge bounds the age of a prepared folder a publish uses; an
// older one is removed instead (tmp/ GC removes folders that are a day
// old, or sooner when configured so).
const preparedMaxAge = time.Minute

// prepared is an empty batch folder in tmp/ with empty files in it.
type prepared struct {
	path  string
	files map[string]bool // base names
	made  time.Time
	// durable says the folder was fsynced once its files were created: a
	// publish that fills exactly these files, adding and removing none,
	// need not fsync the folder again.
	durable bool
}

// preparer holds at most one prepared folder.
type preparer struct {
	mu     sync.Mutex
	ready  *prepared
	busy   bool // a goroutine is preparing one
	closed bool
	wg     sync.WaitGroup
}

// takePrepared returns the prepared folder, if there is a fresh one, and
// forgets it: the caller owns it.
func (d *Dir) takePrepared() *prepared {
	d.prep.mu.Lock()
	p := d.prep.ready
	d.prep.ready = nil
	d.prep.mu.Unlock()
	if p != nil && d.now().Sub(p.made) > preparedMaxAge {
		_ = os.RemoveAll(p.path)
		return nil
	}
	return p
}

// prepareNext makes, on another goroutine, the folder the next publish of
// this producer will use: tmp/<instance>-<random id>/ holding an empty
// manifest.json and an empty first data file of the codec with extension
// ext, and fsyncs the folder, so that a publish filling just these two
// files has only the files to fsync (when that fsync fails, the folder is
// still used, and the publish fsyncs it). It does nothing unless Options.Prepare is set,
// when one is ready or being made, or after Close.
func (d *Dir) prepareNext(instance, ext string) {
	if !d.prepare {
		return
	}
	d.prep.mu.Lock()
	if d.prep.closed || d.prep.busy || d.prep.ready != nil {
		d.prep.mu.Unlock()
		return
	}
	d.prep.busy = true
	d.prep.wg.Add(1)
	d.prep.mu.Unlock()
	go func() {
		defer d.prep.wg.Done()
		p := d.makePrepared(instance, ext)
		d.prep.mu.Lock()
		defer d.prep.mu.Unlock()
		d.prep.busy = false
		if p == nil {
			return
		}
		if d.prep.closed {
			_ = os.RemoveAll(p.path)
			return
		}
		d.prep.ready = p
	}()
}

func (d *Dir) makePrepared(instance, ext string) *prepared {
	p := &prepared{path: d.Path(StateTmp, instance+"-"+NewID()), files: map[string]bool{}, made: d.now()}
	if err := d.fs.FS.Mkdir(p.path, fsutil.DirMode); err != nil {
		d.log.Debug("prepare batch folder", "error", err)
		return nil
	}
	for _, name := range []string{ManifestFile, dataFileName(0, ext)} {
		f, err := d.fs.FS.OpenFile(filepath.Join(p.path, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, fsutil.FileMode)
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			d.log.Debug("prepare batch folder", "error", err)
			_ = os.RemoveAll(p.path)
			return nil
		}
		p.files[name] = true
	}
	if err := d.fs.SyncDir(p.path); err != nil {
		d.log.Warn("prepare batch folder: the publish that uses it will fsync it", "error", err)
	} else {
		p.durable = true
	}
	return p
}

// Close removes the prepared folder, if any, after waiting for one being
// made. The Dir stays usable; it prepares nothing more.
func (d *Dir) Close() error {
	d.prep.mu.Lock()
	d.prep.closed = true
	d.prep.mu.Unlock()
	d.prep.wg.Wait()
	d.prep.mu.Lock()
	p := d.prep.ready
	d.prep.ready = nil
	d.prep.mu.Unlock()
	if p == nil {
		return nil
	}
	return os.RemoveAll(p.path)
}
