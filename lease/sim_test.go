package lease_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivus/collab/lease"
	"github.com/rivus/collab/lease/store"
	"github.com/rivus/collab/platform"
	"github.com/rivus/collab/platform/platformtest"
)

// The deterministic simulation runs whole managers, several over one
// repository, each a process of its own with a clock of its own (the last
// on another process table, so that only the TTL judges it), and
// lets a seed choose everything that can happen next: which repository
// call is answered and how (as asked, failed, failed after it was
// applied), when time passes, which process pauses, resumes or crashes,
// and what the callers do (acquire, fenced work, close). Between two
// choices the simulation waits until every goroutine of every manager
// waits for it: the repository, the clock or a caller. The same seed
// makes the same choices on the same states, so a failing seed, printed
// with its trace, replays.
//
// It checks the lease's promises on every write and every start of
// fenced work: a key's generation never goes back and a claim never
// repeats one; a successor takes a key over only once its holder has
// declared the lease lost, unless the holder was paused meanwhile (the
// gap of the package doc) or has crashed; a renewal answered with a
// revision conflict ends its lease once its batch is answered; fenced
// work starts only under the record's current generation, and fenced
// work of two generations never runs at once. The contract monitors run too, in monitored builds.

const (
	simProcs = 4
	simKeys  = 2
)

// simOpKind is what a pending call of the simulation does.
type simOpKind uint8

const (
	simLoad simOpKind = iota
	simSave
	simBatch
	simFence
	simWork // fenced work in progress: a caller's moment the simulation ends
)

var simOpNames = [...]string{"load", "save", "batch", "fence", "work"}

// simOp is a call that waits for the simulation.
type simOp struct {
	ctx    context.Context
	proc   int
	kind   simOpKind
	key    string
	writes []store.Write // a save's or a batch's
	done   chan simResult
	// applied is the answer of a write applied already, whose answer
	// the simulation holds back: a slow reply.
	applied *simResult
}

func (o *simOp) String() string {
	s := fmt.Sprintf("p%d %s %s", o.proc, simOpNames[o.kind], o.key)
	for _, w := range o.writes[min(len(o.writes), 1):] {
		s += "," + w.Key
	}
	if o.applied != nil {
		s += " (applied)"
	}
	return s
}

// simResult is how the simulation answered a call.
type simResult struct {
	rec    store.Record
	ok     bool
	revs   []store.Revision
	errs   []error
	unlock func()
}

var errSimFault = errors.New("simulated repository fault")

// sim is one run.
type sim struct {
	t    testing.TB
	seed uint64
	rng  *rand.Rand
	f    *platformtest.Fake
	// remote is the process table of the last process, another boot:
	// the others judge it, and it them, by the TTL alone.
	remote *platformtest.Processes
	inner  *lease.MemoryRepository
	procs  []*simProc    // the processes now
	all    []*simProc    // every process started, to close at the end
	now    time.Duration // how far the clocks have moved
	trace  []string
	done   sync.WaitGroup // the callers' goroutines

	mu      sync.Mutex    // guards pending, fences, changed and the procs' busy, held
	changed chan struct{} // closed and replaced when pending or a busy changes
	pending []*simOp
	fences  map[string]int // key → holding process + 1
	top     map[string]store.Token
	working map[string]store.Token // the generation of each key's running fenced work
	// conflicted are the handles whose renewal the last choice answered
	// with a conflict.
	conflicted []simConflict
	broken     string // the first promise broken
}

// simProc is one process: its manager, its caller and its faults.
type simProc struct {
	i       int
	id      platform.Identity
	table   *platformtest.Processes
	clock   *platformtest.Clock
	moved   time.Duration // how far its clock has moved
	m       *lease.Manager
	cmds    chan func()
	busy    bool           // its caller runs a command
	held    []*lease.Lease // the handles it holds, by acquisition
	paused  bool
	crashed bool
	lagged  map[store.Token]bool // generations it held while paused: excused takeovers
}

