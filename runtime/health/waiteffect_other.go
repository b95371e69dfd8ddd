//go:build !linux

package health

// waitEffect is what goroutines waiting for a CPU did to the measurement:
// elsewhere than Linux token times are the reader's, and include it.
const waitEffect = "measured latencies and arrival times include that wait"
