// Package cfgerr holds the one typed error every raftick package uses for
// an invalid configuration field. Packages expose it under their own name
// (type FieldError = cfgerr.FieldError) next to their ErrInvalidConfig
// sentinel, so a program checks errors.Is(err, pkg.ErrInvalidConfig) and
// reads the field with one errors.As, whichever package refused it.
package cfgerr
