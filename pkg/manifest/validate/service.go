package validate

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var serviceTypes = sets.New(corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort,
	corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)

// service checks a Service after the API server's defaults for the fields
// checked: type ClusterIP, port protocol TCP.
func service(s *corev1.Service) field.ErrorList {
	errs := metaOf(&s.ObjectMeta, true, nameIsDNS1035Label)
	spec := field.NewPath("spec")
	typ := s.Spec.Type
	if typ == "" {
		typ = corev1.ServiceTypeClusterIP
	}
	headless := s.Spec.ClusterIP == corev1.ClusterIPNone
	if !serviceTypes.Has(typ) {
		errs = append(errs, field.NotSupported(spec.Child("type"), typ, sets.List(serviceTypes)))
	}
	if len(s.Spec.Ports) == 0 && !headless && typ != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(spec.Child("ports"), ""))
	}
	if typ == corev1.ServiceTypeExternalName {
		cname := strings.TrimSuffix(s.Spec.ExternalName, ".")
		if cname == "" {
			errs = append(errs, field.Required(spec.Child("externalName"), ""))
		}
		for _, msg := range validation.IsDNS1123Subdomain(cname) {
			if cname != "" {
				errs = append(errs, field.Invalid(spec.Child("externalName"), cname, msg))
			}
		}
	}
	if ip := s.Spec.ClusterIP; ip != "" && !headless {
		if _, err := netip.ParseAddr(ip); err != nil {
			errs = append(errs, field.Invalid(spec.Child("clusterIP"), ip, `must be a valid IP address or "None"`))
		}
	}
	if s.Spec.Selector != nil {
		errs = append(errs, labels(s.Spec.Selector, spec.Child("selector"))...)
	}
	names := sets.New[string]()
	for i := range s.Spec.Ports {
		errs = append(errs, servicePort(&s.Spec.Ports[i], len(s.Spec.Ports) > 1, names, spec.Child("ports").Index(i))...)
	}
	return errs
}

// servicePort checks one port of a Service; names collects the port names
// seen so far.
func servicePort(p *corev1.ServicePort, requireName bool, names sets.Set[string], path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case p.Name == "" && requireName:
		errs = append(errs, field.Required(path.Child("name"), ""))
	case p.Name != "":
		errs = append(errs, dnsLabel(p.Name, path.Child("name"))...)
		if names.Has(p.Name) {
			errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
		}
		names.Insert(p.Name)
	}
	for _, msg := range validation.IsValidPortNum(int(p.Port)) {
		errs = append(errs, field.Invalid(path.Child("port"), p.Port, msg))
	}
	if p.Protocol != "" && !protocols.Has(p.Protocol) {
		errs = append(errs, field.NotSupported(path.Child("protocol"), p.Protocol, sets.List(protocols)))
	}
	if p.TargetPort.IntVal != 0 || p.TargetPort.StrVal != "" { // unset defaults to port
		errs = append(errs, portNumOrName(p.TargetPort, path.Child("targetPort"))...)
	}
	if p.AppProtocol != nil {
		errs = append(errs, qualifiedName(*p.AppProtocol, path.Child("appProtocol"))...)
	}
	if p.NodePort != 0 {
		for _, msg := range validation.IsValidPortNum(int(p.NodePort)) {
			errs = append(errs, field.Invalid(path.Child("nodePort"), p.NodePort, msg))
		}
	}
	return errs
}
