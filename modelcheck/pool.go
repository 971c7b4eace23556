package modelcheck

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// pool runs a function on n workers at once, the caller being worker 0,
// again and again: the parallel search's phases. Between runs the other
// workers, and the caller while it waits for them, spin a while before
// they park, because a phase of a batch is short: parking and waking a
// goroutine would cost about as much as the batch.
type pool struct {
	n int
	f func(k int) // the run's function; nil stops the workers
	// gen counts the runs: a worker runs f when it changes. f is written
	// before gen, and read after it.
	gen  atomic.Uint64
	left atomic.Int64 // workers of the run that have not finished
	// asleep[k] is the run worker k is parked for, or about to park for,
	// on wake[k]; 0 when it is not. Only the start of that run wakes it:
	// a start that comes late to a worker since woken by a later run's
	// start must not wake it again.
	asleep []atomic.Uint64
	wake   []chan struct{} // each buffered 1
	// waiting is the run the caller is parked for, or about to park for,
	// on idle; 0 when it is not. Only the last worker of that run wakes it.
	waiting atomic.Uint64
	idle    chan struct{} // buffered 1
	mu      sync.Mutex
	failure any // the first panic of the run
	exited  sync.WaitGroup
}

// poolSpins is how many times a waiting worker yields before it parks.
var poolSpins = 1000

func newPool(n int) *pool {
	p := &pool{n: n, asleep: make([]atomic.Uint64, n), wake: make([]chan struct{}, n), idle: make(chan struct{}, 1)}
	for k := 1; k < n; k++ {
		p.wake[k] = make(chan struct{}, 1)
		p.exited.Add(1)
		go p.work(k)
	}
	return p
}

// run runs f(0) … f(n-1) at once and waits for them. A panic in one (a
// model's Next, an invariant) is raised again in the caller's goroutine,
// as the sequential search would raise it, once all have returned.
func (p *pool) run(f func(k int)) {
	gen := p.start(f)
	p.call(f, 0)
	for i := 0; p.left.Load() != 0; i++ {
		if i < poolSpins {
			runtime.Gosched()
			continue
		}
		p.waiting.Store(gen)
		if p.left.Load() == 0 && p.waiting.CompareAndSwap(gen, 0) {
			break // no worker saw the caller waiting
		}
		<-p.idle
		break
	}
	p.mu.Lock()
	v := p.failure
	p.failure = nil
	p.mu.Unlock()
	if v != nil {
		panic(v)
	}
}

// stop ends the workers; the pool is not used after.
func (p *pool) stop() {
	p.start(nil)
	p.exited.Wait()
}

// start publishes f as the next run, wakes the workers parked for it,
// and returns its number.
func (p *pool) start(f func(k int)) uint64 {
	p.f = f
	p.left.Store(int64(p.n - 1))
	gen := p.gen.Add(1)
	for k := 1; k < p.n; k++ {
		if p.asleep[k].CompareAndSwap(gen, 0) {
			p.wake[k] <- struct{}{}
		}
	}
	return gen
}

// work is worker k: it runs each f as it is published.
func (p *pool) work(k int) {
	defer p.exited.Done()
	var seen uint64 // the runs so far: none before newPool returns
	for {
		for i := 0; p.gen.Load() == seen; i++ {
			if i < poolSpins {
				runtime.Gosched()
				continue
			}
			p.asleep[k].Store(seen + 1)
			if p.gen.Load() != seen && p.asleep[k].CompareAndSwap(seen+1, 0) {
				break // the run started before its start saw this worker asleep
			}
			<-p.wake[k]
			break
		}
		seen = p.gen.Load()
		f := p.f
		if f == nil {
			return
		}
		p.call(f, k)
		if p.left.Add(-1) == 0 && p.waiting.CompareAndSwap(seen, 0) {
			p.idle <- struct{}{}
		}
	}
}

// call runs f(k), keeping the run's first panic.
func (p *pool) call(f func(k int), k int) {
	defer func() {
		if v := recover(); v != nil {
			p.mu.Lock()
			if p.failure == nil {
				p.failure = v
			}
			p.mu.Unlock()
		}
	}()
	f(k)
}
