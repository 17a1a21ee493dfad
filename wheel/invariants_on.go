//go:build invariants

package wheel

// invariants is whether the wheel checks its rules in code (see
// invariants.go): built with the invariants tag.
const invariants = true
