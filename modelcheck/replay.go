package modelcheck

// replay rebuilds the path to world idx by replaying, from its initial
// world, the ordinal of each move on the way; only the ordinals are kept
// during the search, so this works with fingerprints too.
func (s *search[W]) replay(idx int32) []Step[W] {
	var ords []uint32
	for i := idx; i >= 0; i = s.parent[i] {
		ords = append(ords, s.ordinal[i])
	}
	// ords runs from idx back to the initial world; walk it forwards.
	w := s.canonical(s.m.Init[ords[len(ords)-1]])
	trace := []Step[W]{{"init", w}}
	for k := len(ords) - 2; k >= 0; k-- {
		label, next := s.nthMove(w, ords[k])
		w = s.canonical(next)
		trace = append(trace, Step[W]{label, w})
	}
	return trace
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
