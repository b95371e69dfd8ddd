package vllmbench

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/llmrun/llmrun/modules"
	"github.com/llmrun/llmrun/modules/llm"
	"github.com/llmrun/llmrun/modules/llm/llmjs"
)

// ModuleName is the import name of the Collector's module in the
// benchmark's script.
const ModuleName = "llmrun/vllmbench"

// Request is what vLLM's result keeps of one request (its
// RequestFuncOutput), from the request's llm.Result: its start (when it
// was sent), latencies in ms, the gaps between token-bearing chunks, the
// text and the error with its class.
type Request struct {
	Start        time.Time
	OK           bool
	TTFT, TPOT   float64
	E2E          float64
	InputTokens  int
	OutputTokens int
	ITL          []float64
	Text, Error  string
	// Class is the failure's class, "" when OK.
	Class        llm.ErrorClass
	RequestedLen int // the prompt length the dataset asked for, 0 when unknown
	// spilled is where Text lies in the Collector's TextSpill, which then
	// holds it instead of Text.
	spilled textRef
}

// NewCollector returns the Collector of a run of o, with the lengths
// and prefixes its requests are drawn (randomLengths, prefixOrder).
func NewCollector(o Options) *Collector {
	c := &Collector{Prompts: o.requests()}
	switch o.DatasetName {
	case "random":
		c.Inputs, c.Outputs = o.randomLengths()
	case RerankDataset:
		docs, _ := o.rerankDocs()
		_, c.Inputs = o.rerankLengths(docs)
		c.Outputs = make([]int, len(c.Inputs))
	case "prefix_repetition":
		c.Prefixes = o.PrefixRepetition.prefixOrder(o.NumPrompts, o.Seed)
	case "random-mm":
		c.Inputs, c.Outputs = o.randomLengths()
		c.Images = o.RandomMM.imageSizes(len(c.Inputs), o.Seed)
	}
	return c
}

// Collector is the benchmark script's module and the run's sink of
// results (engine.Config.Results): it keeps what vLLM's result needs of
// each request as the llm module hands over its Result. Warmup requests,
// and requests the run itself cut (error class "canceled"), reach it no
// more than llmrun's records (llmjs.Hooks). The module's sequence() numbers the
// run's requests across VUs in the order they start: 0, 1, 2… for the
// benchmark's, Prompts, Prompts+1… for the warmup's.
type Collector struct {
	// Prompts is the number of the benchmark's requests (--num-prompts):
	// the warmup's are numbered after them.
	Prompts int
	// Inputs and Outputs are the random dataset's lengths of each
	// request, by its number; Prefixes the prefix_repetition dataset's
	// prefix of each. Held here, once for the run, not in the script,
	// which every VU evaluates: the script's lengths(i) and prefix(i)
	// read them.
	Inputs, Outputs, Prefixes []int
	// Images are the random-mm dataset's image sizes ([width, height])
	// of each request, by its number: the script's images(i).
	Images [][][2]int

	// spill, when set, holds the requests' texts (--save-detailed,
	// whose script alone keeps them).
	spill *TextSpill

	mu       sync.Mutex
	requests []Request

	sent, warmups atomic.Int64
}

var (
	_ modules.Module   = (*Collector)(nil)
	_ llmjs.ResultSink = (*Collector)(nil)
)

// NewInstance implements modules.Module.
func (c *Collector) NewInstance(vu modules.VU) (modules.Instance, error) {
	exports := vu.Runtime().NewObject()
	sequence := func() int64 {
		if st := vu.State(); st != nil && st.Warmup {
			return int64(c.Prompts) + c.warmups.Add(1) - 1
		}
		return c.sent.Add(1) - 1
	}
	lengths := func(i int) [2]int { return [2]int{c.Inputs[i], c.Outputs[i]} }
	prefix := func(i int) int { return c.Prefixes[i%len(c.Prefixes)] }
	images := func(i int) [][2]int { return c.Images[i] }
	for name, f := range map[string]any{"sequence": sequence, "lengths": lengths, "prefix": prefix, "images": images} {
		if err := exports.Set(name, f); err != nil {
			return nil, fmt.Errorf("%s module: %w", ModuleName, err)
		}
	}
	return collectorInstance{exports}, nil
}

type collectorInstance struct{ exports *goja.Object }

func (i collectorInstance) Exports() *goja.Object { return i.exports }

// AddResult implements llmjs.ResultSink: it keeps what vLLM's result
// needs of the request res measured.
func (c *Collector) AddResult(res *llm.Result) {
	c.add(Request{
		Start: res.Start, OK: res.OK, TTFT: res.TTFT, TPOT: res.TPOT, E2E: res.E2E,
		InputTokens: res.PromptTokens, OutputTokens: res.OutputTokens, ITL: slices.Clone(res.ITL),
		Text: res.Text, Error: res.Error, Class: res.Class, RequestedLen: res.RequestedPromptTokens,
	})
}

// add keeps r, its text in the TextSpill when there is one.
func (c *Collector) add(r Request) {
	if c.spill != nil {
		r.spilled, r.Text = c.spill.add(r.Text), ""
	}
	c.mu.Lock()
	c.requests = append(c.requests, r)
	c.mu.Unlock()
}

// SpillTexts has the Collector keep the requests' texts (--save-detailed)
// in s rather than in memory; it is called before the run. Run.Texts
// then names s.
func (c *Collector) SpillTexts(s *TextSpill) { c.spill = s }

// Requests returns the requests kept, in the order they started.
func (c *Collector) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.requests)
	slices.SortStableFunc(out, func(a, b Request) int { return a.Start.Compare(b.Start) })
	return out
}
