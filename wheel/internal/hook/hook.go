// Package hook lets wheel/wheeltest reach a wheel's unexported settings
// without putting test helpers in package wheel's API: package wheel
// fills these variables when it is initialized.
package hook

// NoNap makes the real-time wheel w (a *wheel.Wheel) sleep only on the
// runtime's timers, never on its timerfd.
var NoNap func(w any)
