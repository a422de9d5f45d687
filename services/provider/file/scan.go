package file

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gatewire/gatewire/pkg/manifest"
)

// extensions are the manifest file extensions the provider reads.
var extensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// source is what the provider knows of one manifest file.
type source struct {
	// digest is the hash of the content last read, good or not, when read
	// is set: a file whose content has not changed is not decoded again.
	// The content itself is not kept: its objects hold what is needed.
	digest [sha256.Size]byte
	read   bool
	// size and modTime are the file's when data was read at readAt: a file
	// that still has them is not read again, unless it was modified within
	// a second of that read (a file system's clock is coarse: a second
	// write in the same tick keeps the modification time).
	size            int64
	modTime, readAt time.Time
	// changedAt is when a read last found new content (or found the file
	// changing while it was read): the file is settled once it has kept
	// its content for suspectDelay (see holds).
	changedAt time.Time
	// objects is the last good content: what the file held the last time it
	// decoded without a problem.
	objects []manifest.Object
	// problems is empty when data decoded cleanly.
	problems []manifest.Problem
}

// folder is the state of the watched folder. It is owned by the Run
// goroutine.
type folder struct {
	root     string
	log      *slog.Logger
	maxBytes int64
	sources  map[string]*source // by path
	// dirs are the folders the last scan walked (and watches).
	dirs map[string]bool
	// rootProblem is set while the folder itself cannot be read.
	rootProblem *manifest.Problem
	// decodes are the files read and not decoded yet (see decodeAll).
	decodes []decodeJob
	// defs, want, touched and conflicted are the merged view (see merge.go).
	defs       map[string][]ref
	want       map[string]manifest.Object
	touched    map[string]bool
	conflicted map[string]bool
	// troubled holds the paths of the sources that have problems.
	troubled map[string]bool
}

func newFolder(root string, log *slog.Logger, maxBytes int64) *folder {
	return &folder{
		root: root, log: log, maxBytes: maxBytes, sources: map[string]*source{}, dirs: map[string]bool{},
		defs: map[string][]ref{}, want: map[string]manifest.Object{}, touched: map[string]bool{},
		conflicted: map[string]bool{}, troubled: map[string]bool{},
	}
}

// holds reports whether the objects published from path must be kept
// although the file no longer defines them, and until when: while the file
// exists and has not kept its content for suspectDelay (an editor or
// `cat > f` caught between truncating and writing it, a file half copied),
// or, for as long as it lasts, while it does not decode. A removed file
// holds nothing.
func (f *folder) holds(path string, now time.Time) (bool, time.Time) {
	src := f.sources[path]
	switch {
	case src == nil:
		return false, time.Time{}
	case len(src.problems) > 0:
		return true, time.Time{}
	case now.Sub(src.changedAt) < suspectDelay:
		return true, src.changedAt.Add(suspectDelay)
	}
	return false, time.Time{}
}

// scan reads the folder and its subfolders (names starting with "." are
// skipped, so are editors' swap files and the hidden "..data" folders of a
// Kubernetes ConfigMap volume, whose files are read through the symbolic
// links beside them) and updates the sources. It calls watch for every folder
// it walks. It returns false when the folder cannot be walked; the sources are
// then left as they were, so that a folder that is briefly away (an unmounted
// volume) does not empty the bus.
func (f *folder) scan(watch func(dir string) error) bool {
	seen, dirs := map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(f.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == f.root {
				return err
			}
			f.readProblem(path, err)
			f.keep(seen, path)
			return nil
		}
		hidden := path != f.root && strings.HasPrefix(d.Name(), ".")
		switch {
		case d.IsDir() && hidden:
			return filepath.SkipDir
		case d.IsDir():
			dirs[path] = true
			if err := watch(path); err != nil {
				f.log.Error("watch folder", "path", path, "error", err)
			}
			return nil
		case hidden || !extensions[strings.ToLower(filepath.Ext(path))]:
			return nil
		}
		seen[path] = true
		f.read(path)
		return nil
	})
	f.decodeAll()
	if err != nil {
		if f.rootProblem == nil {
			f.log.Error("read folder", "path", f.root, "line", 0, "error", err)
		}
		f.rootProblem = &manifest.Problem{Path: f.root, Message: fmt.Sprintf("cannot read the folder: %v", err)}
		return false
	}
	f.rootProblem, f.dirs = nil, dirs
	for path := range f.sources {
		if !seen[path] {
			f.remove(path)
		}
	}
	return true
}

