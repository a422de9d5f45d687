package validate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apiextcel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
)

// ruleNode holds the compiled CEL rules (x-kubernetes-validations) of one
// schema node and the nodes under it that have rules. Its validate does on
// create what the apiextensions-apiserver's cel.Validator does, with the same
// errors, in the same order, under the same cost budget.
//
// It is ours, not cel.Validator, for speed: cel.Validator hands CEL each value
// with a new model.Structural adapter, whose Properties copies the schema of
// every property of the node, and CEL calls it on every field a rule reads.
// That was more than half of validating an HTTPRoute. A ruleNode's values
// read schemas whose adapters are built once (celSchema).
//
// Its rules are compiled by cel.Compile, as the API server compiles them,
// when the node first validates a value: a CEL program holds its own
// dispatcher of every function, and most nodes of a CustomResourceDefinition
// (the filters and policies a folder does not use) never see a value. Rules
// under allOf are refused when the tree is built: the Gateway API CRDs have
// none.
type ruleNode struct {
	// schema is the node's schema; for the root of a resource, with kind,
	// apiVersion and metadata.name and generateName declared, as CEL sees it.
	schema *structuralschema.Structural
	// self is schema as CEL reads values of it.
	self  common.Schema
	rules apiextensionsv1.ValidationRules

	// pending holds what compiling needs until it is done.
	pending *ruleCompile
	once    sync.Once
	// compiled are the rules' programs, set by once.
	compiled []apiextcel.CompilationResult
	// err is the compiler's error, reported on every object, as the API
	// server reports it; set by once.
	err error

	items, additional *ruleNode
	properties        map[string]*ruleNode

	// memo remembers what the rules gave on values seen before (see
	// rules_memo.go).
	memo ruleMemo
}

// compileRules compiles the CEL rules of a resource's schema; nil when it
// has none. Rules under allOf are an error that names where they are.
func compileRules(s *structuralschema.Structural, perCallLimit uint64) (*ruleNode, error) {
	if !hasRules(s) {
		return nil, nil // and no adapters to build
	}
	envSet := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	return newRuleNode(s, newCELSchema(s), true, model.SchemaDeclType(s, true), perCallLimit, envSet, field.NewPath("openAPIV3Schema"))
}

// newRuleNode mirrors the apiextensions-apiserver's construction of a
// cel.Validator for s, at path, whose CEL adapter is self and CEL type
// declType; nil when nothing at or under s has rules.
func newRuleNode(s *structuralschema.Structural, self *celSchema, isResourceRoot bool, declType *apiservercel.DeclType, perCallLimit uint64, envSet *environment.EnvSet, path *field.Path) (*ruleNode, error) {
	if !hasRules(s) {
		return nil, nil
	}
	if s.ValueValidation != nil {
		for i, a := range s.ValueValidation.AllOf {
			if nestedHasRules(&a) {
				return nil, fmt.Errorf("%s: x-kubernetes-validations under allOf are not supported", path.Child("allOf").Index(i))
			}
		}
	}
	n := &ruleNode{schema: s, self: self, rules: s.XValidations}
	if len(s.XValidations) > 0 {
		n.pending = &ruleCompile{schema: s, declType: declType, perCallLimit: perCallLimit, envSet: envSet}
	}
	var elem *apiservercel.DeclType
	if declType != nil {
		elem = declType.ElemType
	}
	var e error
	if s.Items != nil {
		if n.items, e = newRuleNode(s.Items, self.items.(*celSchema), s.Items.XEmbeddedResource, elem, perCallLimit, envSet, path.Child("items")); e != nil {
			return nil, e
		}
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
		if n.additional, e = newRuleNode(ap.Structural, self.additional.Schema().(*celSchema), ap.Structural.XEmbeddedResource, elem, perCallLimit, envSet, path.Child("additionalProperties")); e != nil {
			return nil, e
		}
	}
	for name := range s.Properties {
		prop := self.properties[name].(*celSchema)
		ps := prop.Structural.Structural
		var fieldType *apiservercel.DeclType
		if escaped, ok := apiservercel.Escape(name); ok {
			if declType == nil || declType.Fields[escaped] == nil {
				continue // fields of unknown types are not validated, as upstream
			}
			fieldType = declType.Fields[escaped].Type
		} else if fieldType = model.SchemaDeclType(ps, ps.XEmbeddedResource); fieldType == nil {
			continue
		}
		p, e := newRuleNode(ps, prop, ps.XEmbeddedResource, fieldType, perCallLimit, envSet, path.Child("properties").Key(name))
		if e != nil {
			return nil, e
		}
		if p != nil {
			if n.properties == nil {
				n.properties = map[string]*ruleNode{}
			}
			n.properties[name] = p
		}
	}
	if isResourceRoot {
		n.schema = model.WithTypeAndObjectMeta(s)
		n.self = newCELSchema(n.schema)
	}
	return n, nil
}

