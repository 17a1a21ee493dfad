// Package isnil reports whether an interface value holds nothing usable:
// nil itself, or a nil pointer, function, map, channel or slice behind a
// non-nil interface (a "typed nil"), which a plain == nil misses.
package isnil

import "reflect"

// Is reports whether v is nil or holds a nil pointer, function, map,
// channel, slice or interface.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Chan, reflect.Slice, reflect.Interface, reflect.UnsafePointer:
		return r.IsNil()
	}
	return false
}
