// Package testkit holds the test helpers every gatewire module shares, so
// that each is written once:
//
//   - [Golden] compares an output with its golden file, or rewrites the
//     file when the test binary runs with the one -update flag this
//     package registers (go test ./... -update).
//   - [LogBuffer] collects log output from any goroutine; [Logger] and
//     [TestLogger] make slog loggers that write to it or to t.Log.
//   - [Eventually] and [EventuallyValue] poll a condition until a deadline
//     and fail the test, naming what was awaited, when it does not hold.
//   - [StartChild] runs the test binary again as a child process: a
//     proxyless gRPC client (gRPC-Go reads its xDS bootstrap from the
//     environment when its packages load, so each client is a process).
//   - [Conventions] checks a module's conventions: a package doc on every
//     package, imports that keep the services apart, and a goroutine-leak
//     check (goleak) in every test package.
//   - [CPUTime] is the process's CPU time, which benchmarks report per
//     operation beside the wall time, and [LoadAverage] the machine's load,
//     which they report beside both.
//
// Everything here is for tests only: no production package may import it.
// The helpers take a [testing.TB] and are safe to call from parallel tests
// unless their doc says otherwise.
package testkit
