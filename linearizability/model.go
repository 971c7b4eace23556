package linearizability

import (
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/anishathalye/porcupine"
)

// object names the model a key's operations are checked against.
type object uint8

const (
	leaseObject object = iota
	lockObject
	fenceObject // a key's fenced sections: a lock the fence holds
)

func (o object) String() string {
	return [...]string{leaseObject: "lease", lockObject: "lock", fenceObject: "fence"}[o]
}

// state is one object's state: for a lease, the record's generation,
// whether it is held (not released), and the last accepted write; for a
// lock, its holder (process+1; 0 when free). An object uses only its own
// fields, so one comparable struct serves both models.
type state struct {
	gen    uint64
	held   bool
	value  string
	holder int
	// ranked counts the acquisitions of unknown outcome linearized,
	// which the model takes in rank order (see reduce).
	ranked int
}

// step is the models' sequential specification: whether op, with its
// recorded output, may happen in s, and the state after it. An operation
// whose outcome is uncertain (open, Unknown or Done) is always allowed:
// it takes effect where it can (see applies), and otherwise changes
// nothing. Being allowed everywhere, and (when open) ending after every
// other operation, it may be linearized at any moment after its call
// where it takes effect, or last, where its effect matters to no one:
// so both outcomes are accepted. (reduce ends some earlier, or drops
// them, where that changes no verdict.)
func step(s state, op *Event) (bool, state) {
	if op.Uncertain() || op.Output.Status == Done {
		if ok, next := applies(s, op); ok {
			return true, next
		}
		return true, s
	}
	if op.Output.Status == Refused {
		return refusable(s, op), s
	}
	ok, next := applies(s, op)
	if ok && op.Kind == Acquire && op.Output.Gen != next.gen {
		return false, s
	}
	if ok && op.Kind == Read && op.Output.Value != s.value {
		return false, s
	}
	return ok, next
}

// stepRanked is step, which takes the acquisitions of unknown outcome
// only in rank order (see reduce).
func stepRanked(s state, in *input) (bool, state) {
	if in.rank > 0 && s.ranked != in.rank-1 {
		return false, s
	}
	ok, next := step(s, in.Event)
	if ok && in.rank > 0 {
		next.ranked = in.rank
	}
	return ok, next
}

// applies reports whether op can take effect in s, and the state it
// leaves. An acquisition can always take effect (a held record can be
// taken over once its holder is dead or silent, which the model cannot
// see); a release or a fenced write needs the record to hold the token
// and not be released; a break needs it held (at the generation it
// names), and writes the next generation released; a lock needs the lock free, an unlock needs its
// process to hold it; a crash frees the lock its process held. A fenced
// section is the same lock, of the fence: Enter needs no other section
// under way, Leave its own.
func applies(s state, op *Event) (bool, state) {
	switch op.Kind {
	case Acquire:
		s.gen, s.held = s.gen+1, true
		return true, s
	case Release:
		if s.held && s.gen == op.Input.Token {
			s.held = false
			return true, s
		}
	case Write:
		if s.held && s.gen == op.Input.Token {
			s.value = op.Input.Value
			return true, s
		}
	case Read:
		return true, s
	case Break:
		// A known break names the generation it broke; it writes the
		// next one, released.
		if s.held && (op.Output.Status != OK || op.Output.Gen == s.gen) {
			s.gen, s.held = s.gen+1, false
			return true, s
		}
	case Lock, Enter:
		if s.holder == 0 {
			s.holder = op.Process + 1
			return true, s
		}
	case Unlock, Leave:
		if s.holder == op.Process+1 {
			s.holder = 0
			return true, s
		}
	case Crash:
		if s.holder == op.Process+1 {
			s.holder = 0
		}
		return true, s
	}
	return false, s
}

// refusable reports whether op may be refused in s. Acquire and Lock are
// refused only while the object is held; a release only when the record
// no longer holds its token; a fenced write may always be refused (the
// fence may be stricter than the model, never looser), and so may a
// break (it refuses a holder that may still run, which the model cannot
// see, as well as a free key).
func refusable(s state, op *Event) bool {
	switch op.Kind {
	case Acquire:
		return s.held
	case Release:
		return !(s.held && s.gen == op.Input.Token)
	case Lock:
		return s.holder != 0
	case Enter, Leave:
		return false // recorded only as done
	default:
		return true
	}
}

var hashSeed = maphash.MakeSeed()

// model is the porcupine model of both objects. Operations are *input
// inputs (the output is carried in the event too, and porcupine's output
// is nil), and a segment's opening and closing (see chain). Partitioning is done by Check, one partition per object. With
// bounded, a Local history's, it is nondeterministic where a bounded
// operation of unknown outcome may take effect or not (input.bounded), and
// porcupine checks it over sets of states (one state elsewhere); without,
// every step has one outcome, and costs less.
func model(bounded bool) porcupine.Model {
	describeOp := func(in, _ any) string {
		switch op := in.(type) {
		case *opening:
			return "from " + describeStates(op.starts)
		case *closing:
			return "end of segment"
		}
		op := in.(*input)
		return fmt.Sprintf("p%d %s", op.Process, describe(op.Kind, op.Input, op.Output, op.Open))
	}
	describeState := func(s any) string { return s.(state).String() }
	if !bounded {
		return porcupine.Model{
			Init: func() any { return state{} },
			Step: func(s, in, _ any) (bool, any) {
				switch op := in.(type) {
				case *opening:
					return true, op.starts[0] // chain gives this model one at a time
				case *closing:
					op.ends[s.(state)] = struct{}{}
					return false, s
				}
				return stepRanked(s.(state), in.(*input))
			},
			Equal:             stateEqual,
			Hash:              stateHash,
			DescribeOperation: describeOp,
			DescribeState:     describeState,
		}
	}
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{state{}} },
		Step: func(s, in, _ any) []any {
			switch op := in.(type) {
			case *opening:
				out := make([]any, len(op.starts))
				for i, s := range op.starts {
					out[i] = s
				}
				return out
			case *closing:
				op.ends[s.(state)] = struct{}{}
				return nil
			}
			op := in.(*input)
			ok, next := stepRanked(s.(state), op)
			switch {
			case !ok:
				return nil
			case op.bounded && next != s.(state):
				return []any{next, s}
			}
			return []any{next}
		},
		Equal:             stateEqual,
		Hash:              stateHash,
		DescribeOperation: describeOp,
		DescribeState:     describeState,
	}
	return nm.ToModel()
}

func stateEqual(a, b any) bool { return a.(state) == b.(state) }

func stateHash(s any) uint64 {
	st := s.(state)
	var h maphash.Hash
	h.SetSeed(hashSeed)
	maphash.WriteComparable(&h, st)
	return h.Sum64()
}

// describeStates describes states as alternatives: "A, or B".
func describeStates(states []state) string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = s.String()
	}
	return strings.Join(out, ", or ")
}

// String describes a state for the visualisation.
func (s state) String() string {
	if s.holder != 0 {
		return fmt.Sprintf("lock held by p%d", s.holder-1)
	}
	if s.gen == 0 {
		return "free"
	}
	held := "released"
	if s.held {
		held = "held"
	}
	return fmt.Sprintf("gen %d %s, value %q", s.gen, held, s.value)
}