func newSim(t testing.TB, seed uint64) *sim {
	s := &sim{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), f: platformtest.New(t), remote: platformtest.NewProcesses(),
		inner: lease.NewMemoryRepository(), changed: make(chan struct{}), fences: map[string]int{}, top: map[string]store.Token{}, working: map[string]store.Token{}}
	s.remote.Reboot()
	for i := range simProcs {
		s.start(i)
	}
	return s
}

// start starts process i, a new one in place of any before it.
func (s *sim) start(i int) {
	table := s.f.Processes
	if i == simProcs-1 {
		table = s.remote
	}
	id := table.Start()
	p := &simProc{i: i, id: id, table: table, clock: platformtest.NewClock(), cmds: make(chan func()), lagged: map[store.Token]bool{}}
	p.clock.Advance(s.now)
	p.moved = s.now
	plat := *s.f.As(id)
	plat.Process, plat.Clock = table.As(id), p.clock
	var repo store.Repository = &simRepo{s, p}
	if s.rng.IntN(2) == 0 {
		repo = simBatchRepo{&simRepo{s, p}}
	}
	m, err := lease.NewManager(lease.Config{TTL: ttl, Heartbeat: hb, Repository: repo, Platform: &plat})
	if err != nil {
		s.t.Fatal(err)
	}
	p.m = m
	s.all = append(s.all, p)
	s.done.Go(func() {
		for cmd := range p.cmds {
			cmd()
			s.mu.Lock()
			p.busy = false
			s.changedLocked()
			s.mu.Unlock()
		}
	})
	if i < len(s.procs) {
		s.procs[i] = p
	} else {
		s.procs = append(s.procs, p)
	}
	s.note("p%d starts as pid %d", i, id.PID)
}

func (s *sim) note(format string, args ...any) {
	s.trace = append(s.trace, fmt.Sprintf("%d. ", len(s.trace)+1)+fmt.Sprintf(format, args...))
}

// breakLocked records the first broken promise.
func (s *sim) breakLocked(format string, args ...any) {
	if s.broken == "" {
		s.broken = fmt.Sprintf(format, args...)
	}
}

// simRepo is process p's way to the repository: every call waits for the
// simulation to answer it; a crashed process's calls fail at once.
type simRepo struct {
	s *sim
	p *simProc
}

// simBatchRepo is a simRepo that saves batches in one transaction.
type simBatchRepo struct{ *simRepo }

