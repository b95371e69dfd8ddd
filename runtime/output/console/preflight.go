package console

import (
	"fmt"
	"strings"

	"github.com/llmrun/llmrun/runtime/summary"
	"github.com/llmrun/llmrun/runtime/textfmt"
)

// ProbeLine describes what a preflight probe showed of its target in one
// line: whether it answered, and how it streams.
func ProbeLine(p summary.Probe) string {
	head := p.Target
	if p.Model != "" {
		head += " (model " + p.Model + ")"
	}
	if !p.OK {
		return fmt.Sprintf("%s failed with %s: %s", head, p.Class, p.Error)
	}
	parts := []string{fmt.Sprintf("ok, first token in %s ms", textfmt.Millis(p.TTFT))}
	if p.TTFT == 0 && p.E2E > 0 {
		parts[0] = fmt.Sprintf("ok, answered in %s ms", textfmt.Millis(p.E2E))
	}
	if !p.Stream {
		parts = append(parts, "not streamed")
	}
	generated := p.Stream || p.OutputTokens > 0
	switch {
	case !p.UsageReported && !generated:
		// embeddings and rerank: no tokens generated, none to count
	case !p.UsageReported:
		parts = append(parts, "no usage reported (tokens counted by chunk or --tokenizer)")
	case p.TokensPerChunk > 0:
		parts = append(parts, fmt.Sprintf("usage reported, %.2f tokens per chunk", p.TokensPerChunk))
	default:
		parts = append(parts, "usage reported")
	}
	if p.Reasoning {
		parts = append(parts, "reasoning fields")
	}
	if p.PrefixCacheReported {
		parts = append(parts, "prefix-cache hits reported")
	}
	return head + ": " + strings.Join(parts, ", ")
}

// outcome prints, under the serving block, what the preflight showed of
// each target, why the run does not pass when it stopped early or
// measured no success (Summary.NoSuccess), and a warning when few of its
// requests succeeded (Summary.LowSuccess).
func (r *renderer) outcome(s *summary.Summary) {
	for _, p := range s.Preflight {
		line := ProbeLine(p)
		if !p.OK {
			line = r.st.Red(line)
		}
		r.printf("  preflight .......... %s\n", line)
	}
	switch {
	case s.EarlyStop != "":
		r.printf("  %s\n", r.st.Red("stopped early: "+s.EarlyStop))
	case s.NoSuccess() != "":
		r.printf("  %s\n", r.st.Red(s.NoSuccess()+"; the run does not pass"))
	}
	if s.LowSuccess != "" {
		r.printf("  %s\n", r.st.Red("WARNING: "+s.LowSuccess))
	}
}
