// Package prometheus exports collab's metrics to Prometheus: a
// lanes.Metrics, a lease.Metrics and a plock.Metrics backed by
// client_golang collectors, registered on the Registerer you give. It is a
// module of its own, so that collab itself never links client_golang.
//
// Every collector is named collab_<package>_<metric>, under an optional
// namespace, with no labels of keys or paths: a metric's series do not
// grow with the keys used.
package prometheus

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rivus/collab/lanes"
	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/plock"
)

// Lanes is a lanes.Metrics.
type Lanes struct {
	depth, running prometheus.Gauge
	wakes          *prometheus.CounterVec
	waited, ran    prometheus.Histogram
	dropped        prometheus.Counter
	timedOut       prometheus.Counter
}

var _ lanes.Metrics = (*Lanes)(nil)

// NewLanes registers the lanes' collectors on reg and returns the
// lanes.Metrics that feeds them. longestRunning, if not nil, is read at
// each scrape (Lanes.LongestRunning of the lanes this serves).
func NewLanes(reg prometheus.Registerer, namespace string, longestRunning func() time.Duration) (*Lanes, error) {
	f := &factory{reg: reg, namespace: namespace, subsystem: "lanes"}
	m := &Lanes{
		depth:    f.gauge("depth", "Queue places in use: lanes waiting for a slot and follow-ups owed by running lanes."),
		running:  f.gauge("running", "Activations holding a slot."),
		wakes:    f.counterVec("wakes_total", "Wakes by result: started, queued, coalesced, queue_full, closed.", "result"),
		waited:   f.histogram("queue_wait_seconds", "Time a lane waited in the queue before its activation started."),
		ran:      f.histogram("activation_seconds", "Time an activation ran, from taking its slot until Activate returned."),
		dropped:  f.counter("dropped_total", "Owed activations that Cancel or Close dropped before they started."),
		timedOut: f.counter("timeouts_total", "Activations that TurnTimeout interrupted."),
	}
	if longestRunning != nil {
		f.gaugeFunc("longest_running_seconds", "How long the activation that has held its slot longest has held it.",
			func() float64 { return longestRunning().Seconds() })
	}
	return m, f.err
}

func (m *Lanes) AddDepth(delta int)     { m.depth.Add(float64(delta)) }
func (m *Lanes) AddRunning(delta int)   { m.running.Add(float64(delta)) }
func (m *Lanes) Waited(d time.Duration) { m.waited.Observe(d.Seconds()) }
func (m *Lanes) Ran(d time.Duration)    { m.ran.Observe(d.Seconds()) }
func (m *Lanes) Dropped()               { m.dropped.Inc() }
func (m *Lanes) TimedOut()              { m.timedOut.Inc() }

// Woke counts a wake by its result.
func (m *Lanes) Woke(r lanes.WakeResult, err error) {
	var result string
	switch {
	case errors.Is(err, lanes.ErrQueueFull):
		result = "queue_full"
	case err != nil:
		result = "closed"
	case r == lanes.Started:
		result = "started"
	case r == lanes.Queued:
		result = "queued"
	default:
		result = "coalesced"
	}
	m.wakes.WithLabelValues(result).Inc()
}

// Lease is a lease.Metrics.
type Lease struct {
	held           prometheus.Gauge
	acquired       *prometheus.CounterVec
	renewed        prometheus.Histogram
	renewalsFailed prometheus.Counter
	lost           *prometheus.CounterVec
	fenceWaited    prometheus.Histogram
}

var _ lease.Metrics = (*Lease)(nil)

// NewLease registers a lease manager's collectors on reg and returns the
// lease.Metrics that feeds them.
func NewLease(reg prometheus.Registerer, namespace string) (*Lease, error) {
	f := &factory{reg: reg, namespace: namespace, subsystem: "lease"}
	m := &Lease{
		held:           f.gauge("held", "Leases the manager holds."),
		acquired:       f.counterVec("acquisitions_total", "Acquisitions by how: free, takeover_dead, takeover_silent.", "how"),
		renewed:        f.histogram("renewal_seconds", "Time a renewal's write took."),
		renewalsFailed: f.counter("renewals_failed_total", "Renewals that failed, to be retried until the deadline."),
		lost:           f.counterVec("losses_total", "Losses by cause: deadline, moved, broken, renewal failed, policy.", "cause"),
		fenceWaited:    f.histogram("fence_wait_seconds", "Time a RunFenced call waited for the repository's fence."),
	}
	return m, f.err
}

func (m *Lease) AddHeld(delta int)           { m.held.Add(float64(delta)) }
func (m *Lease) Renewed(took time.Duration)  { m.renewed.Observe(took.Seconds()) }
func (m *Lease) RenewalFailed()              { m.renewalsFailed.Inc() }
func (m *Lease) Lost(cause lease.LossCause)  { m.lost.WithLabelValues(cause.String()).Inc() }
func (m *Lease) FenceWaited(d time.Duration) { m.fenceWaited.Observe(d.Seconds()) }

// Acquired counts an acquisition by how it took the key.
func (m *Lease) Acquired(takeover, dead bool) {
	how := "free"
	switch {
	case takeover && dead:
		how = "takeover_dead"
	case takeover:
		how = "takeover_silent"
	}
	m.acquired.WithLabelValues(how).Inc()
}

// Plock is a plock.Metrics.
type Plock struct {
	acquired prometheus.Histogram
	refused  prometheus.Counter
	gaveUp   prometheus.Histogram
}

var _ plock.Metrics = (*Plock)(nil)

// NewPlock registers process locks' collectors on reg and returns the
// plock.Metrics that feeds them (plock.Options.Metrics).
func NewPlock(reg prometheus.Registerer, namespace string) (*Plock, error) {
	f := &factory{reg: reg, namespace: namespace, subsystem: "plock"}
	m := &Plock{
		acquired: f.histogram("acquire_seconds", "Time an Acquire took that took the lock, its waits included."),
		refused:  f.counter("refused_total", "Acquire calls that returned a *HeldError."),
		gaveUp:   f.histogram("gave_up_seconds", "Time a waiting Acquire waited before its context ended."),
	}
	return m, f.err
}

func (m *Plock) Acquired(took time.Duration) { m.acquired.Observe(took.Seconds()) }
func (m *Plock) Refused()                    { m.refused.Inc() }
func (m *Plock) GaveUp(waited time.Duration) { m.gaveUp.Observe(waited.Seconds()) }

// factory makes and registers the collectors of one subsystem, keeping
// the first registration error.
type factory struct {
	reg                  prometheus.Registerer
	namespace, subsystem string
	err                  error
}

func (f *factory) opts(name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: f.namespace, Subsystem: "collab_" + f.subsystem, Name: name, Help: help}
}

func (f *factory) register(c prometheus.Collector) {
	if err := f.reg.Register(c); err != nil && f.err == nil {
		f.err = err
	}
}

func (f *factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts(f.opts(name, help)))
	f.register(g)
	return g
}

func (f *factory) gaugeFunc(name, help string, fn func() float64) {
	f.register(prometheus.NewGaugeFunc(prometheus.GaugeOpts(f.opts(name, help)), fn))
}

func (f *factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts(f.opts(name, help)))
	f.register(c)
	return c
}

func (f *factory) counterVec(name, help, label string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts(f.opts(name, help)), []string{label})
	f.register(c)
	return c
}

func (f *factory) histogram(name, help string) prometheus.Histogram {
	o := f.opts(name, help)
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: o.Namespace, Subsystem: o.Subsystem, Name: o.Name, Help: o.Help,
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)})
	f.register(h)
	return h
}
