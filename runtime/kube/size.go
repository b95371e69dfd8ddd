package kube

import (
	"fmt"
	"regexp"
	"strconv"
)

// Resources are a pod's CPU and memory, as Kubernetes quantities. Both
// are requested; the memory is also the pod's limit, and llmrun's Go
// runtime is told to stay under 90 % of it (GOMEMLIMIT), since its
// collector would otherwise let the heap grow up to 256 MiB past the live heap
// (runtime/gctune), well beyond a small pod's limit. The CPU is not
// limited: a pod that used its quota would be throttled until the next
// period (100 ms), and the requests it was reading would measure that
// pause as the server's latency.
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
	memoryPattern = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?)([kMGTPE]|[KMGTPE]i)?$`)
)

func (r Resources) check() error {
	if !cpuPattern.MatchString(r.CPU) {
		return fmt.Errorf("cpu %q: want cores (2, 1.5) or millicores (500m)", r.CPU)
	}
	b, err := r.memoryBytes()
	if err == nil && b < baseMemoryMiB<<20 {
		err = fmt.Errorf("memory %q: want at least %dMi, what llmrun needs before its first stream", r.Memory, baseMemoryMiB)
	}
	return err
}

// memorySuffixes are the multipliers of a memory quantity's suffixes.
var memorySuffixes = map[string]float64{
	"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
	"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60,
}

// memoryBytes is the memory in bytes.
func (r Resources) memoryBytes() (float64, error) {
	m := memoryPattern.FindStringSubmatch(r.Memory)
	if m == nil {
		return 0, fmt.Errorf("memory %q: want bytes, with a suffix such as 512Mi, 2Gi or 2G", r.Memory)
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("memory %q: %w", r.Memory, err)
	}
	return n * memorySuffixes[m[3]], nil
}

// goMemLimit is the GOMEMLIMIT of a pod with these resources: 90 % of
// its memory, in bytes, leaving the rest to goroutine stacks and what
// the Go runtime holds beyond its heap.
func (r Resources) goMemLimit() (string, error) {
	b, err := r.memoryBytes()
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(int64(0.9*b), 10), nil
}
