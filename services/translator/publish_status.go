package translator

import (
	"context"
	"maps"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// statusChunk is how many statuses writeStatusChunk writes, and
// statusLook how many it looks at, before the follow loop looks at its
// input again: the statuses of a gateway of thousands of routes take tens
// of milliseconds to write, and an edit that comes in meanwhile should not
// wait for them all. A status written before is skipped by a map lookup.
const (
	statusChunk = 64
	statusLook  = 64 * statusChunk
)

// statusJob is the writing of one translation's statuses, a chunk at a
// time. Statuses before i are written. next are the statuses written or
// found written, with their keys, and keys those keys.
type statusJob struct {
	out *Output
	// source is the revision of the resources out was translated from.
	source uint64
	// all: look at every status, not only those not written before (a
	// foreign write to repair). sweep: delete by the ledger's keys, not
	// only those of the last statuses written, because a job replaced
	// part-way may have written keys that this one does not give.
	all, sweep bool
	i          int
	next       map[*busv1.Status]string
	keys       map[string]bool
	// done are the statuses the jobs this one replaced wrote or found
	// written, with their keys: the same value (a route unit reused) is
	// not looked at again, so that edits that keep coming do not keep the
	// statuses from being written.
	done map[*busv1.Status]string
}

// queueStatuses makes out's statuses the next to write for its gateway,
// in place of those of an earlier translation not written yet. The keys
// that one wrote are skipped by the ledger if out gives the same value,
// and deleted at the end if it gives none.
func (st *session) queueStatuses(out *Output, all bool) {
	job := &statusJob{out: out, source: st.revision, all: all,
		next: make(map[*busv1.Status]string, len(out.Statuses)), keys: map[string]bool{}}
	if old := st.statusJobs[out.Gateway]; old != nil {
		job.sweep = old.sweep || old.i > 0
		if !all {
			job.done = old.done
			if job.done == nil {
				job.done = old.next
			} else {
				maps.Copy(job.done, old.next)
			}
		}
		job.all = all || old.all
	}
	st.statusJobs[out.Gateway] = job
}

// writeStatusChunk writes up to statusChunk statuses of one gateway whose
// statuses wait (looking at statusLook at most), and once they are all
// written, deletes those the gateway no longer gives. A status the session
// wrote last time or since (the same value: a route unit that was reused)
// is skipped without a look, unless all.
func (s *Service) writeStatusChunk(ctx context.Context, st *session) error {
	var gw types.NamespacedName
	var job *statusJob
	for gw, job = range st.statusJobs {
		break
	}
	if job == nil {
		return nil
	}
	prev := st.statuses[gw]
	end := min(job.i+statusLook, len(job.out.Statuses))
	var puts []output
	for n, status := range job.out.Statuses[job.i:end] {
		if len(puts) == statusChunk {
			end = job.i + n
			break
		}
		k, ok := prev[status]
		if !ok {
			k, ok = job.done[status]
		}
		if ok && !job.all && !st.foreign[sentKey{bus.Status, k}] {
			job.next[status], job.keys[k] = k, true
			continue
		}
		k = statusKey(status, gw)
		delete(st.foreign, sentKey{bus.Status, k})
		job.next[status], job.keys[k] = k, true
		puts = append(puts, output{k, status})
	}
	if err := s.putMany(ctx, st, job.source, bus.Status, puts); err != nil {
		return err
	}
	if job.i = end; end < len(job.out.Statuses) {
		return nil
	}
	delete(st.statusJobs, gw)
	st.statuses[gw] = job.next
	if job.all || job.sweep || prev == nil {
		keep := make(map[string]struct{}, len(job.keys))
		for k := range job.keys {
			keep[k] = struct{}{}
		}
		return s.deleteStatuses(ctx, st, job.source, gw, keep)
	}
	for _, k := range prev {
		if job.keys[k] || st.keepsStatus(k) {
			continue
		}
		if err := s.deleteAt(ctx, st, job.source, bus.Status, k); err != nil {
			return err
		}
	}
	return nil
}