func (r *simRepo) call(ctx context.Context, op *simOp) (simResult, error) {
	s := r.s
	s.mu.Lock()
	if r.p.crashed {
		s.mu.Unlock()
		return simResult{}, errSimFault
	}
	op.ctx, op.proc, op.done = ctx, r.p.i, make(chan simResult, 1)
	done := op.done
	s.pending = append(s.pending, op)
	s.changedLocked()
	s.mu.Unlock()
	select {
	case res := <-done:
		if k := op.kind; (k == simFence || k == simWork) && res.errs[0] != nil {
			return res, res.errs[0]
		}
		return res, nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	i := slices.Index(s.pending, op)
	if i >= 0 {
		s.pending = slices.Delete(s.pending, i, i+1)
		s.changedLocked()
	}
	s.mu.Unlock()
	if i < 0 { // being answered: take the answer, and give back a fence
		if res := <-done; res.unlock != nil {
			res.unlock()
		}
	}
	return simResult{}, context.Cause(ctx)
}

func (r *simRepo) Load(ctx context.Context, key string) (store.Record, bool, error) {
	res, err := r.call(ctx, &simOp{kind: simLoad, key: key})
	if err == nil && res.errs[0] != nil {
		err = res.errs[0]
	}
	return res.rec, res.ok, err
}

func (r *simRepo) Save(ctx context.Context, key string, snap store.Snapshot, expected store.Revision) (store.Revision, error) {
	res, err := r.call(ctx, &simOp{kind: simSave, key: key, writes: []store.Write{{Key: key, Snapshot: snap, Expected: expected}}})
	if err != nil {
		return 0, err
	}
	return res.revs[0], res.errs[0]
}

func (r simBatchRepo) SaveBatch(ctx context.Context, writes []store.Write) ([]store.Revision, []error) {
	res, err := r.call(ctx, &simOp{kind: simBatch, key: writes[0].Key, writes: writes})
	if err != nil {
		errs := make([]error, len(writes))
		for i := range errs {
			errs[i] = err
		}
		return make([]store.Revision, len(writes)), errs
	}
	return res.revs, res.errs
}

func (r *simRepo) Fence(ctx context.Context, key string) (func(), error) {
	res, err := r.call(ctx, &simOp{kind: simFence, key: key})
	return res.unlock, err
}

// work is fenced work of p on key under token: it checks that it may
// start, then waits for the simulation to let it end.
func (r *simRepo) work(ctx context.Context, key string, token store.Token) error {
	s := r.s
	rec, ok, _ := s.inner.Load(context.Background(), key)
	s.mu.Lock()
	switch g, running := s.working[key]; {
	case !ok || rec.Snapshot.Released || rec.Snapshot.Generation != token:
		s.breakLocked("p%d's fenced work on %s started with generation %d, but the record holds %d (released %v)",
			r.p.i, key, token, rec.Snapshot.Generation, rec.Snapshot.Released)
	case running && g != token:
		s.breakLocked("p%d's fenced work on %s with generation %d runs while that of generation %d does", r.p.i, key, token, g)
	}
	s.working[key] = token
	s.mu.Unlock()
	_, err := r.call(ctx, &simOp{kind: simWork, key: key})
	s.mu.Lock()
	if s.working[key] == token {
		delete(s.working, key)
	}
	s.mu.Unlock()
	return err
}

// answer answers op as the seed says (how): as asked, failed, or (a
// write) failed after it was applied. A write applied earlier gets the
// answer held back, or a failure.
func (s *sim) answer(op *simOp, how int) {
	res := s.resultOf(op, how)
	if op.applied != nil {
		res = *op.applied
		if how != 0 {
			res = simFailed(op)
		}
	}
	s.noteConflicts(op, res)
	op.done <- res
}

// noteConflicts notes the renewals among op's writes that res answers
// with a revision conflict: once the process settles, each must have
// declared its lease lost, since the record moved past its last write.
func (s *sim) noteConflicts(op *simOp, res simResult) {
	p := s.procs[op.proc]
	for i, w := range op.writes {
		if w.Snapshot.Released || !errors.Is(res.errs[i], store.ErrRevisionConflict) {
			continue
		}
		for _, h := range p.held {
			if h.Key() == w.Key && h.Token() == w.Snapshot.Generation {
				s.conflicted = append(s.conflicted, simConflict{p, h})
			}
		}
	}
}

// checkConflictsLocked: every renewal answered with a conflict has
// declared its lease lost once its batch is answered (the saver steps a
// batch's answers together, when the last of them is in).
func (s *sim) checkConflictsLocked() {
	s.conflicted = slices.DeleteFunc(s.conflicted, func(c simConflict) bool {
		if _, saving := lease.Quiet(c.p.m); saving && !c.p.crashed {
			return false // the batch is not answered yet
		}
		if c.h.Err() == nil && !c.p.crashed {
			s.breakLocked("p%d's renewal of %s with generation %d met a revision conflict, and it still holds the lease", c.p.i, c.h.Key(), c.h.Token())
		}
		return true
	})
}

// simConflict is a renewal of p answered with a conflict.
type simConflict struct {
	p *simProc
	h *lease.Lease
}

// resultOf carries out op as how says, and returns its answer.
func (s *sim) resultOf(op *simOp, how int) simResult {
	if op.applied != nil {
		return simResult{} // answered from what was applied
	}
	res := simResult{revs: make([]store.Revision, max(len(op.writes), 1)), errs: make([]error, max(len(op.writes), 1))}
	fail := how == 1
	apply := how != 1
	switch op.kind {
	case simLoad:
		if fail {
			res.errs[0] = errSimFault
			break
		}
		res.rec, res.ok, res.errs[0] = s.inner.Load(context.Background(), op.key)
	case simSave, simBatch:
		if apply {
			for i, w := range op.writes {
				res.revs[i], res.errs[i] = s.write(op.proc, w)
			}
		}
		if how != 0 {
			for i := range res.errs {
				res.errs[i], res.revs[i] = errSimFault, 0
			}
		}
	case simFence:
		if fail {
			res.errs[0] = errSimFault
			break
		}
		key, proc := op.key, op.proc
		s.fences[key] = proc + 1
		res.unlock = func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.fences[key] == proc+1 {
				delete(s.fences, key)
			}
		}
	}
	return res
}

