package kube

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// checkMetadata checks the labels and annotations a proxy asks for (a
// Gateway's spec.infrastructure) as the API server would: the API server
// checked them on the Gateway, but a file provider has no API server.
func checkMetadata(proxy *busv1.Proxy) error {
	errs := metavalidation.ValidateLabels(proxy.GetLabels(), field.NewPath("labels"))
	errs = append(errs, validation.ValidateAnnotations(proxy.GetAnnotations(), field.NewPath("annotations"))...)
	if len(errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalid, errs.ToAggregate())
	}
	return nil
}

// withOurs returns the labels or annotations a proxy asks for with ours
// added: where a key is in both, ours wins, as gatewire finds and prunes its
// objects by them.
func withOurs(user, ours map[string]string) map[string]string {
	out := make(map[string]string, len(user)+len(ours))
	maps.Copy(out, user)
	maps.Copy(out, ours)
	return out
}
