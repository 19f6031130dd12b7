package patch

import (
	"math/rand/v2"
	"testing"
)

// The relocation simulation: random files of 100 to 10,000 lines, a script
// of row targets taken from the file as the caller read it, then random
// edits (insertions, deletions, changes in place) that make the caller's
// rows stale. Every line carries a slot identity, so the simulation knows
// where each of the caller's lines really is now (or that it is gone or
// was changed), and judges every relocation the resolver accepts.

type simStats struct {
	scripts       int // scripts simulated
	staleScripts  int // scripts with at least one stale target
	staleTargets  int // targets not current at their own line
	movedTargets  int // stale targets whose lines all survive unchanged at one shift
	relocated     int // targets accepted at a shift, at the right place
	falseScripts  int // scripts with a target accepted at a wrong place
	falseTargets  int
	collisionSame int // targets accepted at their own place whose line changed but kept its hash
	sameHashThere int // targets taken as current at their own line number, where another line with the same hash now is
}

// commonLines are the few texts that repeat in real files (blank lines,
// closing braces, return statements): a fixed hash each.
var commonHashes = func() []uint16 {
	r := rand.New(rand.NewPCG(1, 2))
	h := make([]uint16, 40)
	for i := range h {
		h[i] = uint16(r.Uint32())
	}
	return h
}()

func simLineHash(r *rand.Rand) uint16 {
	if r.Float64() < 0.3 {
		// Zipf-like choice among the common lines.
		k := int(float64(len(commonHashes)) * r.Float64() * r.Float64())
		return commonHashes[k]
	}
	return uint16(r.Uint32())
}

type simLine struct {
	slot    int
	hash    uint16
	changed bool
}

func simulate(r *rand.Rand, scripts int) simStats {
	var st simStats
	var v0, v1 []simLine
	hashes := make([]uint16, 0, 12000)
	for range scripts {
		st.scripts++
		n := 100 + r.IntN(9901)
		v0 = v0[:0]
		for i := range n {
			v0 = append(v0, simLine{slot: i, hash: simLineHash(r)})
		}
		// The script, written against v0.
		k := 1 + r.IntN(4)
		targets := make([][]refUse, k)
		for i := range targets {
			if r.Float64() < 0.4 && n > 2 {
				ln := 2 + r.IntN(39)
				a := 1 + r.IntN(n-ln+1)
				b := a + ln - 1
				targets[i] = []refUse{{a, v0[a-1].hash}, {b, v0[b-1].hash}}
			} else {
				a := 1 + r.IntN(n)
				targets[i] = []refUse{{a, v0[a-1].hash}}
			}
		}
		// Edits by someone else.
		v1 = append(v1[:0], v0...)
		next := n
		for range 1 + r.IntN(4) {
			p := r.Float64()
			at := r.IntN(len(v1) + 1)
			switch {
			case p < 0.35:
				m := 1 + r.IntN(50)
				ins := make([]simLine, m)
				for j := range ins {
					ins[j] = simLine{slot: next, hash: simLineHash(r)}
					next++
				}
				v1 = append(v1[:at], append(ins, v1[at:]...)...)
			case p < 0.65 && len(v1) > 1:
				m := min(1+r.IntN(30), len(v1)-at)
				v1 = append(v1[:at], v1[at+m:]...)
			default:
				for j := at; j < min(at+1+r.IntN(5), len(v1)); j++ {
					v1[j].hash, v1[j].changed = simLineHash(r), true
				}
			}
		}
		hashes = hashes[:0]
		where := make(map[int]int, len(targets)*2) // slot -> position in v1, for the script's lines only
		for _, t := range targets {
			for _, ref := range t {
				where[ref.line-1] = -1
			}
		}
		for i, l := range v1 {
			hashes = append(hashes, l.hash)
			if _, ok := where[l.slot]; ok && l.slot < n && !l.changed {
				where[l.slot] = i + 1
			}
		}
		out := relocate(hashes, targets)
		stale, bad := false, false
		for i, t := range targets {
			current := true
			for _, ref := range t {
				if ref.line > len(hashes) || hashes[ref.line-1] != ref.hash {
					current = false
				}
			}
			// Where the target's lines really are, if all survive at one shift.
			movedBy, intact := 0, true
			for j, ref := range t {
				p := where[ref.line-1]
				if p < 0 {
					intact = false
					break
				}
				if j == 0 {
					movedBy = p - ref.line
				} else if p-ref.line != movedBy {
					intact = false
				}
			}
			if !current {
				stale = true
				st.staleTargets++
				if intact {
					st.movedTargets++
				}
			}
			o := out[i]
			if !o.ok {
				continue
			}
			right, changedInPlace := true, false
			for _, ref := range t {
				pos := ref.line + o.shift
				if v1[pos-1].slot != ref.line-1 {
					right = false
				} else if v1[pos-1].changed {
					changedInPlace = true
				}
			}
			switch {
			case !right && o.shift == 0:
				// The rule's first clause: a row whose line has its hash is
				// the target. Not a relocation; counted apart.
				st.sameHashThere++
			case !right:
				st.falseTargets++
				bad = true
			case changedInPlace:
				st.collisionSame++
			case o.shift != 0:
				st.relocated++
			}
		}
		if stale {
			st.staleScripts++
		}
		if bad {
			st.falseScripts++
		}
	}
	return st
}

func (st simStats) report(tb testing.TB) {
	tb.Logf("scripts %d, with stale targets %d; stale targets %d, of which intact at one shift %d; relocated %d (%.1f%% of intact); false relocations %d targets in %d scripts; same line changed with its hash kept %d; another line with the row's hash now at its number %d",
		st.scripts, st.staleScripts, st.staleTargets, st.movedTargets, st.relocated, 100*float64(st.relocated)/float64(max(st.movedTargets, 1)), st.falseTargets, st.falseScripts, st.collisionSame, st.sameHashThere)
}

func TestRelocationSimulation(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	st := simulate(rand.New(rand.NewPCG(14, 1)), n)
	st.report(t)
	if st.falseScripts != 0 {
		t.Fatalf("%d false relocations in %d scripts", st.falseScripts, st.scripts)
	}
	if st.staleScripts < n/2 || st.relocated < st.movedTargets/4 {
		t.Fatalf("the simulation does not exercise relocation: %+v", st)
	}
}

// BenchmarkRelocationSimulation runs b.N simulated scripts and reports the
// false-relocation rate per million scripts and the relocation rate. Run
// with -benchtime=2000000x for the figures in bench/README.md.
func BenchmarkRelocationSimulation(b *testing.B) {
	st := simulate(rand.New(rand.NewPCG(uint64(b.N), 7)), b.N)
	b.ReportMetric(float64(st.falseScripts)*1e6/float64(st.scripts), "false/Mscripts")
	b.ReportMetric(100*float64(st.relocated)/float64(max(st.movedTargets, 1)), "relocated%")
	b.ReportMetric(float64(st.staleScripts)/float64(st.scripts), "stale-fraction")
	st.report(b)
}
