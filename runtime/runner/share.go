package runner

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"strconv"

	"github.com/llmrun/llmrun/runtime/engine"
	"github.com/llmrun/llmrun/runtime/executor/segment"
	"github.com/llmrun/llmrun/runtime/rendezvous"
)

// The __ENV variables that tell a script the execution segment it runs,
// set with an execution segment (given, or an instance's share) only.
// The instance it is, set in a run of instances only, is told in
// rendezvous.InstanceEnv and rendezvous.InstancesEnv.
const (
	SegmentEnv  = "LLMRUN_EXECUTION_SEGMENT"
	SequenceEnv = "LLMRUN_EXECUTION_SEGMENT_SEQUENCE"
)

// SharePlan makes cfg the part of the plan this process runs, and tells
// the script which in __ENV (a copy of cfg.Env): the execution segment
// given (cfg.Overrides.Segment) wins, and needs a seed given; else, in a run of instances (inst
// not nil), instance i's equal share among n, the segment i/n:(i+1)/n of
// the sequence 0,1/n,…,1, which like any segment needs a seed given, the
// same in every instance (not drawn: seedDrawn false). Run calls it; a
// command calls it first to refuse a bad command line before loading.
// Calling it again changes nothing.
func SharePlan(cfg *engine.Config, inst *rendezvous.Config, seedDrawn bool) error {
	part := cfg.Overrides.Segment
	if !part.Whole() && seedDrawn {
		return errors.New("--execution-segment needs --seed, the same in every process, so that the processes draw the same arrivals and split them")
	}
	if part.Whole() && inst != nil && inst.Instances > 1 {
		seq := segment.Equal(inst.Instances)
		share, err := segment.NewPart(seq, seq[inst.Instance])
		if err != nil {
			return fmt.Errorf("--instances %d: instance %d's share of the plan: %w", inst.Instances, inst.Instance, err)
		}
		if seedDrawn {
			return fmt.Errorf("--instances %d needs --seed, the same in every instance, so that the instances draw the same arrivals and split them", inst.Instances)
		}
		part = share
	}
	if part.Whole() && inst == nil {
		return nil
	}
	env := maps.Clone(cfg.Env)
	if env == nil {
		env = map[string]string{}
	}
	if inst != nil {
		env[rendezvous.InstanceEnv], env[rendezvous.InstancesEnv] = strconv.Itoa(inst.Instance), strconv.Itoa(inst.Instances)
	}
	if !part.Whole() {
		env[SegmentEnv], env[SequenceEnv] = part.Segment().String(), part.Sequence().String()
	}
	cfg.Env, cfg.Overrides.Segment = env, part
	return nil
}

// maxDrawnSeed bounds a drawn seed: short enough to retype, and exact as a
// JavaScript number in the result file.
const maxDrawnSeed = 1<<31 - 1

// DrawSeed draws the seed of a run given none: in [1, maxDrawnSeed], from
// the system's random source, so that two runs synthesize different
// prompts (a server's prefix cache keeps those of the last run). A run
// with a drawn seed says so (Config.SeedDrawn).
func DrawSeed() int64 {
	n, err := rand.Int(rand.Reader, big.NewInt(maxDrawnSeed))
	if err != nil {
		// crypto/rand does not fail on the supported platforms.
		panic(fmt.Sprintf("drawing a seed: %v", err))
	}
	return n.Int64() + 1
}
