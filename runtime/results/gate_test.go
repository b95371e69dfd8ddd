package results

import (
	"strings"
	"testing"
)

func TestParseGate(t *testing.T) {
	tests := []struct {
		name                          string
		tolerance, confidence         string
		metrics                       []string
		wantErr                       string
		wantTolerance, wantConfidence float64
		wantFigures                   int
		wantDefault                   bool
	}{
		{name: "defaults", tolerance: "10%", confidence: "99%", wantTolerance: 0.1, wantConfidence: 0.99, wantDefault: true, wantFigures: 9},
		{name: "figures named", tolerance: "0.2", confidence: "0.9", metrics: []string{"ttft_p99", "e2e_p99"}, wantTolerance: 0.2, wantConfidence: 0.9, wantFigures: 2},
		{name: "bad tolerance", tolerance: "lots", confidence: "99%", wantErr: "--threshold:"},
		{name: "bad confidence", tolerance: "10%", confidence: "sure", wantErr: "--confidence:"},
		{name: "bad figure", tolerance: "10%", confidence: "99%", metrics: []string{"speed"}, wantErr: "--metric:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseGate("threshold", tt.tolerance, tt.confidence, tt.metrics, true)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one beginning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.Options.Tolerance != tt.wantTolerance || g.Options.Confidence != tt.wantConfidence || len(g.Figures) != tt.wantFigures ||
				g.DefaultFigures != tt.wantDefault || !g.Strict {
				t.Errorf("gate %+v: want tolerance %v, confidence %v, %d figures (default %v), strict", g, tt.wantTolerance, tt.wantConfidence, tt.wantFigures, tt.wantDefault)
			}
		})
	}
}
