package lanes_test

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"time"

	"github.com/rivus/collab/lanes"
)

// expvarMetrics feeds the lanes' metrics to the standard library's expvar,
// whose variables a process serves at /debug/vars once published. A
// Prometheus gauge's Add, a counter's Inc or a histogram's Observe plug in
// the same way.
type expvarMetrics struct {
	depth, running    expvar.Int
	wakes             expvar.Map   // by result
	waited, ran       expvar.Float // seconds, summed
	dropped, timedOut expvar.Int
}

func (m *expvarMetrics) AddDepth(delta int)     { m.depth.Add(int64(delta)) }
func (m *expvarMetrics) AddRunning(delta int)   { m.running.Add(int64(delta)) }
func (m *expvarMetrics) Waited(d time.Duration) { m.waited.Add(d.Seconds()) }
func (m *expvarMetrics) Ran(d time.Duration)    { m.ran.Add(d.Seconds()) }
func (m *expvarMetrics) Dropped()               { m.dropped.Add(1) }
func (m *expvarMetrics) TimedOut()              { m.timedOut.Add(1) }
func (m *expvarMetrics) Woke(r lanes.WakeResult, err error) {
	switch {
	case errors.Is(err, lanes.ErrQueueFull):
		m.wakes.Add("queue full", 1)
	case errors.Is(err, lanes.ErrClosed):
		m.wakes.Add("closed", 1)
	default:
		m.wakes.Add(r.String(), 1)
	}
}

// Metrics feed a metrics library. One slot and one queue place: a running
// key woken again owes a follow-up, which takes the place, so the depth
// is 1 and another key is refused; Close drops the follow-up.
func ExampleMetrics() {
	var m expvarMetrics
	l, err := lanes.New(context.Background(), lanes.Config[string]{
		MaxConcurrent: 1,
		MaxQueued:     1,
		Activate: func(ctx context.Context, key string) error {
			<-ctx.Done() // a long turn, until the lanes interrupt it
			return ctx.Err()
		},
		Metrics: &m,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The longest running activation grows while nothing happens: the
	// library reads it when it scrapes, as expvar does a Func once
	// published with expvar.Publish.
	longest := expvar.Func(func() any { return l.LongestRunning().Seconds() })

	l.Wake("a") // started
	l.Wake("a") // queued: a owes a follow-up
	l.Wake("b") // queue full
	l.Wake("a") // coalesced
	fmt.Println("depth", m.depth.Value(), "running", m.running.Value())
	l.Close()
	l.Wake("c") // closed
	fmt.Println("depth", m.depth.Value(), "running", m.running.Value(), "dropped", m.dropped.Value())
	fmt.Println("wakes", m.wakes.String())
	fmt.Println("longest running", longest.Value())
	// Output:
	// depth 1 running 1
	// depth 0 running 0 dropped 1
	// wakes {"closed": 1, "coalesced": 1, "queue full": 1, "queued": 1, "started": 1}
	// longest running 0
}
