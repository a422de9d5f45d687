package gatewayapi

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/services/translator/resources/resourcestest"
)

// TestControllerNameIsAnInput checks that the controller name given to the
// translation decides which classes are gatewire's, and is the
// controllerName of the route statuses: with a name of its own, the
// class naming the default name is another controller's.
func TestControllerNameIsAnInput(t *testing.T) {
	const custom = "example.com/gateway-controller"
	y := gatewaytest.GatewayClass() + gatewaytest.ClassOf("custom", custom) +
		gatewaytest.Gateway("default", "eg") + gatewaytest.GatewayOfClass("custom", "default", "mine", "http", 80) +
		gatewaytest.Route{Namespace: "default", Name: "to-mine", Gateway: "mine", Hostname: "a.example.com", Service: "app"}.String() +
		gatewaytest.Service("default", "app")
	idx, err := resourcestest.Load(strings.NewReader(y), "controller")
	if err != nil {
		t.Fatal(err)
	}
	eg, mine := types.NamespacedName{Namespace: "default", Name: "eg"}, types.NamespacedName{Namespace: "default", Name: "mine"}
	for _, c := range []struct {
		controller      string
		ours, theirs    types.NamespacedName
		class, notClass string
	}{
		{gatewayclass.DefaultControllerName, eg, mine, "gatewire", "custom"},
		{custom, mine, eg, "custom", "gatewire"},
	} {
		if res := Translate(idx, c.controller, c.theirs); res != nil {
			t.Errorf("%s: Gateway %s of another controller translated", c.controller, c.theirs)
		}
		if res := NewTranslator(idx, c.controller).Translate(c.theirs); res != nil {
			t.Errorf("%s: Translator: Gateway %s of another controller translated", c.controller, c.theirs)
		}
		if res := Translate(idx, c.controller, c.ours); res == nil || len(res.IR.GetListeners()) != 1 {
			t.Errorf("%s: Gateway %s not translated: %v", c.controller, c.ours, res)
		}
		if TranslateClass(idx, c.controller, c.class) == nil || TranslateClass(idx, c.controller, c.notClass) != nil {
			t.Errorf("%s: class %s should have a status, class %s none", c.controller, c.class, c.notClass)
		}
	}
	res := NewTranslator(idx, custom).Translate(mine)
	route := res.Statuses[len(res.Statuses)-1]
	if got := route.GetParents()[0].GetControllerName(); route.GetObject().GetName() != "to-mine" || got != custom {
		t.Errorf("status of %s: controllerName %q, want %q", route.GetObject().GetName(), got, custom)
	}
}
