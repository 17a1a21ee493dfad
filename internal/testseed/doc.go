// Package testseed is the project's one rule for the seeds of randomized
// tests: every test package that imports it gets a -seed flag of type
// uint64; 0 (the default) picks a fresh seed, and the test logs the seed
// with the exact go test command that reproduces the run.
//
// Only test files import this package.
package testseed
