// Package bench compares collab's lanes with client-go's workqueue, the
// queue Kubernetes controllers run their work through, on the same
// workloads. It is a module of its own, so that collab never depends on
// k8s.io: run it with `cd bench && go test -bench .` (make bench-lanes).
package bench
