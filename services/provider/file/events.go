package file

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// An event that names a manifest file makes the next sync read that file
// alone; the folder is scanned again only for what a file cannot explain:
// the first sync, a folder created, removed or renamed, a hidden name (the
// link swap of a ConfigMap volume), lost events, and a bus error. Events
// for other files (an editor's backup, a file of another extension) change
// nothing a scan would read.

// note records what one file system event asks of the next sync, and
// reports whether it asks for one at all.
func (r *runner) note(ev fsnotify.Event) bool {
	name := ev.Name
	switch {
	case r.full:
	case r.folder.dirs[name] || strings.HasPrefix(filepath.Base(name), "."):
		r.full = true
	case extensions[strings.ToLower(filepath.Ext(name))]:
		r.changed[name] = true
		// A file written in place is read once its writer closed it; a file
		// removed or renamed away, once the folder is quiet, in case it is
		// being replaced.
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) || !r.completed[name] {
			r.unsettled[name] = true
		}
	case ev.Has(fsnotify.Create):
		if st, err := os.Lstat(name); err == nil && st.IsDir() {
			r.full = true
			break
		}
		return false
	default:
		return false
	}
	return true
}

// complete records that the writing of the file at name is done (see
// completions), and reports whether the next sync has something to read.
func (r *runner) complete(name string) bool {
	if !extensions[strings.ToLower(filepath.Ext(name))] || strings.HasPrefix(filepath.Base(name), ".") {
		return false
	}
	delete(r.unsettled, name)
	r.completed[name] = true
	return r.full || len(r.changed) > 0
}

// delay is how long the next sync waits for more events: completeDelay
// when every file named since the last sync is whole and no folder must
// be scanned, settleDelay otherwise.
func (r *runner) delay() time.Duration {
	if r.full || len(r.unsettled) > 0 {
		return settleDelay
	}
	return completeDelay
}

// watch watches the folder dir with both watchers. Only fsnotify's is
// needed: without the other, writes are read after settleDelay.
func (r *runner) watch(dir string) error {
	if err := r.completions.add(dir); err != nil {
		r.log.Debug("watch folder for completed writes", "path", dir, "error", err)
	}
	return r.watcher.Add(dir)
}

// read brings the folder up to date with what the events since the last
// sync named, and returns the keys whose objects may have changed: nil
// (all of them) after a scan of the whole folder. It reports false when
// the folder cannot be read.
func (r *runner) read() (map[string]bool, bool) {
	paths := make([]string, 0, len(r.changed))
	for p := range r.changed {
		paths = append(paths, p)
	}
	clear(r.changed)
	clear(r.unsettled)
	clear(r.completed)
	if !r.full && r.folder.readPaths(paths) {
		return r.folder.take(), true
	}
	if !r.folder.scan(r.watch) {
		return nil, false
	}
	r.full = false
	r.folder.take()
	return nil, true
}
