package host

import "syscall"

// sysProcAttr has the kernel send an Envoy SIGTERM when the infra service dies
// without stopping it, so no orphan keeps its ports and base id.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
