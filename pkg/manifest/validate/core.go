package validate

import (
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// coreKinds holds the check of each core kind, by "<group>/<kind>". Core
// objects are not modified, but for the label the API server gives every
// Namespace: the defaults the checks assume are applied to a typed copy.
var coreKinds = map[string]func(obj map[string]any) field.ErrorList{
	"/Namespace":                     withNameLabel(typed(namespace)),
	"/Service":                       typed(service),
	"/Secret":                        typed(secret),
	"/ConfigMap":                     typed(configMap),
	"discovery.k8s.io/EndpointSlice": typed(endpointSlice),
}

func coreKindNames() []string {
	out := make([]string, 0, len(coreKinds))
	for k := range coreKinds {
		group, kind, _ := strings.Cut(k, "/")
		if group == "" {
			out = append(out, "v1, Kind="+kind)
		} else {
			out = append(out, group+"/v1, Kind="+kind)
		}
	}
	sort.Strings(out)
	return out
}

// typed adapts a check of a typed object to the unstructured form.
func typed[T any](check func(*T) field.ErrorList) func(map[string]any) field.ErrorList {
	return func(obj map[string]any) field.ErrorList {
		var t T
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &t); err != nil {
			return field.ErrorList{field.Invalid(nil, nil, err.Error())}
		}
		return check(&t)
	}
}

// withNameLabel sets the label kubernetes.io/metadata.name of a Namespace to
// its name, as the API server does on create (so that a Gateway's
// allowedRoutes selector on that label matches as in a cluster), then runs
// check.
func withNameLabel(check func(map[string]any) field.ErrorList) func(map[string]any) field.ErrorList {
	return func(obj map[string]any) field.ErrorList {
		if meta, ok := obj["metadata"].(map[string]any); ok {
			if name, ok := meta["name"].(string); ok {
				labels, _ := meta["labels"].(map[string]any)
				if labels == nil {
					labels = map[string]any{}
					meta["labels"] = labels
				}
				labels[corev1.LabelMetadataName] = name
			}
		}
		return check(obj)
	}
}

var protocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)

func namespace(ns *corev1.Namespace) field.ErrorList {
	return metaOf(&ns.ObjectMeta, false, nameIsDNSLabel)
}

func secret(s *corev1.Secret) field.ErrorList {
	errs := metaOf(&s.ObjectMeta, true, nameIsDNSSubdomain)
	data := map[string][]byte{}
	for k, v := range s.Data {
		data[k] = v
	}
	for k, v := range s.StringData { // the API server merges stringData into data
		data[k] = []byte(v)
	}
	errs = append(errs, keys(field.NewPath("data"), data, nil)...)
	if s.Type == corev1.SecretTypeTLS {
		for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			if _, ok := data[k]; !ok {
				errs = append(errs, field.Required(field.NewPath("data").Key(k), ""))
			}
		}
	}
	return errs
}

func configMap(c *corev1.ConfigMap) field.ErrorList {
	errs := metaOf(&c.ObjectMeta, true, nameIsDNSSubdomain)
	data := make(map[string][]byte, len(c.Data))
	for k, v := range c.Data {
		data[k] = []byte(v)
	}
	errs = append(errs, keys(field.NewPath("data"), data, c.BinaryData)...)
	for k := range c.BinaryData {
		if _, dup := c.Data[k]; dup {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, "duplicate of key present in binaryData"))
		}
	}
	return errs
}

// keys checks the keys of a Secret's or ConfigMap's data (and binaryData)
// and their total size.
func keys(path *field.Path, data, binary map[string][]byte) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for _, m := range []map[string][]byte{data, binary} {
		for k, v := range m {
			for _, msg := range validation.IsConfigMapKey(k) {
				errs = append(errs, field.Invalid(path.Key(k), k, msg))
			}
			size += len(v)
		}
	}
	if size > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(path, "", corev1.MaxSecretSize))
	}
	return errs
}

