package prometheus_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	collabprom "github.com/rivus/collab/prometheus"

	"github.com/rivus/collab/lease"
)

// A lease manager's metrics on a registry that a promhttp handler serves.
func ExampleNewLease() {
	reg := prometheus.NewRegistry()
	metrics, err := collabprom.NewLease(reg, "myapp")
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := lease.NewManager(lease.Config{TTL: time.Minute, Heartbeat: 10 * time.Second,
		Repository: lease.NewMemoryRepository(), Metrics: metrics})
	if err != nil {
		fmt.Println(err)
		return
	}
	l, err := m.Acquire(context.Background(), "job")
	if err != nil {
		fmt.Println(err)
		return
	}
	l.Close()
	m.Close()
	families, _ := reg.Gather()
	for _, f := range families {
		for _, s := range f.GetMetric() {
			if s.GetGauge() != nil || s.GetCounter() != nil {
				fmt.Println(f.GetName(), s.GetGauge().GetValue()+s.GetCounter().GetValue())
			}
		}
	}
	// Output:
	// myapp_collab_lease_acquisitions_total 1
	// myapp_collab_lease_held 0
	// myapp_collab_lease_renewals_failed_total 0
}
