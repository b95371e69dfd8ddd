package data

import "math/rand/v2"

// newStream returns a random stream determined by seed and keys (a VU's
// number and the ordinal of the object that asked, or a group's index):
// the same run seed gives the same streams, and streams of different keys
// are independent.
func newStream(seed int64, keys ...uint64) *rand.Rand {
	h := splitmix(uint64(seed))
	for _, k := range keys {
		h = splitmix(h ^ splitmix(k+0x632be59bd9b4e019))
	}
	return rand.New(rand.NewPCG(h, splitmix(h)))
}

// splitmix is the SplitMix64 finaliser: a bijective mix that spreads
// nearby inputs across all 64 bits.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