// write applies w of process proc to the repository, and checks the
// promises a write can break. It runs with s.mu held.
func (s *sim) write(proc int, w store.Write) (store.Revision, error) {
	prev, had, _ := s.inner.Load(context.Background(), w.Key)
	rev, err := s.inner.Save(context.Background(), w.Key, w.Snapshot, w.Expected)
	if err != nil {
		return rev, err
	}
	g, old := w.Snapshot.Generation, prev.Snapshot.Generation
	if had && g < old {
		s.breakLocked("p%d wrote generation %d of %s over generation %d", proc, g, w.Key, old)
	}
	if !had || g > old { // a claim
		if g <= s.top[w.Key] {
			s.breakLocked("p%d claimed generation %d of %s, which a claim wrote before", proc, g, w.Key)
		}
		s.top[w.Key] = max(s.top[w.Key], g)
		if had && !prev.Snapshot.Released {
			s.checkTakeover(proc, w.Key, prev.Snapshot)
		}
	}
	return rev, nil
}

// checkTakeover: the holder that process proc's claim replaces has
// declared its lease lost, unless it crashed or was paused holding it.
func (s *sim) checkTakeover(proc int, key string, prev store.Snapshot) {
	for _, q := range s.procs {
		if q.id != prev.Holder || q.crashed || q.lagged[prev.Generation] {
			continue
		}
		for _, h := range q.held {
			if h.Key() == key && h.Token() == prev.Generation && h.Err() == nil {
				s.breakLocked("p%d took %s over from p%d, whose generation %d has not declared the lease lost", proc, key, q.i, prev.Generation)
			}
		}
	}
}

// quietLocked reports whether every goroutine waits for the simulation.
// The managers are judged first: a manager that is quiet cancels no
// call's context until the simulation moves its clock or answers it, so
// the contexts read after them are the last word; read before, a loop
// that ran in between could have ended one.
func (s *sim) quietLocked() bool {
	saving := make([]bool, len(s.procs))
	for _, p := range s.procs {
		quiet, sv := lease.Quiet(p.m)
		if !quiet {
			return false
		}
		saving[p.i] = sv
	}
	calls := make([]int, len(s.procs))
	for _, op := range s.pending {
		if op.ctx.Err() != nil {
			return false // its caller is about to give it up
		}
		calls[op.proc]++
	}
	for _, p := range s.procs {
		want := 0
		if saving[p.i] {
			want++
		}
		if p.busy {
			want++
		}
		if calls[p.i] != want {
			return false
		}
	}
	return true
}

// stateLocked describes what each process waits for.
func (s *sim) stateLocked() string {
	var b strings.Builder
	for _, p := range s.procs {
		quiet, saving := lease.Quiet(p.m)
		fmt.Fprintf(&b, "p%d quiet %v saving %v busy %v paused %v crashed %v; ", p.i, quiet, saving, p.busy, p.paused, p.crashed)
	}
	for _, op := range s.pending {
		b.WriteString("pending " + op.String() + "; ")
	}
	return b.String()
}

// changedLocked wakes settle.
func (s *sim) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// settle waits until every goroutine waits for the simulation: it looks
// again at every change of the calls pending, the callers or a manager.
func (s *sim) settle() {
	timeout := time.After(waitLimit)
	cases := make([]reflect.SelectCase, 0, len(s.procs)+2)
	for {
		// The channels first, then the look: a change in between
		// closes one of them.
		s.mu.Lock()
		cases = append(cases[:0], reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(s.changed)},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timeout)})
		for _, p := range s.procs {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(lease.Changed(p.m))})
		}
		quiet := s.quietLocked()
		s.mu.Unlock()
		if quiet {
			return
		}
		if i, _, _ := reflect.Select(cases); i == 1 {
			s.mu.Lock()
			state := s.stateLocked()
			s.mu.Unlock()
			s.t.Fatalf("seed %d: the managers did not settle in %v: %s\n%s", s.seed, waitLimit, state, strings.Join(s.trace, "\n"))
		}
	}
}

