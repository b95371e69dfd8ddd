package kube

import (
	"fmt"
	"regexp"
)

// Resources are a pod's CPU and memory, as Kubernetes quantities: both
// its request and its limit.
type Resources struct {
	CPU    string // "2500m"
	Memory string // "400Mi"
}

// The figures the sizing rests on (docs/performance.md): one core of
// llmrun handles about 45,000 output tokens a second, a stream in flight
// takes at most about 200 KiB of memory, and a stream of a fast server
// brings about 50 tokens a second (20 ms between tokens).
const (
	tokensPerCore   = 45000
	tokensPerStream = 50
	// cpuHeadroom keeps a pod's measured CPU well inside what it has, so
	// that its own scheduling delays stay out of the measured latencies.
	cpuHeadroom   = 2
	baseMilliCPU  = 250
	baseMemoryMiB = 128
	streamKiB     = 200
)

// Size is the CPU and memory of an instance that may have streams
// requests in flight at once (its share of the plan's VUs):
//
//	CPU    = 250m + 2 × streams × 50 / 45,000 cores
//	memory = 128 MiB + 200 KiB × streams
//
// each rounded up (to a millicore, to a MiB).
func Size(streams int) Resources {
	streams = max(streams, 0)
	milli := baseMilliCPU + ceilDiv(1000*cpuHeadroom*tokensPerStream*streams, tokensPerCore)
	mib := baseMemoryMiB + ceilDiv(streamKiB*streams, 1024)
	return Resources{CPU: fmt.Sprintf("%dm", milli), Memory: fmt.Sprintf("%dMi", mib)}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// cpuPattern and memoryPattern are the quantities --cpu and --memory take:
// cores ("2", "1.5") or millicores ("500m"); bytes with a binary or
// decimal suffix ("512Mi", "2G").
var (
	cpuPattern    = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?|[0-9]+m)$`)
	memoryPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?([KMGTPE]i?|k)?$`)
)

func (r Resources) check() error {
	if !cpuPattern.MatchString(r.CPU) {
		return fmt.Errorf("cpu %q: want cores (2, 1.5) or millicores (500m)", r.CPU)
	}
	if !memoryPattern.MatchString(r.Memory) {
		return fmt.Errorf("memory %q: want bytes with a suffix such as 512Mi or 2Gi", r.Memory)
	}
	return nil
}
