package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// longSession is the recorded request with its carried call and output
// repeated to about size bytes: a long session.
func longSession(tb testing.TB, size int) []byte {
	body := recordedTB(tb, "calls")
	ms, _ := splitObject(body)
	items, _ := splitArray(get(ms, "input"))
	var call, out json.RawMessage
	for _, it := range items {
		if bytes.Contains(it, []byte(`"call_rec_1"`)) && bytes.Contains(it, []byte(`"function_call"`)) {
			call = it
		}
		if bytes.Contains(it, []byte(`"call_rec_1"`)) && bytes.Contains(it, []byte(`"function_call_output"`)) {
			out = it
		}
	}
	n := len(body)
	for i := 0; n < size; i++ {
		id := []byte(fmt.Sprintf("call_long_%d", i))
		c := bytes.ReplaceAll(call, []byte("call_rec_1"), id)
		o := bytes.ReplaceAll(out, []byte("call_rec_1"), id)
		items = append(items, c, o)
		n += len(c) + len(o) + 2
	}
	return joinObject(set(ms, "input", joinArray(items)))
}

func recordedTB(tb testing.TB, name string) []byte {
	if t, ok := tb.(*testing.T); ok {
		return recorded(t, name)
	}
	b, err := readRecorded(name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func BenchmarkRewrite(b *testing.B) {
	c := testCarrier(b)
	for _, tc := range []struct {
		name string
		body []byte
	}{{"recorded", recordedTB(b, "calls")}, {"long", longSession(b, 1<<20)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.body)))
			for b.Loop() {
				c.Rewrite(tc.body)
			}
		})
	}
}

func BenchmarkDigest(b *testing.B) {
	body := longSession(b, 1<<20)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		digest(body)
	}
}
