package validate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Object defaults obj in place and returns every reason the API server would
// refuse to create it, as field errors whose paths start at the object's root
// ("spec.listeners[0].port"), sorted by path so that the same object always
// gives the same list (an error on the object as a whole, Field "<nil>",
// comes last). obj is the object as JSON decodes it, with
// integers as int64 (sigs.k8s.io/json's UnmarshalCaseSensitivePreserveInts);
// it must name its apiVersion and kind. A kind the package does not know is
// an error on the kind field.
//
// The caller owns obj; Object keeps no reference to it. Defaults are applied
// even when the object is invalid.
func Object(obj map[string]any) field.ErrorList {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group, version := splitAPIVersion(apiVersion)
	var errs field.ErrorList
	if c := crds[kind]; c != nil && group == GatewayGroup {
		errs = gatewayObject(c, version, obj)
	} else if check := coreKinds[group+"/"+kind]; check != nil && version == "v1" {
		errs = check(obj)
	} else {
		errs = field.ErrorList{field.NotSupported(field.NewPath("kind"), apiVersion+", Kind="+kind, supportedKinds())}
	}
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		return cmp.Or(compareBool(a.Field == "<nil>", b.Field == "<nil>"), cmp.Compare(a.Field, b.Field))
	})
	return errs
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// gatewayObject checks a Gateway API object as the apiextensions-apiserver
// does on create (customresource strategy Validate, after the decoding
// codec's null pruning and defaulting).
func gatewayObject(c *crd, version string, obj map[string]any) field.ErrorList {
	s, err := c.schema(version)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	delete(obj, "status")
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s.structural)
	structuraldefaulting.Default(obj, s.structural)

	errs := objectMeta(obj, c.namespaced, nameIsDNSSubdomain)
	if !s.quick.check(obj) {
		errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, s.openAPI)...)
	}
	ctx := context.Background()
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, s.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	if s.rules == nil {
		return errs
	}
	if blocked := blockingError(errs); blocked != nil {
		return append(errs, blocked)
	}
	celErrs, _ := s.rules.validate(ctx, nil, obj, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// blockingError returns the API server's error for CEL rules left unchecked
// (an error on the whole object, its Field "<nil>") when errs holds an error that makes evaluating them unsafe (a missing or
// mistyped field, an enum or a size violation), nil otherwise.
func blockingError(errs field.ErrorList) *field.Error {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong,
			field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}

func splitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

// supportedKinds lists the kinds Object knows, for its error message.
func supportedKinds() []string {
	out := make([]string, 0, len(crds)+len(coreKinds))
	for _, k := range GatewayKinds() {
		out = append(out, fmt.Sprintf("%s/v1, Kind=%s", GatewayGroup, k))
	}
	return append(out, coreKindNames()...)
}
