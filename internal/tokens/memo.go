package tokens

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"
)

// Most pre-tokens of code are short and come back again and again:
// identifiers, keywords, runs of punctuation, indentation. memo remembers the
// counts of pre-tokens of 2 to memoMaxLen bytes in a fixed table shared by
// the whole process, so that a piece seen before costs one probe of a small
// table instead of lookups in the 3.3 MB vocabulary and a merge.
//
// A piece's bytes, read as a little-endian word k, are multiplied by an odd
// constant: h = k*memoMul is a bijection, so h's top memoSetBits bits pick a
// set of two slots and a slot keeps h's other bits, the piece's length and
// its count in one word. Top bits and kept bits together are all of h, so a
// slot that matches holds this very piece: counts stay exact, and one atomic
// load or store reads or writes a whole slot, so counts may run on many
// goroutines at once (the shell runs commands as goroutines, the MCP server
// serves calls concurrently) without locks.
//
// The table never grows: a piece that finds neither slot of its set holding
// it is counted and takes an empty slot of the set, else the one a bit of h
// picks.

const (
	memoMaxLen  = 8 // the longest piece remembered, in bytes: 96% of those of code
	memoSetBits = 12
	memoKeep    = 64 - memoSetBits // bits of h a slot keeps
	memoMul     = 0x9E3779B97F4A7C15
)

// memo holds 4096 sets of 2 slots, 64 KiB. A slot is count<<56 | len<<52 |
// the low memoKeep bits of h, or 0 when empty (a count is at least 1).
var memo [1 << memoSetBits][2]atomic.Uint64

// memoKeyTail returns the bytes of s[i:j], 2 <= j-i <= memoMaxLen and
// i+8 > len(s), as one zero-padded little-endian word: the 8 bytes of s
// ending at j with the bytes before the piece shifted off, or byte by byte
// when s is shorter.
func memoKeyTail(s string, i, j int) uint64 {
	n := uint(j - i)
	if j >= 8 {
		return load64(s, j-8) >> (64 - 8*n)
	}
	var k uint64
	for x := uint(0); x < n; x++ {
		k |= uint64(s[i+int(x)]) << (8 * x)
	}
	return k
}

// load64 returns s[i:i+8] as a little-endian word.
func load64(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:i+8]), 8))
}

// memoCount returns pieceCount(s[i:j]) for a piece of 2 to memoMaxLen bytes.
func memoCount(s string, i, j int) int {
	var k uint64
	if i+8 <= len(s) {
		k = load64(s, i) & (1<<(8*uint(j-i)) - 1) // a shift by 64 keeps every bit
	} else {
		k = memoKeyTail(s, i, j)
	}
	h := k * memoMul
	want := uint64(j-i)<<memoKeep | h&(1<<memoKeep-1)
	set := &memo[h>>memoKeep]
	if w := set[0].Load(); w&^(0xFF<<56) == want {
		return int(w >> 56)
	}
	if w := set[1].Load(); w&^(0xFF<<56) == want {
		return int(w >> 56)
	}
	return memoAdd(s[i:j], set, h, want)
}

// memoAdd counts the piece p that its set did not hold and keeps the count.
func memoAdd(p string, set *[2]atomic.Uint64, h, want uint64) int {
	c := pieceCount(p)
	e := &set[h>>(memoKeep-1)&1]
	if set[0].Load() == 0 {
		e = &set[0]
	} else if set[1].Load() == 0 {
		e = &set[1]
	}
	e.Store(uint64(c)<<56 | want)
	return c
}

// Pieces of 9 to 16 bytes (3% of those of code, but long identifiers and
// indentation that rarely are one token, so a tenth of the work) are
// remembered in a second table whose slots hold the piece's two words
// whole. A slot is three words, so a sequence lock orders them: tag is
// seq<<32 | count<<8 | len, a writer makes seq odd, stores the words, then
// stores the tag with seq even again; a reader uses a slot only when its tag
// was even and unchanged across its reads of the words, and a writer that
// finds a slot busy leaves it alone.

const (
	memo16MaxLen  = 16
	memo16SetBits = 10
)

type memo16Slot struct {
	tag    atomic.Uint64
	k0, k1 atomic.Uint64
}

// memo16 holds 1024 sets of 2 slots, 48 KiB.
var memo16 [1 << memo16SetBits][2]memo16Slot

// memo16Count returns pieceCount(s[i:j]) for a piece of 9 to 16 bytes.
func memo16Count(s string, i, j int) int {
	n := uint64(j - i)
	k0 := load64(s, i)
	k1 := load64(s, j-8) >> (8 * (16 - n)) // the piece's last n-8 bytes
	h := (k0*memoMul ^ k1) * 0xC2B2AE3D27D4EB4F
	set := &memo16[h>>(64-memo16SetBits)]
	for w := range set {
		e := &set[w]
		t := e.tag.Load()
		a, b := e.k0.Load(), e.k1.Load()
		if t&0xFF == n && a == k0 && b == k1 && t>>32&1 == 0 && e.tag.Load() == t {
			return int(t >> 8 & 0xFF)
		}
	}
	c := pieceCount(s[i:j])
	e := &set[h>>(63-memo16SetBits)&1]
	if set[0].tag.Load()&0xFF == 0 {
		e = &set[0]
	} else if set[1].tag.Load()&0xFF == 0 {
		e = &set[1]
	}
	if t := e.tag.Load(); t>>32&1 == 0 && e.tag.CompareAndSwap(t, t+1<<32) {
		e.k0.Store(k0)
		e.k1.Store(k1)
		e.tag.Store((t>>32+2)<<32 | uint64(c)<<8 | n)
	}
	return c
}
