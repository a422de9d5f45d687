package file

import (
	"runtime"
	"sync"

	"github.com/gatewire/gatewire/pkg/manifest"
)

// decodeJob is a file read whose new content is to be decoded.
type decodeJob struct {
	path string
	src  *source
	data []byte
}

// decodeAll decodes the files read since the last call, on every core
// (decoding and checking objects is most of the work of reading a large
// folder), and records their objects and problems in path order.
func (f *folder) decodeAll() {
	jobs := f.decodes
	f.decodes = nil
	type result struct {
		objects  []manifest.Object
		problems []manifest.Problem
	}
	results := make([]result, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				results[i].objects, results[i].problems = manifest.Decode(jobs[i].path, jobs[i].data)
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, j := range jobs {
		f.decoded(j.path, j.src, results[i].objects, results[i].problems)
	}
}

// decoded records what the file at path decoded to.
func (f *folder) decoded(path string, src *source, objects []manifest.Object, problems []manifest.Problem) {
	f.setProblems(path, src, problems)
	if len(problems) > 0 {
		for _, p := range problems {
			f.log.Error("file problem", "path", p.Path, "line", p.Line, "error", p.Message)
		}
		return
	}
	f.setObjects(path, src, objects)
	f.log.Debug("file read", "path", path, "objects", len(objects))
}
