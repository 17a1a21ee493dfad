// Package randsrc makes the properly seeded random sources that raftick's
// packages use when the caller injects none.
package randsrc
