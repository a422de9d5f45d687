package file

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// An event that names a manifest file makes the next sync read that file
// alone; the folder is scanned again only for what a file cannot explain:
// the first sync, a folder created, removed or renamed, a hidden name (the
// link swap of a ConfigMap volume), lost events, and a bus error. Events
// for other files (an editor's backup, a file of another extension) change
// nothing a scan would read.

// note records what one file system event asks of the next sync.
func (r *runner) note(ev fsnotify.Event) {
	name := ev.Name
	switch {
	case r.full:
	case r.folder.dirs[name] || strings.HasPrefix(filepath.Base(name), "."):
		r.full = true
	case extensions[strings.ToLower(filepath.Ext(name))]:
		r.changed[name] = true
	case ev.Has(fsnotify.Create):
		if st, err := os.Lstat(name); err == nil && st.IsDir() {
			r.full = true
		}
	}
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
	if !r.full && r.folder.readPaths(paths) {
		return r.folder.take(), true
	}
	if !r.folder.scan(r.watcher.Add) {
		return nil, false
	}
	r.full = false
	r.folder.take()
	return nil, true
}
