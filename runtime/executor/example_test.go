package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"sync/atomic"
	"time"

	"github.com/llmrun/llmrun/runtime/executor"
)

// A scenario's executor settings are decoded, as the engine does with a
// script's options.scenarios, into the default configuration New returns
// for its name. An arrival-rate configuration plans its iteration starts
// in advance: its Schedule, drawn from the scenario's seed for Poisson
// arrivals, exact for constant ones.
func ExampleNew() {
	cfg, err := executor.New("constant-arrival-rate")
	if err != nil {
		log.Fatal(err)
	}
	options := `{"rate": 4, "timeUnit": "1s", "duration": "1s", "preAllocatedVUs": 2, "maxVUs": 8}`
	if err := json.Unmarshal([]byte(options), cfg); err != nil {
		log.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Describe())
	fmt.Println("VUs:", cfg.PreAllocatedVUs(), "initialised before the run,", cfg.MaxVUs(), "at most; lasts at most", cfg.MaxDuration())

	schedule := cfg.(*executor.ConstantArrivalRate).Schedule(executor.SeedFor(1, "default"))
	for {
		start, ok := schedule.Next()
		if !ok {
			break
		}
		fmt.Println("iteration at", start)
	}
	// Output:
	// 4 iterations per second for 1s, constant arrivals (preAllocatedVUs 2, maxVUs 8, gracefulStop 30s)
	// VUs: 2 initialised before the run, 8 at most; lasts at most 31s
	// iteration at 0s
	// iteration at 250ms
	// iteration at 500ms
	// iteration at 750ms
}

// countingVU is a VU whose iterations only count themselves.
type countingVU struct{ iterations *atomic.Int64 }

func (v countingVU) RunIteration(context.Context) { v.iterations.Add(1) }

// fixedPool hands the executor the VUs it was made with and creates none.
type fixedPool []executor.VU

func (p fixedPool) VUs() []executor.VU { return p }

func (p fixedPool) NewVU(context.Context) (executor.VU, error) {
	return nil, fmt.Errorf("this pool creates no VU")
}

func (fixedPool) IterationLag(executor.VU, time.Duration)   {}
func (fixedPool) DroppedIterations(int, executor.DropCause) {}
func (fixedPool) Warn(msg string)                           { fmt.Println("warning:", msg) }

// An Executor runs iterations on the VUs of a Pool, the engine's side of
// a scenario: here, shared-iterations shares 10 iterations among 3 VUs
// that count them.
func ExampleExecutor() {
	cfg := &executor.SharedIterations{}
	if err := json.Unmarshal([]byte(`{"vus": 3, "iterations": 10}`), cfg); err != nil {
		log.Fatal(err)
	}
	var iterations atomic.Int64
	pool := fixedPool{}
	for range cfg.PreAllocatedVUs() {
		pool = append(pool, countingVU{&iterations})
	}
	if err := cfg.NewExecutor(0).Run(context.Background(), pool); err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Describe())
	fmt.Println(iterations.Load(), "iterations on", len(pool), "VUs")
	// Output:
	// 10 iterations shared among 3 VUs (maxDuration 10m0s, gracefulStop 30s)
	// 10 iterations on 3 VUs
}