func endpointSlice(s *discoveryv1.EndpointSlice) field.ErrorList {
	errs := metaOf(&s.ObjectMeta, true, nameIsDNSSubdomain)
	switch s.AddressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN:
	case "":
		errs = append(errs, field.Required(field.NewPath("addressType"), ""))
	default:
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), s.AddressType,
			[]string{"FQDN", "IPv4", "IPv6"}))
	}
	errs = append(errs, endpoints(s.Endpoints, s.AddressType)...)
	names := sets.New[string]()
	for i, p := range s.Ports {
		path := field.NewPath("ports").Index(i)
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if name != "" {
			errs = append(errs, dnsLabel(name, path.Child("name"))...)
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(path.Child("name"), name))
		}
		names.Insert(name)
		if p.Protocol != nil && !protocols.Has(*p.Protocol) { // nil defaults to TCP
			errs = append(errs, field.NotSupported(path.Child("protocol"), *p.Protocol, sets.List(protocols)))
		}
		if p.AppProtocol != nil {
			errs = append(errs, qualifiedName(*p.AppProtocol, path.Child("appProtocol"))...)
		}
	}
	return errs
}

// endpoints checks an EndpointSlice's endpoints and their addresses.
func endpoints(eps []discoveryv1.Endpoint, addressType discoveryv1.AddressType) field.ErrorList {
	const maxEndpoints, maxAddresses = 1000, 100
	path := field.NewPath("endpoints")
	if len(eps) > maxEndpoints {
		return field.ErrorList{field.TooMany(path, len(eps), maxEndpoints)}
	}
	var errs field.ErrorList
	for i, ep := range eps {
		addrs := path.Index(i).Child("addresses")
		switch {
		case len(ep.Addresses) == 0:
			errs = append(errs, field.Required(addrs, "must contain at least 1 address"))
		case len(ep.Addresses) > maxAddresses:
			errs = append(errs, field.TooMany(addrs, len(ep.Addresses), maxAddresses))
		}
		for j, a := range ep.Addresses {
			errs = append(errs, address(a, addressType, addrs.Index(j))...)
		}
		if ep.Hostname != nil {
			errs = append(errs, dnsLabel(*ep.Hostname, path.Index(i).Child("hostname"))...)
		}
	}
	return errs
}

// address checks one endpoint address against the slice's address type.
func address(a string, addressType discoveryv1.AddressType, path *field.Path) field.ErrorList {
	switch addressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		ip, err := netip.ParseAddr(a)
		switch {
		case err != nil || ip.Zone() != "":
			return field.ErrorList{field.Invalid(path, a, "must be a valid IP address")}
		case addressType == discoveryv1.AddressTypeIPv4 && !ip.Is4():
			return field.ErrorList{field.Invalid(path, a, "must be an IPv4 address")}
		case addressType == discoveryv1.AddressTypeIPv6 && (!ip.Is6() || ip.Is4In6()):
			return field.ErrorList{field.Invalid(path, a, "must be an IPv6 address")}
		}
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(path, a)
	}
	return nil
}

func dnsLabel(s string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(s) {
		errs = append(errs, field.Invalid(path, s, msg))
	}
	return errs
}

func qualifiedName(s string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(s) {
		errs = append(errs, field.Invalid(path, s, msg))
	}
	return errs
}

// labels checks a label map, such as a Service selector.
func labels(m map[string]string, path *field.Path) field.ErrorList {
	return metavalidation.ValidateLabels(m, path)
}

// portNumOrName checks a Service port's targetPort.
func portNumOrName(p intstr.IntOrString, path *field.Path) field.ErrorList {
	var msgs []string
	var v any
	if p.Type == intstr.Int {
		msgs, v = validation.IsValidPortNum(p.IntValue()), p.IntValue()
	} else {
		msgs, v = validation.IsValidPortName(p.StrVal), p.StrVal
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, v, msg))
	}
	return errs
}
