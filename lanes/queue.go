package lanes

// waitQueue is the FIFO of waiting lanes, linked through the lanes
// themselves, so that joining, leaving from any place and taking the head
// cost O(1) and allocate nothing, however many keys wait.
type waitQueue[K comparable] struct {
	head, tail *lane[K]
	n          int
}

func (q *waitQueue[K]) len() int { return q.n }

func (q *waitQueue[K]) front() *lane[K] { return q.head }

func (q *waitQueue[K]) push(ln *lane[K]) {
	ln.prev, ln.next, ln.queued = q.tail, nil, true
	if q.tail != nil {
		q.tail.next = ln
	} else {
		q.head = ln
	}
	q.tail = ln
	q.n++
}

func (q *waitQueue[K]) remove(ln *lane[K]) {
	if ln.prev != nil {
		ln.prev.next = ln.next
	} else {
		q.head = ln.next
	}
	if ln.next != nil {
		ln.next.prev = ln.prev
	} else {
		q.tail = ln.prev
	}
	ln.prev, ln.next, ln.queued = nil, nil, false
	q.n--
}

// keys lists the waiting keys, longest-waiting first.
func (q *waitQueue[K]) keys() []K {
	keys := make([]K, 0, q.n)
	for ln := q.head; ln != nil; ln = ln.next {
		keys = append(keys, ln.key)
	}
	return keys
}
