package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// The memo stays within its two generations however many carriers pass,
// and keeps the ones in use.
func TestMemoBounded(t *testing.T) {
	m := newMemo()
	repl := bytes.Repeat([]byte("r"), 300)
	hot := []byte(`{"hot":1}`)
	m.put(hot, repl)
	for i := range 100000 {
		m.put(fmt.Appendf(nil, `{"call":%d,"pad":"%0300d"}`, i, 0), repl)
		if i%1000 == 0 && m.get(hot) == nil {
			t.Fatalf("after %d carriers, the one in use was forgotten", i)
		}
		if m.curBytes > memoGeneration {
			t.Fatalf("the current generation holds %d bytes", m.curBytes)
		}
	}
	total := 0
	for _, g := range []map[string][]byte{m.cur, m.old} {
		for k, v := range g {
			total += len(k) + len(v) + memoEntryBytes
		}
	}
	if total > 2*memoGeneration {
		t.Fatalf("the memo holds %d bytes", total)
	}
	if m.get([]byte(`{"call":0,"pad":"x"}`)) != nil {
		t.Fatal("an item never put was found")
	}
	big := bytes.Repeat([]byte("b"), memoGeneration/16)
	m.put(big, repl)
	if m.get(big) != nil {
		t.Fatal("a huge item was remembered")
	}
}

// Items that differ from remembered carriers by a byte anywhere are
// rewritten as without the memo, and as the reference rewrites them.
func TestMemoAltered(t *testing.T) {
	c := testCarrier(t)
	body := session(t, c, []string{"in a.txt\ntype 1:8ed3 \"x\"", "hread a.txt\n", "echo 'q' \"d\" \\ $x\u2028é\x01", "x\x00y"}, 3)
	sameAsReference(t, c, "session", body)
	long := longSession(t, 64<<10)
	sameAsReference(t, c, "long", long)
	r := rand.New(rand.NewPCG(20, 1))
	alphabet := []byte("\"\\'\n nrtu0aA_RWKIT{}[]:,é")
	for i := range 400 {
		b := bytes.Clone([]byte(map[bool][]byte{true: body, false: long}[i%2 == 0]))
		// Somewhere in a carrier.
		off := r.IntN(len(b) / 2)
		at := bytes.Index(b[off:], []byte(`"function_call"`))
		if at < 0 {
			continue
		}
		at += off
		at = min(len(b)-1, at+r.IntN(400))
		b[at] = alphabet[r.IntN(len(alphabet))]
		sameAsReference(t, c, fmt.Sprintf("altered %d at byte %d", i, at), b)
	}
}

// A session's requests, each with the items of the one before and more
// (cut anywhere: between a carrier and its output too), some with an
// earlier item changed or with a request of another session in between,
// are rewritten as without the memos, and as the reference rewrites them.
func TestHistoryResumed(t *testing.T) {
	c := testCarrier(t)
	r := rand.New(rand.NewPCG(20, 2))
	bodies := [][]byte{recorded(t, "calls"), longSession(t, 32<<10)}
	requests := 0
	for seed := range 4 {
		bodies = append(bodies, session(t, c, []string{"in a.txt\ntype 1:8ed3 \"x\"", "hread a.txt\n", "echo 'q' \"d\" \\ $x\u2028é\x01", "x\x00y", "ROWKIT_\nRé"}, seed))
	}
	for n, body := range bodies {
		ms, _ := splitObject(body)
		items, _ := splitArray(get(ms, "input"))
		for k := 1; k <= len(items); k++ {
			cut := slices.Clone(items[:k])
			name := fmt.Sprintf("body %d, %d items", n, k)
			switch r.IntN(8) {
			case 0: // an earlier item changed
				j := r.IntN(k)
				cut[j] = bytes.Replace(cut[j], []byte(`"`), []byte(`"x`), 2)
				name += fmt.Sprintf(", item %d changed", j)
			case 1: // another session between
				sameAsReference(t, c, name+", another session", bodies[r.IntN(len(bodies))])
			case 2: // spaces between the items (which the reference drops)
				cut[k-1] = append(json.RawMessage(" \n"), cut[k-1]...)
				b := joinObject(set(slices.Clone(ms), "input", joinArray(cut)))
				want := c.withoutMemo().Rewrite(b)
				sameRewrite(t, name+", spaced", c.Rewrite(b), want)
				sameRewrite(t, name+", spaced (from the memo)", c.Rewrite(b), want)
				continue
			}
			before := c.histories.resumed
			requests++
			sameAsReference(t, c, name, joinObject(set(slices.Clone(ms), "input", joinArray(cut))))
			if c.histories.resumed < before+1 {
				t.Fatalf("%s: the rewrite from the memo did not resume", name)
			}
		}
	}
	// Most rewrites but the ones without the memo resume.
	if c.histories.resumed < requests*3/2 {
		t.Fatalf("%d rewrites of %d requests resumed", c.histories.resumed, requests)
	}
}

// Requests rewritten at once share the memos safely (run with -race).
func TestMemoConcurrent(t *testing.T) {
	c := testCarrier(t)
	ms, _ := splitObject(longSession(t, 64<<10))
	items, _ := splitArray(get(ms, "input"))
	var bodies [][]byte
	var want []Request
	for k := len(items) - 20; k <= len(items); k++ {
		b := joinObject(set(slices.Clone(ms), "input", joinArray(items[:k])))
		bodies, want = append(bodies, b), append(want, c.withoutMemo().Rewrite(b))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 200 {
				k := (n*7 + g) % len(bodies)
				got := c.Rewrite(bodies[k])
				if !bytes.Equal(got.Body, want[k].Body) || got.Decoded != want[k].Decoded {
					t.Errorf("goroutine %d, request %d: not the rewrite without the memos", g, k)
					return
				}
			}
		})
	}
	wg.Wait()
}
