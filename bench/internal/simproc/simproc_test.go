package simproc

import (
	"context"
	"strings"
	"testing"

	"github.com/llmrun/llmrun/internal/llmsim"
)

// A process that prints the simulator's banner naming an address where
// another simulator listens (one this Start did not start, as when a
// port is reused) is refused: GET /stats there does not name the
// instance id Start gave.
func TestStartRefusesAnImpostor(t *testing.T) {
	other, err := llmsim.Listen(t.Context(), "127.0.0.1:0", llmsim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	claim := `echo 'llmsim serving model "llmsim-1" on ` + other.URL() + `/v1 (max-num-seqs 256); Ctrl-C stops'; exec sleep 600`
	p, err := StartQuiet([]string{"sh", "-c", claim, "impostor"})
	if err == nil {
		p.Stop()
		t.Fatalf("Start accepted the simulator at %s, which it did not start", other.URL())
	}
	if want := "the server at " + other.URL() + ", which llmrun sim printed, is not the simulator started: GET /stats names instance \"\""; !strings.Contains(err.Error(), want) {
		t.Errorf("Start: %v\nwant it to say %q", err, want)
	}
}

// The simulator Start starts answers to the instance id it was given.
func TestStartIdentifiesItsSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds llmrun: TestStartRefusesAnImpostor covers identifying the simulator by GET /stats")
	}
	bin, err := Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := StartQuiet([]string{bin, "sim", "--addr", "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	st, err := p.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(st.InstanceID, "simproc-") {
		t.Errorf("GET /stats names instance %q, want the simproc- id Start gave", st.InstanceID)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
}
