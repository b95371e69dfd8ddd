package gpumetrics

import (
	"strings"
	"testing"
)

// withoutUnits is nvidia-smi's output for nounits: the recorded values
// without their units.
func withoutUnits(csv string) string {
	return strings.NewReplacer(" %", "", " MiB", "", " W", "", " MHz", "").Replace(csv)
}

func TestParseSMIRecorded(t *testing.T) {
	const masked = "GPU-00000000-0000-0000-0000-000000000000"
	tests := []struct {
		file string
		want string
	}{
		{"nvidia-smi/h100-80gb-hbm3-590.48.01-load.csv",
			`key=` + masked + ` index=0 host= model="NVIDIA H100 80GB HBM3" util=100 mem=19818/81559 power=631.95 energy=- temp=59 memtemp=- sm=1980 reasons=0x0`},
		{"nvidia-smi/h100-mig-590.48.01-load.csv",
			`key=` + masked + ` index=0 host= model="NVIDIA H100 80GB HBM3" util=- mem=11125/81559 power=433.78 energy=- temp=53 memtemp=- sm=1980 reasons=0x0`},
		{"nvidia-smi/rtx-2080-super-595.71.05-idle.csv",
			`key=` + masked + ` index=0 host= model="NVIDIA GeForce RTX 2080 SUPER" util=0 mem=214/8192 power=39.32 energy=- temp=40 memtemp=- sm=765 reasons=0x4`},
		{"nvidia-smi/l40s-595.80-load.csv",
			`key=` + masked + ` index=0 host= model="NVIDIA L40S" util=9 mem=1235/46068 power=110.23 energy=- temp=54 memtemp=- sm=2520 reasons=0x0`},
	}
	for _, tt := range tests {
		recorded := readTestdata(t, tt.file)
		for form, text := range map[string]string{"with units": recorded, "nounits": withoutUnits(recorded)} {
			t.Run(tt.file+" "+form, func(t *testing.T) {
				reading, err := ParseSMI(strings.NewReader(text), smiQueries[0], t0)
				if err != nil {
					t.Fatal(err)
				}
				if len(reading.GPUs) != 1 || !reading.At.Equal(t0) {
					t.Fatalf("%d GPUs at %v, want 1 at %v", len(reading.GPUs), reading.At, t0)
				}
				if got := describe(reading.GPUs[0]); got != tt.want {
					t.Errorf("got\n%s\nwant\n%s", got, tt.want)
				}
			})
		}
	}
}

func TestParseSMIMissingValues(t *testing.T) {
	// nvidia-smi's forms of "no value": [N/A], [Not Supported] (its
	// --help-query-gpu), [Unknown Error], [Insufficient Permissions] and
	// [Requested functionality has been deprecated] (in the captures).
	text := "0, GPU-a, NVIDIA A100-SXM4-80GB, [Not Supported], [Unknown Error], [Insufficient Permissions], [N/A], N/A, [Requested functionality has been deprecated], [Not Supported]\n" +
		"1, GPU-b, NVIDIA A100-SXM4-80GB, 35, 1024, 81920, 250.00, 41, 1410, 0x0000000000000001\n"
	reading, err := ParseSMI(strings.NewReader(text), smiQueries[0], t0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`key=GPU-a index=0 host= model="NVIDIA A100-SXM4-80GB" util=- mem=-/- power=- energy=- temp=- memtemp=- sm=- reasons=-`,
		`key=GPU-b index=1 host= model="NVIDIA A100-SXM4-80GB" util=35 mem=1024/81920 power=250 energy=- temp=41 memtemp=- sm=1410 reasons=0x1`,
	}
	for i, s := range reading.GPUs {
		if got := describe(s); i >= len(want) || got != want[i] {
			t.Errorf("GPU %d: %s", i, got)
		}
	}
	if len(reading.GPUs) != len(want) {
		t.Errorf("%d GPUs, want %d", len(reading.GPUs), len(want))
	}
}

func TestParseSMIErrors(t *testing.T) {
	good := "0, GPU-a, NVIDIA L40S, 9, 1235, 46068, 110.23, 54, 2520, 0x0000000000000000\n"
	tests := []struct {
		name string
		text string
		want string
	}{
		{"a line with too few values", good + "1, GPU-b, NVIDIA L40S, 9\n", "line 2"},
		{"power that is not a number", strings.Replace(good, "110.23", "lots", 1), `line 1: field power.draw: "lots" is not a number`},
		{"reasons that are not a mask", strings.Replace(good, "0x0000000000000000", "0xZZ", 1), `field clocks_event_reasons.active: "0xZZ" is not a number`},
		{"an error message instead of CSV", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSMI(strings.NewReader(tt.text), smiQueries[0], t0)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}
