//go:build collabmonitor

package lease

// monitoring turns the contract monitor on (see monitor.go).
const monitoring = true
