package llmsim

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// errStopped is returned to requests when the server closes.
var errStopped = errors.New("llmsim: server closed")

// engine simulates a continuous-batching inference engine with one
// goroutine (run); see the package documentation for its model.
type engine struct {
	cfg Config

	mu      sync.Mutex
	waiting []*sequence // FIFO; guarded by mu

	wake    chan struct{} // capacity 1: a request arrived
	quit    chan struct{} // closed by stop
	stopped chan struct{} // closed when run returns
	stop    func()

	// running and cache (the prefix cache, nil when off) are owned by
	// the run goroutine.
	running []*sequence
	cache   *prefixCache

	nRunning                  atomic.Int64
	received, completed       atomic.Uint64
	canceled, tokens          atomic.Uint64
	prefillSteps, decodeSteps atomic.Uint64
	// The prefix cache's counters: prompt tokens looked up and found, and
	// the blocks it holds.
	prefixQueries, prefixHits atomic.Uint64
	prefixBlocks              atomic.Int64

	// The figures of GET /metrics that Stats has no field for: the
	// prompt tokens of the sequences past their prefill, the KV blocks
	// the running sequences hold (kvUsed, published as kvBlocks; kvRefs
	// counts the running sequences that share each cached prompt
	// block), the requests' histograms and the GPUs' load. kvUsed,
	// kvRefs and loadRunning are the run goroutine's.
	promptTokens atomic.Uint64
	kvBlocks     atomic.Int64
	kvUsed       int
	kvRefs       map[uint64]int
	requests     *requestMetrics
	epoch        time.Time // the sequences' timelines count from it
	gpus         *gpuLoad
	loadRunning  int
}

// startEngine starts the engine goroutine; stop ends it.
func startEngine(cfg Config) *engine {
	e := newEngine(cfg)
	go e.run()
	return e
}

// newEngine returns an engine whose goroutine is not started.
func newEngine(cfg Config) *engine {
	e := &engine{
		cfg:      cfg,
		cache:    newPrefixCache(cfg.PrefixCacheBlocks),
		wake:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		stopped:  make(chan struct{}),
		kvRefs:   map[uint64]int{},
		requests: newRequestMetrics(cfg.MaxModelLen),
		epoch:    time.Now(),
	}
	e.gpus = newGPULoad(cfg, e.epoch)
	e.stop = sync.OnceFunc(func() {
		close(e.quit)
		<-e.stopped
	})
	return e
}

// submit queues s, or fails when the engine has stopped.
func (e *engine) submit(s *sequence) error {
	e.mu.Lock()
	select {
	case <-e.quit:
		e.mu.Unlock()
		return errStopped
	default:
	}
	s.queued, s.arrival = time.Since(e.epoch), s.arrived.Sub(e.epoch)
	e.waiting = append(e.waiting, s)
	e.mu.Unlock()
	e.received.Add(1)
	select {
	case e.wake <- struct{}{}:
	default:
	}
	return nil
}

// wait blocks until s has more than have tokens and returns how many it
// has. It fails when ctx ends or when the engine stops before s grows.
func (e *engine) wait(ctx context.Context, s *sequence, have int) (int, error) {
	for {
		if n := int(s.produced.Load()); n > have {
			return n, nil
		}
		select {
		case <-s.ready:
		case <-ctx.Done():
			return have, ctx.Err()
		case <-e.stopped:
			if n := int(s.produced.Load()); n > have {
				return n, nil
			}
			return have, errStopped
		}
	}
}

