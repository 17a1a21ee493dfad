//go:build invariants

package invariants

// Enabled reports that this build checks the project's rules in code.
const Enabled = true