// readPaths reads the files at paths, as scan would, and forgets those
// that are gone. It reports false, having done nothing, when a path is
// not a file a scan would read (a folder, or a path under which sources
// lie): then the folder must be scanned.
func (f *folder) readPaths(paths []string) bool {
	for _, path := range paths {
		if f.dirs[path] {
			return false
		}
		if st, err := os.Lstat(path); err == nil && st.IsDir() {
			return false
		} else if errors.Is(err, fs.ErrNotExist) && f.sources[path] == nil {
			prefix := path + string(filepath.Separator)
			for p := range f.sources {
				if strings.HasPrefix(p, prefix) {
					return false
				}
			}
		}
	}
	for _, path := range paths {
		f.read(path)
	}
	f.decodeAll()
	return true
}

// remove forgets the source at path, a file that is gone.
func (f *folder) remove(path string) {
	if src := f.sources[path]; src != nil {
		f.log.Info("file removed", "path", path)
		f.setObjects(path, src, nil)
		delete(f.sources, path)
		delete(f.troubled, path)
	}
}

// keep marks path, and every source under it when it is a folder, as seen,
// so that what cannot be read now keeps its last good content.
func (f *folder) keep(seen map[string]bool, path string) {
	seen[path] = true
	for p := range f.sources {
		if strings.HasPrefix(p, path+string(filepath.Separator)) {
			seen[p] = true
		}
	}
}

// read reads one file when its size or modification time changed, and
// decodes it when its content changed.
func (f *folder) read(path string) {
	st, err := os.Stat(path) // follows symbolic links
	if err == nil && !st.Mode().IsRegular() {
		return
	}
	src := f.sources[path]
	if err == nil && src != nil && src.read && st.Size() == src.size && st.ModTime().Equal(src.modTime) &&
		src.readAt.Sub(src.modTime) > time.Second {
		return
	}
	readAt := time.Now()
	var data []byte
	if err == nil {
		data, err = manifest.ReadFile(path, f.maxBytes)
	}
	if errors.Is(err, manifest.ErrTooLarge) {
		err = fmt.Errorf("%w; raise GATEWIRE_PROVIDER_MAX_FILE_BYTES to read it", err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// Removed since the folder was listed, or a dangling link.
		f.remove(path)
		return
	}
	if err != nil {
		f.readProblem(path, err)
		return
	}
	if src == nil {
		src = &source{}
		f.sources[path] = src
	}
	src.size, src.modTime, src.readAt = st.Size(), st.ModTime(), readAt
	if after, err := os.Stat(path); err != nil || after.Size() != st.Size() || !after.ModTime().Equal(st.ModTime()) {
		src.changedAt = readAt // written while it was read: settle again
	}
	digest := sha256.Sum256(data)
	if src.read && src.digest == digest {
		return
	}
	src.digest, src.read, src.changedAt = digest, true, readAt
	f.decodes = append(f.decodes, decodeJob{path: path, src: src, data: data})
}

// readProblem records a file that cannot be read; its last good content is
// kept.
func (f *folder) readProblem(path string, err error) {
	src := f.sources[path]
	if src == nil {
		src = &source{}
		f.sources[path] = src
	}
	msg := fmt.Sprintf("cannot read the file: %v", err)
	if len(src.problems) != 1 || src.problems[0].Message != msg {
		f.log.Error("file problem", "path", path, "line", 0, "error", msg)
	}
	src.read = false
	f.setProblems(path, src, []manifest.Problem{{Path: path, Message: msg}})
}

// setProblems makes problems those of the source at path, and keeps
// troubled, the paths of the sources with problems, up to date.
func (f *folder) setProblems(path string, src *source, problems []manifest.Problem) {
	src.problems = problems
	if len(problems) > 0 {
		f.troubled[path] = true
	} else {
		delete(f.troubled, path)
	}
}

// problems returns the current problems of the folder and its files, by path
// and line.
func (f *folder) problems() []manifest.Problem {
	var out []manifest.Problem
	if f.rootProblem != nil {
		out = append(out, *f.rootProblem)
	}
	troubled := make([]string, 0, len(f.troubled))
	for p := range f.troubled {
		troubled = append(troubled, p)
	}
	sort.Strings(troubled)
	for _, p := range troubled {
		out = append(out, f.sources[p].problems...)
	}
	return out
}
