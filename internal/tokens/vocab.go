package tokens

import _ "embed"

// vocab is o200k_base.bin (layout in internal/gen): the tokens, a hash table
// from token bytes to rank, and which byte pairs occur inside tokens. It is
// read where it lies in the executable; nothing is decoded at start-up.
//
//go:embed o200k_base.bin
var vocab string

const (
	rankBits  = 18
	rankMask  = 1<<rankBits - 1
	emptySlot = 0xFFFFFFFF
	noRank    = ^uint32(0)
	// maxTokenLen is the longest token in bytes.
	maxTokenLen = 128
)

func le32(s string, i int) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

var (
	vocabSize = int(le32(vocab, 4))
	slotCount = int(le32(vocab, 8))
	offsetsAt = 12
	tableAt   = offsetsAt + 4*(vocabSize+1)
	pairsAt   = tableAt + 4*slotCount
	bytesAt   = pairsAt + 8192
)

func init() {
	if vocab[:4] != "o2kb" || bytesAt+int(le32(vocab, tableAt-4)) != len(vocab) {
		panic("tokens: o200k_base.bin is damaged; run go generate ./internal/tokens")
	}
}

// token returns the bytes of the token of rank r.
func token(r int) string {
	return vocab[bytesAt+int(le32(vocab, offsetsAt+4*r)) : bytesAt+int(le32(vocab, offsetsAt+4*r+4))]
}

// rankOf returns the rank of the token whose bytes are t, or noRank.
func rankOf(t string) uint32 {
	if len(t) > maxTokenLen {
		return noRank
	}
	h := uint64(14695981039346656037) // FNV-1a, as internal/gen
	for i := 0; i < len(t); i++ {
		h ^= uint64(t[i])
		h *= 1099511628211
	}
	fp := uint32(h>>(64-(32-rankBits))) << rankBits
	mask := uint64(slotCount - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := le32(vocab, tableAt+4*int(i))
		if e == emptySlot {
			return noRank
		}
		if e&^rankMask == fp && token(int(e&rankMask)) == t {
			return e & rankMask
		}
	}
}

// pairInToken reports whether byte a followed by byte b occurs inside some
// token. Where it does not, no merge can join a and b.
func pairInToken(a, b byte) bool {
	k := int(a)<<8 | int(b)
	return vocab[pairsAt+k>>3]&(1<<(k&7)) != 0
}