// step makes one choice of the seed, carries it out and settles.
func (s *sim) step() {
	s.mu.Lock()
	var answerable []*simOp
	for _, op := range s.pending {
		if p := s.procs[op.proc]; !p.paused && (op.kind != simFence || s.fences[op.key] == 0) {
			answerable = append(answerable, op)
		}
	}
	slices.SortFunc(answerable, func(a, b *simOp) int { return strings.Compare(a.String(), b.String()) })
	s.mu.Unlock()
	switch r := s.rng.IntN(100); {
	case r < 55 && len(answerable) > 0:
		op := answerable[s.rng.IntN(len(answerable))]
		how := 0
		if s.rng.IntN(8) == 0 {
			how = 1 + s.rng.IntN(2) // failed, or failed after it was applied
		}
		write := op.kind == simSave || op.kind == simBatch
		slow := write && how == 0 && op.applied == nil && s.rng.IntN(4) == 0
		s.mu.Lock()
		i := slices.Index(s.pending, op)
		if i < 0 { // its context ended meanwhile
			s.mu.Unlock()
			break
		}
		name := op.String()
		if slow {
			// Applied now, answered by a later choice: time may pass
			// between the write and its reply.
			res := s.resultOf(op, 0)
			op.applied = &res
			s.mu.Unlock()
			s.note("apply %s, its answer held back", name)
			break
		}
		s.pending = slices.Delete(s.pending, i, i+1)
		s.answer(op, how)
		s.mu.Unlock()
		s.note("answer %s %s", name, [...]string{"as asked", "failed", "failed after it was applied"}[how])
	case r < 70:
		d := [...]time.Duration{hb / 4, hb / 2, hb, ttl / 2}[s.rng.IntN(4)]
		s.now += d
		// One clock at a time, each process settled before the next
		// clock moves: what one process does then reaches the others
		// in a fixed order.
		for _, p := range s.procs {
			if !p.paused {
				p.clock.Advance(d)
				p.moved += d
				s.settle()
			}
		}
		s.note("%v pass", d)
	case r < 90:
		s.command(s.procs[s.rng.IntN(len(s.procs))])
	default:
		s.fault(s.procs[s.rng.IntN(len(s.procs))])
	}
	s.settle()
	s.mu.Lock()
	s.checkConflictsLocked()
	s.mu.Unlock()
}

// command gives process p's caller something to do, if it is free.
func (s *sim) command(p *simProc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.busy || p.paused || p.crashed {
		return
	}
	key := fmt.Sprintf("k%d", s.rng.IntN(simKeys))
	var h *lease.Lease
	if len(p.held) > 0 {
		h = p.held[s.rng.IntN(len(p.held))]
	}
	repo := &simRepo{s, p}
	var cmd func()
	switch c := s.rng.IntN(3); {
	case c == 0 || h == nil:
		s.note("p%d: Acquire %s", p.i, key)
		cmd = func() {
			if h, err := p.m.Acquire(context.Background(), key); err == nil {
				s.mu.Lock()
				p.held = append(p.held, h)
				s.mu.Unlock()
			}
		}
	case c == 1:
		s.note("p%d: RunFenced %s g%d", p.i, h.Key(), h.Token())
		cmd = func() {
			_ = h.RunFenced(context.Background(), func(ctx context.Context, token lease.Token) error {
				return repo.work(ctx, h.Key(), token)
			})
		}
	case lease.InFlight(h):
		// Close would wait for the call, which waits for the
		// simulation: a caller that waits on no call of the simulation
		// never lets it settle.
		return
	default:
		s.note("p%d: Close %s g%d", p.i, h.Key(), h.Token())
		cmd = func() {
			_ = h.Close()
			s.mu.Lock()
			p.held = slices.DeleteFunc(p.held, func(o *lease.Lease) bool { return o == h })
			s.mu.Unlock()
		}
	}
	p.busy = true
	p.cmds <- cmd
}

