// Package bench compares collab's lanes with client-go's workqueue, the
// queue Kubernetes controllers run their work through, on the same
// workloads. It is a module of its own, so that collab never depends on
// k8s.io: run it with `cd bench && go test -bench .` (make bench-lanes).
//
// BenchmarkKeyed and BenchmarkLanesVsWorkqueue compare the time per
// processed item on closed-loop shapes: each processing of a key wakes it
// again while it is processed, so the items and the items per wake are
// set by the shape and equal on both sides. BenchmarkLanesVsWorkqueue
// runs the two sides in interleaved pairs and reports the median of the
// pairs' ratios, which one noisy pair does not move.
//
// BenchmarkBurst is open-loop: producers wake keys as fast as they can,
// and the side that drains more slowly merges more wakes, so it reports
// time per wake, with each side's items per wake beside.
package bench
