//go:build collabmonitor

package plock

// monitoring turns the contract monitor on (see monitor.go).
const monitoring = true
