package read

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// viewFields has View's fields and tags but not its MarshalJSON: the
// reflective encoding the hand-written one must equal.
type viewFields View

func TestViewMarshalJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", "plain", "tab\there", `quote " and \ back`, "<a href='x'>&amp;</a>", "ctl \x01\x1f\x7f", "bad \xff utf8", "\u2028\u2029 sep", "é ü 日本"}
	for n := 0; n < 500; n++ {
		v := View{StartLine: r.IntN(100), EndLine: r.IntN(100), Bytes: r.IntN(1000), Partial: r.IntN(2) == 0}
		if n%7 != 0 {
			v.Lines = []Line{}
		}
		for i := r.IntN(5); i > 0; i-- {
			l := Line{Number: r.IntN(5000), Text: strings.Repeat(texts[r.IntN(len(texts))], r.IntN(3))}
			if r.IntN(3) > 0 {
				l.Hash = "8ed3"
			}
			if r.IntN(4) == 0 {
				c := r.IntN(9000)
				l.Clamped, l.SourceChars = true, &c
			}
			v.Lines = append(v.Lines, l)
		}
		for _, enc := range []func(any) ([]byte, error){marshalNoEscape, json.Marshal} {
			got, err := enc(v)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := enc(viewFields(v))
			if !bytes.Equal(got, want) {
				t.Fatalf("view %+v:\n got %s\nwant %s", v, got, want)
			}
		}
	}
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}
