package validate

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apiserver/pkg/cel/common"
)

// Rules remembered by value.
//
// A CEL rule is a function of the value it is given (an object being
// created has no old self), and so is what it costs: the same program on
// the same value gives the same result, error and actual cost. Objects of
// one kind repeat values again and again (every route of a gateway names
// it in parentRefs; most path matches are PathPrefix "/"), so a ruleNode
// remembers, for the values it has seen, what each of its programs gave.
// evaluate then replays those outcomes through the same budget and error
// logic as a fresh evaluation: the errors and the budget left are the
// same, only the evaluations are saved. A node stops remembering when
// its values rarely repeat, and forgets everything when it holds too many.

// outcome is what one program gave on one value, as evaluate reads it.
type outcome struct {
	result ref.Val
	err    error
	// cost is the actual cost; costMissing says why there is none: 1, no
	// evaluation details; 2, details without a cost.
	cost        uint64
	costMissing int
}

func run(ctx context.Context, prog celgo.Program, act interpreter.Activation) outcome {
	result, details, err := prog.ContextEval(ctx, act)
	o := outcome{result: result, err: err}
	switch {
	case details == nil:
		o.costMissing = 1
	case details.ActualCost() == nil:
		o.costMissing = 2
	default:
		o.cost = *details.ActualCost()
	}
	return o
}

// overBudget reports whether cost does not fit in budget.
func overBudget(cost uint64, budget int64) bool { return cost > math.MaxInt64 || int64(cost) > budget }

// outcomes are the outcomes of a node's rules on one value, and of the
// messageExpressions of those that failed: rule i's at 2i, its message's
// at 2i+1 (see slot). A complete record is never changed.
type outcomes struct {
	of  []outcome
	ran []bool // whether the program of each slot ran
}

func newOutcomes(rules int) *outcomes {
	return &outcomes{of: make([]outcome, 2*rules), ran: make([]bool, 2*rules)}
}

// slot is where the outcome of rule i, or of its message, is kept.
func slot(i int, message bool) int {
	if message {
		return 2*i + 1
	}
	return 2 * i
}

// evaluation is one evaluation of a node's rules on one value: it takes
// each program's outcome from what the node remembers of the value, or
// runs the program and records the outcome, to be remembered when the
// evaluation is complete (every rule it needed was run, none cut short).
type evaluation struct {
	ctx           context.Context
	n             *ruleNode
	obj           any
	seen, record  *outcomes
	key           string
	act, optional *activation // made when a program first runs
}

func (n *ruleNode) newEvaluation(ctx context.Context, obj any) *evaluation {
	e := &evaluation{ctx: ctx, n: n, obj: obj}
	if e.seen, e.key = n.memo.find(obj); e.seen == nil && e.key != "" {
		e.record = newOutcomes(len(n.rules))
	}
	return e
}

// outcome is what prog, rule i's program or (message) its
// messageExpression's, gives on the value.
func (e *evaluation) outcome(i int, message bool, prog celgo.Program, isOptional bool) outcome {
	k := slot(i, message)
	if e.seen != nil && e.seen.ran[k] {
		return e.seen.of[k]
	}
	if e.act == nil {
		e.act = &activation{self: common.UnstructuredToVal(e.obj, e.n.self)}
		e.optional = &activation{self: e.act.self, optionalOldSelf: true}
	}
	a := e.act
	if isOptional {
		a = e.optional
	}
	o := run(e.ctx, prog, a)
	if e.record != nil {
		e.record.of[k], e.record.ran[k] = o, true
	}
	return o
}

// complete remembers the outcomes of an evaluation that ran to its end.
func (e *evaluation) complete() {
	if e.record != nil {
		e.n.memo.remember(e.key, e.record)
	}
}

// The memory's bounds: values whose key is longer than memoMaxKey are not
// remembered; a node that has looked up memoTrial values and found fewer
// than a memoMinHits share of them stops; one that holds memoMaxValues
// values, or memoMaxBytes of keys, starts over. A node holds at most about
// 128 KiB of keys, and the Gateway API kinds have about 200 nodes with
// rules, of which an input uses a few.
const (
	memoMaxKey    = 4 << 10
	memoTrial     = 256
	memoMinHits   = 4 // one in four
	memoMaxValues = 1024
	memoMaxBytes  = 128 << 10
)

// ruleMemo is a node's memory. It is safe for concurrent use.
type ruleMemo struct {
	mu            sync.Mutex
	values        map[string]*outcomes
	bytes         int // of the keys of values
	lookups, hits int
	off           bool
}

// find returns the outcomes remembered for obj, or nil and the key under
// which to remember them ("" when they are not to be remembered).
func (m *ruleMemo) find(obj any) (*outcomes, string) {
	m.mu.Lock()
	off := m.off
	m.mu.Unlock()
	if off {
		return nil, ""
	}
	var b strings.Builder
	if !writeKey(&b, obj) {
		return nil, ""
	}
	key := b.String()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lookups++
	if o := m.values[key]; o != nil {
		m.hits++
		return o, ""
	}
	if m.lookups >= memoTrial && m.hits*memoMinHits < m.lookups {
		m.off, m.values, m.bytes = true, nil, 0
		return nil, ""
	}
	return nil, key
}

// remember keeps the complete outcomes o of the value of key.
func (m *ruleMemo) remember(key string, o *outcomes) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.off {
		return
	}
	if m.values == nil || len(m.values) >= memoMaxValues || m.bytes+len(key) > memoMaxBytes {
		m.values, m.bytes = map[string]*outcomes{}, 0
	}
	if _, had := m.values[key]; !had {
		m.bytes += len(key)
	}
	m.values[key] = o
}

// writeKey writes a key of v that two values share only when they are
// equal and of the same types (the integer 1 and the number 1.0 differ
// for CEL): false when v holds another type, or its key is too long.
func writeKey(b *strings.Builder, v any) bool {
	if b.Len() > memoMaxKey {
		return false
	}
	switch v := v.(type) {
	case nil:
		b.WriteByte('n')
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int64:
		b.WriteByte('i')
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		b.WriteByte('f')
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	case string:
		b.WriteByte('s')
		b.WriteString(strconv.Quote(v))
	case []any:
		b.WriteByte('[')
		for _, e := range v {
			if !writeKey(b, e) {
				return false
			}
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for _, k := range keys {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			if !writeKey(b, v[k]) {
				return false
			}
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		return false
	}
	return b.Len() <= memoMaxKey
}
