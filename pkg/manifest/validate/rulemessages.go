package validate

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// The messages of failed CEL rules, worded as the apiextensions-apiserver
// words them.

// messageOf reads the outcome of a failed rule's messageExpression src: it
// returns the message and what is left of budget, or an error whose Type
// says whether validation stops (Internal, Invalid) or goes on with the
// rule's own message (no Type).
func messageOf(o outcome, src string, budget int64) (string, int64, *apiservercel.Error) {
	result, err, cost := o.result, o.err, o.cost
	if o.costMissing != 0 {
		return "", -1, &apiservercel.Error{
			Type:   apiservercel.ErrorTypeInternal,
			Detail: fmt.Sprintf("runtime cost could not be calculated for messageExpression: %q", src),
		}
	}
	if overBudget(cost, budget) {
		return "", -1, &apiservercel.Error{
			Type:   apiservercel.ErrorTypeInvalid,
			Detail: "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run",
		}
	}
	left := budget - int64(cost)
	if err != nil {
		if strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded") {
			return "", -1, &apiservercel.Error{
				Type:   apiservercel.ErrorTypeInvalid,
				Detail: fmt.Sprintf("no further validation rules will be run due to call cost exceeds limit for messageExpression: %q", src),
			}
		}
		return "", left, &apiservercel.Error{Detail: fmt.Sprintf("messageExpression evaluation failed due to: %v", err.Error())}
	}
	msg, ok := result.Value().(string)
	if !ok {
		return "", left, &apiservercel.Error{Detail: "messageExpression failed to convert to string"}
	}
	msg = strings.TrimSpace(msg)
	switch {
	case len(msg) > celconfig.MaxEvaluatedMessageExpressionSizeBytes:
		return "", left, &apiservercel.Error{Detail: fmt.Sprintf("messageExpression beyond allowable length of %d", celconfig.MaxEvaluatedMessageExpressionSizeBytes)}
	case strings.Contains(msg, "\n"):
		return "", left, &apiservercel.Error{Detail: "messageExpression should not contain line breaks"}
	case msg == "":
		return "", left, &apiservercel.Error{Detail: "messageExpression should evaluate to a non-empty string"}
	}
	return msg, left, nil
}

// ruleMessageOrDefault is a failed rule's message, or "failed rule: " and
// the rule.
func ruleMessageOrDefault(rule apiextensionsv1.ValidationRule) string {
	if rule.Message == "" {
		return "failed rule: " + ruleErrorString(rule)
	}
	return strings.TrimSpace(rule.Message)
}

// ruleErrorString names a rule in an error: its message, or its expression.
func ruleErrorString(rule apiextensionsv1.ValidationRule) string {
	if rule.Message != "" {
		return strings.TrimSpace(rule.Message)
	}
	return strings.TrimSpace(rule.Rule)
}

// fieldErrorForReason is the error of a failed rule, of the type its reason
// asks for (Invalid when it gives none).
func fieldErrorForReason(path *field.Path, value any, detail string, reason *apiextensionsv1.FieldValueErrorReason) *field.Error {
	if reason == nil {
		return field.Invalid(path, value, detail)
	}
	switch *reason {
	case apiextensionsv1.FieldValueForbidden:
		return field.Forbidden(path, detail)
	case apiextensionsv1.FieldValueRequired:
		return field.Required(path, detail)
	case apiextensionsv1.FieldValueDuplicate:
		return field.Duplicate(path, value)
	}
	return field.Invalid(path, value, detail)
}
