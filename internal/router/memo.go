package router

import "sync"

// The router keeps no state between requests: each one's history is
// rebuilt from the request alone. Decoding a carrier is a pure function of
// its item's bytes, though, and Codex sends every item of a session again
// in every request, so a long session decoded its same carriers again and
// again (about 2 µs each, a millisecond or more for a megabyte of
// history). memo remembers the replacement of a carrier item, keyed by the
// item's raw bytes: a map compares its keys whole, so an item is taken
// from the memo only when it is byte for byte one that was decoded and
// verified, and what is written is what the decoding wrote. Forgetting
// changes nothing but speed (a restart, or an item not seen for a while).
//
// Its memory is bounded: two generations, each of at most memoGeneration
// bytes of keys and replacements; an entry found in the old one moves to
// the current one, and a full current generation becomes the old one,
// dropping the older. A session's working set (about 600 bytes a carrier,
// 0.9 MB for a megabyte of history) stays in the current generation while
// it is used.
type memo struct {
	mu       sync.Mutex
	cur, old map[string][]byte
	curBytes int
}

// memoGeneration bounds one generation: keys and replacements, with
// memoEntryBytes for each entry's own bookkeeping.
const (
	memoGeneration = 4 << 20
	memoEntryBytes = 64
)

func newMemo() *memo { return &memo{cur: map[string][]byte{}} }

// get returns the replacement of the carrier item raw, or nil. The slice
// is never written to.
func (m *memo) get(raw []byte) []byte {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if repl, ok := m.cur[string(raw)]; ok {
		return repl
	}
	repl, ok := m.old[string(raw)]
	if !ok {
		return nil
	}
	delete(m.old, string(raw))
	m.add(string(raw), repl)
	return repl
}

// put remembers repl as the replacement of the carrier item raw; both are
// copied.
func (m *memo) put(raw, repl []byte) {
	if m == nil || len(raw)+len(repl)+memoEntryBytes > memoGeneration/16 {
		return // a single huge item is not worth a generation's room
	}
	key, val := string(raw), append([]byte(nil), repl...)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.cur[key]; ok {
		return
	}
	m.add(key, val[:len(val):len(val)])
}

func (m *memo) add(key string, repl []byte) {
	n := len(key) + len(repl) + memoEntryBytes
	if m.curBytes+n > memoGeneration {
		m.old, m.cur, m.curBytes = m.cur, make(map[string][]byte, len(m.cur)), 0
	}
	m.cur[key] = repl
	m.curBytes += n
}
