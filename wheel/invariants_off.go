//go:build !invariants

package wheel

// invariants is whether the wheel checks its rules in code (see
// invariants.go): built without the invariants tag, it does not.
const invariants = false
