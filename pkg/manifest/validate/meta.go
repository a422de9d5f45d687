package validate

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Name rules of the kinds: most names are DNS-1123 subdomains; Namespace
// names are DNS-1123 labels and Service names DNS-1035 labels.
var (
	nameIsDNSSubdomain = apivalidation.NameIsDNSSubdomain
	nameIsDNSLabel     = apivalidation.NameIsDNSLabel
	nameIsDNS1035Label = apivalidation.NameIsDNS1035Label
)

// objectMeta checks obj's metadata as the API server does on create
// (apimachinery's ValidateObjectMeta: name, namespace, labels, annotations,
// owner references, finalizers). Like the server, which takes the namespace
// of a namespaced object from the request (kubectl's default namespace) and
// clears it on a cluster-scoped one, it checks the namespace the object will
// have: "default" when a namespaced object names none.
func objectMeta(obj map[string]any, namespaced bool, name apivalidation.ValidateNameFunc) field.ErrorList {
	path := field.NewPath("metadata")
	raw, ok := obj["metadata"].(map[string]any)
	if !ok {
		return field.ErrorList{field.Required(path, "")}
	}
	var meta metav1.ObjectMeta
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &meta); err != nil {
		return field.ErrorList{field.Invalid(path, nil, err.Error())}
	}
	return metaOf(&meta, namespaced, name)
}

// metaOf checks a typed object's metadata like objectMeta. It does not
// modify meta.
func metaOf(meta *metav1.ObjectMeta, namespaced bool, name apivalidation.ValidateNameFunc) field.ErrorList {
	m := *meta
	m.ManagedFields = nil // the API server's field manager replaces them
	switch {
	case !namespaced:
		m.Namespace = ""
	case m.Namespace == "":
		m.Namespace = metav1.NamespaceDefault
	}
	return apivalidation.ValidateObjectMeta(&m, namespaced, name, field.NewPath("metadata"))
}
