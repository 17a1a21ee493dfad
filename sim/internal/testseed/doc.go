// Package testseed gives the simulator's randomized tests the project's
// seed convention: a -seed flag of type uint64, where 0 (the default)
// means a fresh seed per run; every test that uses it logs the seed and
// the one-line command that reproduces a failure. Its one job is that
// convention, for the test packages under sim/.
package testseed
