//go:build !invariants

package invariants

// Enabled reports that this build checks the project's rules in code: it
// does not (built without the invariants tag).
const Enabled = false
