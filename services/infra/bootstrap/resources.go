package bootstrap

import (
	"fmt"
	"net"
	"os"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	filelogv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/file/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// httpProtocolOptionsName is the key Envoy reads upstream HTTP protocol options
// under in typed_extension_protocol_options.
const httpProtocolOptionsName = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

func hostname() (string, error) {
	name, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("%w: %w", errNoHostname, err)
	}
	if name == "" {
		return "", errNoHostname
	}
	return name, nil
}

func dynamicResources() *bootstrapv3.Bootstrap_DynamicResources {
	ads := func() *corev3.ConfigSource {
		return &corev3.ConfigSource{
			ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
			ResourceApiVersion:    corev3.ApiVersion_V3,
		}
	}
	return &bootstrapv3.Bootstrap_DynamicResources{
		AdsConfig: &corev3.ApiConfigSource{
			ApiType:             corev3.ApiConfigSource_GRPC,
			TransportApiVersion: corev3.ApiVersion_V3,
			GrpcServices: []*corev3.GrpcService{{
				TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
					EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: XDSClusterName},
				},
			}},
			SetNodeOnFirstMessageOnly: true,
		},
		LdsConfig: ads(),
		CdsConfig: ads(),
	}
}

// xdsCluster is the static cluster of the xds service at address, over
// TLS when tls is not nil.
func xdsCluster(address string, tls *TLS) ([]*clusterv3.Cluster, error) {
	host, port, err := splitAddress(address)
	if err != nil {
		return nil, err
	}
	protocol, err := anypb.New(&httpv3.HttpProtocolOptions{
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{
			ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
					Http2ProtocolOptions: &corev3.Http2ProtocolOptions{
						ConnectionKeepalive: &corev3.KeepaliveSettings{
							Interval: durationpb.New(xdsKeepaliveInterval),
							Timeout:  durationpb.New(xdsKeepaliveTimeout),
						},
					},
				},
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("xds cluster protocol options: %w", err)
	}
	c := &clusterv3.Cluster{
		Name:                 XDSClusterName,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: discoveryType(host)},
		ConnectTimeout:       durationpb.New(xdsConnectTimeout),
		LoadAssignment: &endpointv3.ClusterLoadAssignment{
			ClusterName: XDSClusterName,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{
				LbEndpoints: []*endpointv3.LbEndpoint{{
					HostIdentifier: &endpointv3.LbEndpoint_Endpoint{
						Endpoint: &endpointv3.Endpoint{Address: socketAddress(host, port)},
					},
				}},
			}},
		},
		TypedExtensionProtocolOptions: map[string]*anypb.Any{httpProtocolOptionsName: protocol},
		UpstreamConnectionOptions: &clusterv3.UpstreamConnectionOptions{
			TcpKeepalive: &corev3.TcpKeepalive{
				KeepaliveProbes:   wrapperspb.UInt32(3),
				KeepaliveTime:     wrapperspb.UInt32(30),
				KeepaliveInterval: wrapperspb.UInt32(5),
			},
		},
	}
	if tls != nil {
		if err := tls.check(); err != nil {
			return nil, err
		}
		if c.TransportSocket, err = tls.transportSocket(sni(host)); err != nil {
			return nil, err
		}
	}
	if c.GetType() == clusterv3.Cluster_STRICT_DNS {
		// Prefer IPv4 but follow a name that only has IPv6 addresses.
		c.DnsLookupFamily = clusterv3.Cluster_V4_PREFERRED
	}
	return []*clusterv3.Cluster{c}, nil
}

func discoveryType(host string) clusterv3.Cluster_DiscoveryType {
	if net.ParseIP(host) != nil {
		return clusterv3.Cluster_STATIC
	}
	return clusterv3.Cluster_STRICT_DNS
}

func socketAddress(host string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{
		SocketAddress: &corev3.SocketAddress{
			Address:       host,
			PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
		},
	}}
}

func admin(port uint32) (*bootstrapv3.Admin, error) {
	fileLog, err := anypb.New(&filelogv3.FileAccessLog{Path: "/dev/null"})
	if err != nil {
		return nil, fmt.Errorf("admin access log: %w", err)
	}
	return &bootstrapv3.Admin{
		AccessLog: []*accesslogv3.AccessLog{{
			Name:       "envoy.access_loggers.file",
			ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: fileLog},
		}},
		Address: socketAddress(AdminAddress, port),
	}, nil
}

func layeredRuntime() *bootstrapv3.LayeredRuntime {
	return &bootstrapv3.LayeredRuntime{Layers: []*bootstrapv3.RuntimeLayer{
		{Name: "static", LayerSpecifier: &bootstrapv3.RuntimeLayer_StaticLayer{StaticLayer: &structpb.Struct{}}},
		{Name: "admin", LayerSpecifier: &bootstrapv3.RuntimeLayer_AdminLayer_{AdminLayer: &bootstrapv3.RuntimeLayer_AdminLayer{}}},
	}}
}
