//go:build !invariants

package invariants_test

const tagged = false
