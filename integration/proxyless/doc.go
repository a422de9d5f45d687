// Package proxyless tests gatewire serving proxyless gRPC clients end to
// end: an embedded JetStream server, the translator and xds services in
// process, real gRPC backends on loopback, and gRPC-Go clients that dial
// xds:///<hostname> with gatewire as their xDS server.
//
// gRPC-Go reads its xDS bootstrap from the environment when its packages
// load, so the clients run in a child process: the test binary itself, run
// with the bootstrap set and -test.run selecting [TestClientProcess]. The
// parent sends it one JSON call request per line on its standard input and
// reads one result per line from its standard output.
package proxyless
