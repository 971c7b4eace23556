package modelcheck

// replay rebuilds the path to world idx by replaying, from its initial
// world, the ordinal of each move on the way; only the ordinals are kept
// during the search, so this works with fingerprints too.
//
// The search moves between canonical worlds, which rename what symmetry
// reduction may rename (holders, say) at every step. A trace of them would
// rename holders between steps, so replay follows the same path on worlds
// it never canonicalises: from the initial world as given, each step takes
// the first move whose world is symmetric to the search's next one. The
// trace is as short, and reads as one story.
func (s *search[W]) replay(idx int32) []Step[W] {
	var ords []uint32
	for i := idx; i >= 0; i = s.parent[i] {
		ords = append(ords, s.ordinal[i])
	}
	// ords runs from idx back to the initial world; walk it forwards.
	c := s.m.Init[ords[len(ords)-1]]
	w := s.canonical(c)
	trace := []Step[W]{{"init", c}}
	for k := len(ords) - 2; k >= 0; k-- {
		label, next := s.nthMove(w, ords[k])
		w = s.canonical(next)
		if s.m.Canonical != nil {
			if l, n, ok := s.symmetricMove(c, w); ok {
				label, next = l, n
			}
		}
		c = next
		trace = append(trace, Step[W]{label, c})
	}
	return trace
}

// symmetricMove returns the first move of c to a world whose canonical
// form is w. A Canonical that is a true symmetry of Next always has one;
// without it, the trace keeps the search's own world.
func (s *search[W]) symmetricMove(c, w W) (label string, next W, ok bool) {
	s.m.Next(c, func(l string, n W) {
		if !ok && s.m.Canonical(n) == w {
			label, next, ok = l, n, true
		}
	})
	return label, next, ok
}

// restate says again, in the names of trace's last world, why property
// fails there: the trace's worlds are not the canonical ones the search
// found it in. A move invariant's failure (moved) is the first failing move
// out of the world before last, which replaces the trace's last step.
func (s *search[W]) restate(property, reason string, trace []Step[W], moved bool) string {
	if s.m.Canonical == nil {
		return reason
	}
	last := &trace[len(trace)-1]
	if moved {
		from := trace[len(trace)-2].World
		found := false
		s.m.Next(from, func(l string, to W) {
			for _, inv := range s.m.Moves {
				if found || inv.Name != property {
					continue
				}
				if err := inv.Check(from, l, to); err != nil {
					*last, reason, found = Step[W]{l, to}, err.Error(), true
				}
			}
		})
		return reason
	}
	if property == owesWork && s.m.Owes != nil {
		if owed := s.m.Owes(last.World); owed != "" {
			return owesReason + owed
		}
		return reason
	}
	for _, inv := range s.m.Invariants {
		if inv.Name == property {
			if err := inv.Check(last.World); err != nil {
				return err.Error()
			}
		}
	}
	return reason
}

func (s *search[W]) nthMove(w W, n uint32) (string, W) {
	var (
		i     uint32
		label string
		found W
	)
	s.m.Next(w, func(l string, next W) {
		if i == n {
			label, found = l, next
		}
		i++
	})
	if i <= n {
		panic("modelcheck: Next is not deterministic: a move seen during the search is gone on replay")
	}
	return label, found
}

func (s *search[W]) canonical(w W) W {
	if s.m.Canonical != nil {
		return s.m.Canonical(w)
	}
	return w
}
