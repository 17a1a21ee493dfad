// Package invariants tells whether the build checks the project's internal
// rules in code: Enabled is true in a build with the invariants tag
// (`go test -tags invariants ./...`) and false otherwise, so that a check
// written as
//
//	if invariants.Enabled {
//		w.checkSlots()
//	}
//
// costs nothing in a normal build. The pattern is pebble's
// internal/invariants. CI runs the wheel's and repeated's tests with the
// tag; a package that adds checks adds itself there (.ci/run).
package invariants
