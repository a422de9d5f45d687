package xdsgen

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// Cluster returns the EDS cluster of an IR backend, named like it; its
// endpoints are the ClusterLoadAssignment of the same name over ADS.
func Cluster(b *irv1.Backend) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 b.GetName(),
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource()},
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
	}
}
