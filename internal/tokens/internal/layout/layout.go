// Package layout is the format of the vocabulary table that internal/gen
// writes and package tokens reads where it lies in the executable: the
// constants and the hash both sides must agree on.
//
// o200k_base.bin, integers little-endian:
//
//	"o2kb", uint32 token count, uint32 slot count (a power of two),
//	uint32 records length
//	slots[slot count] uint32: Fingerprint(h)<<OffsetBits | record offset,
//	                  or Empty; a token sits at the first free slot from
//	                  Hash(token) & (slot count-1), probing linearly
//	pairs[8192]       bit a<<8|b set when some token holds byte a then b
//	records           per token, in rank order: uint24 rank, uint8
//	                  length, the token's bytes
//
// Records in rank order put the frequent tokens, which have low ranks, in a
// few pages at the front.
package layout

const (
	Magic      = "o2kb"
	HeaderLen  = 16
	PairsLen   = 8192
	OffsetBits = 22 // records are under 4 MiB
	OffsetMask = 1<<OffsetBits - 1
	Empty      = 0xFFFFFFFF
	SlotBits   = 18
	MaxToken   = 128 // the longest token in bytes
)

// Fingerprint is the part of a slot that lets most probes miss without
// reading the record.
func Fingerprint(h uint64) uint32 { return uint32(h >> (64 - (32 - OffsetBits))) }

// Hash hashes a token's bytes, eight at a time.
func Hash(s string) uint64 {
	const m = 0x9E3779B97F4A7C15
	h := uint64(len(s)) * m
	for len(s) >= 8 {
		v := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		h = (h ^ v) * m
		h ^= h >> 29
		s = s[8:]
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		v |= uint64(s[i]) << (8 * i)
	}
	h = (h ^ v) * m
	h ^= h >> 32
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 31
	return h
}
