//go:build !unix

package health

import "time"

// processCPU is not measured on this platform.
func processCPU() time.Duration { return -1 }