// ruleCompile is what cel.Compile needs to compile a node's rules.
type ruleCompile struct {
	schema       *structuralschema.Structural
	declType     *apiservercel.DeclType
	perCallLimit uint64
	envSet       *environment.EnvSet
}

// compiledRules compiles n's own rules on first use and returns them and
// the compiler's error.
func (n *ruleNode) compiledRules() ([]apiextcel.CompilationResult, error) {
	n.once.Do(func() {
		if c := n.pending; c != nil {
			defer func(start time.Time) { compileNanos.Add(int64(time.Since(start))) }(time.Now())
			n.compiled, n.err = apiextcel.Compile(c.schema, c.declType, c.perCallLimit, c.envSet, apiextcel.StoredExpressionsEnvLoader())
			n.pending = nil
		}
	})
	return n.compiled, n.err
}

// compileAll compiles the rules of n and of every node under it now, and
// returns the first compiler error, or the first rule's.
func (n *ruleNode) compileAll(path *field.Path) error {
	if n == nil {
		return nil
	}
	compiled, err := n.compiledRules()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for i, c := range compiled {
		if c.Error != nil {
			return fmt.Errorf("%s: rule %d (%s): %w", path, i, n.rules[i].Rule, c.Error)
		}
	}
	if err := n.items.compileAll(path.Child("items")); err != nil {
		return err
	}
	if err := n.additional.compileAll(path.Child("additionalProperties")); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(n.properties)) {
		if err := n.properties[name].compileAll(path.Child("properties").Key(name)); err != nil {
			return err
		}
	}
	return nil
}

// hasRules reports whether s or a schema under it has CEL rules, under
// allOf included (newRuleNode refuses those).
func hasRules(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 || hasRules(s.Items) {
		return true
	}
	if s.AdditionalProperties != nil && hasRules(s.AdditionalProperties.Structural) {
		return true
	}
	if s.ValueValidation != nil && slices.ContainsFunc(s.ValueValidation.AllOf, func(a structuralschema.NestedValueValidation) bool { return nestedHasRules(&a) }) {
		return true
	}
	for _, p := range s.Properties {
		if hasRules(&p) {
			return true
		}
	}
	return false
}

func nestedHasRules(n *structuralschema.NestedValueValidation) bool {
	if n == nil {
		return false
	}
	if len(n.ValidationExtensions.XValidations) > 0 || nestedHasRules(n.Items) || nestedHasRules(n.AdditionalProperties) {
		return true
	}
	for _, p := range n.Properties {
		if nestedHasRules(&p) {
			return true
		}
	}
	return false
}

// validate evaluates the rules of n and of the nodes under it on obj, at
// path, within budget; it returns their errors and what is left of the
// budget, negative when it ran out.
func (n *ruleNode) validate(ctx context.Context, path *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	if n == nil || obj == nil || budget < 0 {
		return nil, budget
	}
	errs, budget := n.evaluate(ctx, path, obj, budget)
	if budget < 0 {
		return errs, budget
	}
	under := func(sub *ruleNode, path *field.Path, v any) bool {
		var e field.ErrorList
		e, budget = sub.validate(ctx, path, v, budget)
		errs = append(errs, e...)
		return budget >= 0
	}
	switch obj := obj.(type) {
	case []any:
		if n.items != nil {
			for i, v := range obj {
				if !under(n.items, path.Index(i), v) {
					return errs, budget
				}
			}
		}
	case map[string]any:
		if n.additional != nil {
			for k, v := range obj {
				if !under(n.additional, path.Key(k), v) {
					return errs, budget
				}
			}
		}
		if n.properties != nil {
			for k, v := range obj {
				if sub := n.properties[k]; sub != nil && !under(sub, path.Child(k), v) {
					return errs, budget
				}
			}
		}
	}
	return errs, budget
}

