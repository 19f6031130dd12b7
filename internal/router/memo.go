package router

import (
	"bytes"
	"slices"
	"sync"
)

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

// Codex sends a session's history again in every request, with the new
// items after the old: a request's input array begins with the previous
// request's items, byte for byte. histories remembers, for the last few
// histories rewritten, their bytes up to the end of their last item and
// the state of the rewrite there (its edits, the carriers waiting for
// their output, ...): a request whose body begins with those same bytes
// resumes the rewrite after them, the rest of its history rewritten as
// always. The state at an item's end is a function of the bytes before it
// alone (an item that is an object, an array or a string ends at its own
// closing byte), and the bytes are compared whole, so the edits are the
// ones a rewrite from the start would make.
//
// An entry is taken out while a rewrite resumes from it, so that it can
// grow in place, and put back grown; at most histEntries are kept, of at
// most histBytes of history in all.
type histories struct {
	mu      sync.Mutex
	entries []*history // the most recent last
	resumed int        // how many rewrites resumed (for the tests)
}

const (
	histEntries = 4
	histBytes   = 8 << 20
)

// history is the state of a rewrite at body[len(head)], the end of an
// item of the input array that starts at body[start].
type history struct {
	start              int
	head               []byte // the body up to there; may have room after it
	edits              []edit
	carried            [][]byte
	refused            []refusal
	dev                span
	decoded, explained int
}

// take returns the longest history body begins with for an input array
// at body[start], taken out, or nil.
func (h *histories) take(body []byte, start int) *history {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	best := -1
	for k, e := range h.entries {
		if e.start == start && len(e.head) < len(body) && (best < 0 || len(e.head) > len(h.entries[best].head)) &&
			bytes.Equal(body[:len(e.head)], e.head) {
			best = k
		}
	}
	if best < 0 {
		return nil
	}
	e := h.entries[best]
	h.entries = slices.Delete(h.entries, best, best+1)
	h.resumed++
	return e
}

// put keeps e, the most recent history, dropping the oldest beyond the
// bounds.
func (h *histories) put(e *history) {
	if h == nil || len(e.head) > histBytes/2 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = append(h.entries, e)
	n := 0
	for k := len(h.entries) - 1; k >= 0; k-- {
		n += cap(h.entries[k].head)
		if n > histBytes || len(h.entries)-k > histEntries {
			h.entries = slices.Delete(h.entries, 0, k+1)
			break
		}
	}
}
