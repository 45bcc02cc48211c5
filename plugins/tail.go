package plugins

import "sync"

// headTailBuffer keeps the first head and the last tail bytes written to
// it: a crash message comes first, the end of its stack trace last.
type headTailBuffer struct {
	mu      sync.Mutex
	headMax int
	tailMax int
	head    []byte
	tail    []byte
	dropped bool
}

func newHeadTailBuffer(head, tail int) *headTailBuffer {
	return &headTailBuffer{headMax: head, tailMax: tail}
}

func (b *headTailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.headMax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= b.tailMax {
		b.dropped = b.dropped || len(b.tail) > 0 || len(p) > b.tailMax
		b.tail = append(b.tail[:0], p[len(p)-b.tailMax:]...)
		return n, nil
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - b.tailMax; over > 0 {
		b.dropped = true
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

func (b *headTailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped {
		return string(b.head) + "\n[…]\n" + string(b.tail)
	}
	return string(b.head) + string(b.tail)
}