// run is the engine loop: release finished and abandoned sequences, admit
// waiting ones, run one prefill or decode step on an absolute timeline, and
// block while there is nothing to do.
func (e *engine) run() {
	defer close(e.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	deadline := time.Now()
	for {
		now := time.Now()
		e.release()
		admitted, prefillTokens := e.admit(now)
		e.publishBatch()
		if n := len(e.running); n != e.loadRunning {
			e.gpus.set(now, n)
			e.loadRunning = n
		}
		if len(e.running) == 0 {
			select {
			case <-e.wake:
				deadline = time.Now()
				continue
			case <-e.quit:
				return
			}
		}

		batch := e.running
		var step time.Duration
		if admitted > 0 {
			batch = e.running[len(e.running)-admitted:]
			step = e.cfg.PrefillBase + time.Duration(prefillTokens)*e.cfg.PrefillPerToken
			e.prefillSteps.Add(1)
		} else {
			step = e.cfg.DecodeBase + time.Duration(len(e.running))*e.cfg.DecodePerSeq
			e.decodeSteps.Add(1)
		}
		deadline = deadline.Add(step)
		if now := time.Now(); deadline.Before(now) {
			deadline = now // fell behind: resume from now, don't burst
		}
		timer.Reset(time.Until(deadline))
		select {
		case <-timer.C:
		case <-e.quit:
			return
		}
		if admitted > 0 {
			e.cacheBlocks(batch)
		}
		e.emit(batch, time.Now())
	}
}

// cacheBlocks puts the blocks of a prefill step's sequences, whose KV it
// computed, into the prefix cache.
func (e *engine) cacheBlocks(batch []*sequence) {
	if e.cache == nil {
		return
	}
	for _, s := range batch {
		e.cache.touch(s.blocks)
	}
	e.prefixBlocks.Store(int64(e.cache.len()))
}

// cachedTokens returns the prompt tokens of s that the prefix cache holds:
// those of its leading cached blocks, but never its whole prompt, one
// token of which is always prefilled (to yield the first output token).
func (e *engine) cachedTokens(s *sequence) int {
	if e.cache == nil || len(s.blocks) == 0 {
		return 0
	}
	blocks := s.blocks[:min(len(s.blocks), (s.promptTokens-1)/PrefixBlockTokens)]
	return e.cache.match(blocks) * PrefixBlockTokens
}

// emit gives each sequence of batch its next token, made at now. The
// metrics count the tokens, and the requests they finish, before any
// handler sees them: a client that has read its last token finds its
// request in /metrics.
func (e *engine) emit(batch []*sequence, now time.Time) {
	m := e.requests
	m.mu.Lock()
	stepTokens := len(batch)
	at := now.Sub(e.epoch)
	for _, s := range batch {
		stepTokens += e.tokenMade(s, at)
	}
	m.iterationTokens.observe(float64(stepTokens))
	m.mu.Unlock()
	e.tokens.Add(uint64(len(batch)))
	e.kvBlocks.Store(int64(e.kvUsed))
	for _, s := range batch {
		s.advance()
	}
}

// release frees the slots of sequences that are finished or whose client
// has gone. It publishes the freed slots and KV blocks before it counts
// the sequences completed or canceled: a reader who finds a request
// ended in /stats finds its slot and its blocks free in /metrics.
func (e *engine) release() {
	kept := e.running[:0]
	var completed, canceled uint64
	for _, s := range e.running {
		switch {
		case s.finished():
			completed++
			e.kvFree(s)
		case s.gone():
			canceled++
			e.kvFree(s)
		default:
			kept = append(kept, s)
		}
	}
	clear(e.running[len(kept):])
	e.running = kept
	e.publishBatch()
	e.completed.Add(completed)
	e.canceled.Add(canceled)
}

// publishBatch publishes the number of running sequences and the KV
// blocks they hold, the blocks first: a reader who sees a sequence
// admitted sees the blocks it holds.
func (e *engine) publishBatch() {
	e.kvBlocks.Store(int64(e.kvUsed))
	e.nRunning.Store(int64(len(e.running)))
}

// admit moves waiting sequences into free slots in FIFO order, within the
// prefill token budget (the first one always fits), and drops waiting
// sequences whose client has gone. It returns how many it admitted and
// the prompt tokens they prefill: those the prefix cache does not hold.
// The admitted sequences are scheduled at now, or when they were queued
// if that is later: submit may queue one after the engine read now.
func (e *engine) admit(now time.Time) (admitted, prefillTokens int) {
	free := e.cfg.MaxNumSeqs - len(e.running)
	e.mu.Lock()
	defer e.mu.Unlock()
	kept := e.waiting[:0]
	full := false
	for _, s := range e.waiting {
		if s.gone() {
			e.canceled.Add(1)
			continue
		}
		if !full && admitted < free {
			cached := e.cachedTokens(s)
			if n := s.promptTokens - cached; admitted == 0 || prefillTokens+n <= e.cfg.MaxNumBatchedTokens {
				e.running = append(e.running, s)
				s.scheduled = max(now.Sub(e.epoch), s.queued)
				e.kvAdmit(s)
				admitted++
				prefillTokens += n
				if s.cacheable {
					s.cached.Store(int64(cached))
					e.prefixQueries.Add(uint64(s.promptTokens))
					e.prefixHits.Add(uint64(cached))
				}
				continue
			}
		}
		full = true
		kept = append(kept, s)
	}
	clear(e.waiting[len(kept):])
	e.waiting = kept
	return admitted, prefillTokens
}

// queued returns the number of waiting sequences.
func (e *engine) queued() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.waiting)
}
