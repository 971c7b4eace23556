//go:build collabmonitor

package leader

// monitoring turns the contract monitor on (see monitor.go).
const monitoring = true