// errOutOfBudget is the API server's detail when the rules of one object
// cost more than the budget.
const errOutOfBudget = "validation failed due to running out of cost budget, no further validation rules will be run"

// evaluate evaluates the rules of n itself on obj, as cel.Validator's
// validateExpressions does with no old object.
func (n *ruleNode) evaluate(ctx context.Context, path *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	typ := n.schema.Type
	compiled, err := n.compiledRules()
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(path, typ, fmt.Sprintf("rule compiler initialization error: %v", err))}, budget
	case len(compiled) == 0:
		return nil, budget
	case budget <= 0:
		return field.ErrorList{field.Invalid(path, typ, errOutOfBudget)}, -1
	}
	ev := n.newEvaluation(ctx, obj)
	var errs field.ErrorList
	for i, c := range compiled {
		rule := n.rules[i]
		if c.Error != nil {
			errs = append(errs, field.Invalid(path, typ, fmt.Sprintf("rule compile error: %v", c.Error)))
			continue
		}
		isOptional := rule.OptionalOldSelf != nil && *rule.OptionalOldSelf
		if c.Program == nil || c.UsesOldSelf && !isOptional {
			continue // a transition rule: it only applies to updates
		}
		o := ev.outcome(i, false, c.Program, isOptional)
		if o.costMissing != 0 {
			msg := fmt.Sprintf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(rule))
			if o.costMissing == 1 {
				return append(errs, field.InternalError(path, errors.New(msg))), -1
			}
			return append(errs, field.Invalid(path, typ, msg)), -1
		}
		if overBudget(o.cost, budget) {
			return append(errs, field.Invalid(path, typ, errOutOfBudget)), -1
		}
		budget -= int64(o.cost)
		if err := o.err; err != nil {
			switch msg := err.Error(); {
			case strings.HasPrefix(msg, "no such overload"):
				errs = append(errs, field.Invalid(path, typ, fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", err, ruleErrorString(rule))))
			case strings.HasPrefix(msg, "operation cancelled: actual cost limit exceeded"):
				return append(errs, field.Invalid(path, typ, fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", err, ruleErrorString(rule)))), -1
			default:
				errs = append(errs, field.Invalid(path, typ, fmt.Sprintf("%v evaluating rule: %v", err, ruleErrorString(rule))))
			}
			continue
		}
		if o.result == types.True {
			continue
		}
		at := path
		if c.NormalizedRuleFieldPath != "" {
			at = at.Child(c.NormalizedRuleFieldPath)
		}
		detail := ruleMessageOrDefault(rule)
		if c.MessageExpression != nil {
			msg, left, msgErr := messageOf(ev.outcome(i, true, c.MessageExpression, false), rule.MessageExpression, budget)
			switch {
			case msgErr == nil:
				detail, budget = msg, left
			case msgErr.Type == apiservercel.ErrorTypeInternal:
				return append(errs, field.InternalError(at, msgErr)), -1
			case msgErr.Type == apiservercel.ErrorTypeInvalid:
				return append(errs, field.Invalid(at, typ, msgErr.Error())), -1
			default:
				budget = left // the API server logs it and keeps the rule's message
			}
		}
		var value any = obj
		if typ == "object" || typ == "array" {
			value = field.OmitValueType{}
		}
		errs = append(errs, fieldErrorForReason(at, value, detail, rule.Reason))
	}
	ev.complete()
	return errs, budget
}

// activation resolves self, and oldSelf as an absent optional for a rule
// with optionalOldSelf: an object being created has no old self.
type activation struct {
	self            ref.Val
	optionalOldSelf bool
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch {
	case name == apiextcel.ScopedVarName:
		return a.self, true
	case name == apiextcel.OldScopedVarName && a.optionalOldSelf:
		return types.OptionalNone, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }
