package randsrc

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
)

// New returns a generator seeded from the operating system's entropy
// (crypto/rand), so that two sources made by New, in one process or in
// two, never produce the same sequence in practice. Code that needs
// reproducible runs injects its own seeded *rand.Rand instead.
func New() *rand.Rand {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails since Go 1.24 (it crashes the program instead)
	return rand.New(rand.NewChaCha8(seed))
}

// Seed returns two words from the operating system's entropy, to seed a
// small generator (such as a rand.PCG) kept inside a value.
func Seed() [2]uint64 {
	var b [16]byte
	_, _ = crand.Read(b[:]) // never fails since Go 1.24
	return [2]uint64{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
}