// fault pauses, resumes, crashes or restarts process p.
func (s *sim) fault(p *simProc) {
	switch {
	case p.crashed:
		s.start(p.i)
	case p.paused:
		p.paused = false
		p.clock.Advance(s.now - p.moved) // its clock ran on while it was stopped
		p.moved = s.now
		s.note("p%d resumes", p.i)
	case s.rng.IntN(3) == 0:
		s.mu.Lock()
		p.crashed = true
		for key, holder := range s.fences {
			if holder == p.i+1 {
				delete(s.fences, key) // the kernel lets go of its locks
			}
		}
		var mine []*simOp
		s.pending = slices.DeleteFunc(s.pending, func(o *simOp) bool {
			if o.proc == p.i {
				mine = append(mine, o)
				return true
			}
			return false
		})
		s.mu.Unlock()
		p.table.Kill(p.id.PID)
		for _, op := range mine {
			op.done <- simFailed(op)
		}
		s.note("p%d crashes", p.i)
	default:
		s.mu.Lock()
		p.paused = true
		for _, h := range p.held {
			p.lagged[h.Token()] = true
		}
		s.mu.Unlock()
		s.note("p%d pauses", p.i)
	}
}

// finish ends the run: every process resumes, the managers close, and
// their goroutines end.
func (s *sim) finish() {
	s.mu.Lock()
	for _, p := range s.all {
		p.paused = false
		p.crashed = true // every call fails from now on
	}
	for _, op := range s.pending {
		op.done <- simFailed(op)
	}
	s.pending = nil
	s.mu.Unlock()
	for _, p := range s.all {
		_ = p.m.Close()
		close(p.cmds)
	}
	s.done.Wait()
}

// simFailed is the answer of a failed call.
func simFailed(op *simOp) simResult {
	n := max(len(op.writes), 1)
	return simResult{revs: make([]store.Revision, n), errs: slices.Repeat([]error{errSimFault}, n)}
}

// runSim runs seed for steps and returns the broken promise, if any,
// and the trace.
func runSim(t testing.TB, seed uint64, steps int) (string, []string) {
	s := newSim(t, seed)

	s.settle()
	for range steps {
		s.step()

		s.mu.Lock()
		broken := s.broken
		s.mu.Unlock()
		if broken != "" {
			break
		}
	}
	s.finish()
	return s.broken, s.trace
}

// simSeed replays one seed of TestSimulation.
var simSeed = flag.Int64("sim.seed", -1, "TestSimulation runs only this seed, and prints its trace")

const (
	simSeeds = 2000 // seeds TestSimulation runs
	simSteps = 200  // steps of each
)

// TestSimulation runs the deterministic simulation on many seeds; a seed
// that breaks a promise fails with its trace and the command that
// replays it.
func TestSimulation(t *testing.T) {
	first, last := uint64(0), uint64(simSeeds)
	if *simSeed >= 0 {
		first, last = uint64(*simSeed), uint64(*simSeed)+1
	}
	for seed := first; seed < last; seed++ {
		broken, trace := runSim(t, seed, simSteps)
		if *simSeed >= 0 {
			t.Logf("seed %d:\n%s", seed, strings.Join(trace, "\n"))
		}
		if broken != "" {
			t.Fatalf("seed %d broke a promise: %s\n%s\nreplay: go test -tags collabmonitor -run 'TestSimulation$' ./lease -sim.seed=%d",
				seed, broken, strings.Join(trace, "\n"), seed)
		}
	}
}

// TestSimulationReplays: a seed makes the same run twice.
func TestSimulationReplays(t *testing.T) {
	for seed := range uint64(5) {
		_, a := runSim(t, seed, simSteps)
		_, b := runSim(t, seed, simSteps)
		if !slices.Equal(a, b) {
			t.Fatalf("seed %d ran two ways:\n%s\n---\n%s", seed, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
	}
}
