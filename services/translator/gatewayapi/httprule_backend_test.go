package gatewayapi

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
)

// TestWeightsAddUpTo32Bits checks that a rule whose weights add up to more
// than Envoy takes (possible only without the API server's limit of 16
// backendRefs) is dropped rather than made into invalid xDS.
func TestWeightsAddUpTo32Bits(t *testing.T) {
	var refs strings.Builder
	for i := range 4300 {
		fmt.Fprintf(&refs, "    - {name: app-%d, port: 80, weight: 1000000}\n", i%2)
	}
	y := namesInput("  - backendRefs:\n" + refs.String())
	y = strings.ReplaceAll(y, "metadata: {name: a, namespace: default}", "metadata: {name: app-0, namespace: default}")
	y = strings.ReplaceAll(y, "metadata: {name: b, namespace: default}", "metadata: {name: app-1, namespace: default}")
	idx, err := resourcestest.LoadAll(strings.NewReader(y), "weights")
	if err != nil {
		t.Fatal(err)
	}
	res := Translate(idx, gatewayclass.DefaultControllerName, types.NamespacedName{Namespace: "default", Name: "eg"})
	st := res.Statuses[len(res.Statuses)-1]
	accepted := st.GetParents()[0].GetConditions()[0]
	if accepted.GetStatus() != "False" || !strings.Contains(accepted.GetMessage(), "weights add up to 4300000000") {
		t.Errorf("Accepted = %v, want False saying the weights add up to 4300000000", accepted)
	}
}
