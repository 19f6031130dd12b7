package router

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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
