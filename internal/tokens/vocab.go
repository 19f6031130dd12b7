package tokens

import (
	_ "embed"

	"github.com/rowkit/rowkit/internal/tokens/internal/layout"
)

// vocab is o200k_base.bin (see package layout): a hash table from token
// bytes to rank over records of the tokens, and which byte pairs occur
// inside tokens. It is read where it lies in the executable; nothing is
// decoded or built at start-up.
//
//go:embed o200k_base.bin
var vocab string

const (
	noRank      = ^uint32(0)
	maxTokenLen = layout.MaxToken
	slotsAt     = layout.HeaderLen
)

func le32(s string, i int) uint32 {
	_ = s[i+3]
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

var (
	vocabSize = int(le32(vocab, 4))
	slotMask  = uint64(le32(vocab, 8) - 1)
	pairsAt   = slotsAt + 4*int(le32(vocab, 8))
	recordsAt = pairsAt + layout.PairsLen
)

func init() {
	if vocab[:4] != layout.Magic || recordsAt+int(le32(vocab, 12)) != len(vocab) {
		panic("tokens: o200k_base.bin is damaged; run go generate ./internal/tokens")
	}
}

// rankOf returns the rank of the token whose bytes are t, or noRank.
func rankOf(t string) uint32 {
	if len(t) > maxTokenLen {
		return noRank
	}
	h := layout.Hash(t)
	fp := layout.Fingerprint(h)
	for i := h & slotMask; ; i = (i + 1) & slotMask {
		e := le32(vocab, slotsAt+4*int(i))
		if e == layout.Empty {
			return noRank
		}
		if e>>layout.OffsetBits != fp {
			continue
		}
		at := recordsAt + int(e&layout.OffsetMask)
		if int(vocab[at+3]) == len(t) && vocab[at+4:at+4+len(t)] == t {
			return uint32(vocab[at]) | uint32(vocab[at+1])<<8 | uint32(vocab[at+2])<<16
		}
	}
}

// pairInToken reports whether byte a followed by byte b occurs inside some
// token. Where it does not, no merge can join a and b.
func pairInToken(a, b byte) bool {
	k := int(a)<<8 | int(b)
	return vocab[pairsAt+k>>3]&(1<<(k&7)) != 0
}
