package router

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/rowkit/rowkit/internal/jsonstr"
)

// The raw splitters agree with encoding/json on every valid document, and
// unquote decodes strings as it does.
func FuzzSplitObject(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"d\""}],"e\u0041":"x"} `, `{"a":{"b":[]},"a":2}`, `[]`, `{"a":"\\"}`, `{"a":tru}`, `{"a":"x\\\"y"}`} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"turn", "calls"} {
		b, err := readRecorded(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, ok := splitObject(b)
		var want map[string]json.RawMessage
		if err := json.Unmarshal(b, &want); err != nil || want == nil {
			return // not an object: the splitter may take it or not
		}
		if !ok {
			t.Fatalf("splitObject refused a valid object %q", b)
		}
		got := map[string]json.RawMessage{}
		for _, m := range ms {
			got[m.key] = m.raw
		}
		if len(got) != len(want) {
			t.Fatalf("%d keys, want %d", len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("%q: %q, want %q", k, got[k], v)
			}
		}
		// The members put back together are the same document.
		var again map[string]json.RawMessage
		if err := json.Unmarshal(joinObject(ms), &again); err != nil || len(again) != len(want) {
			t.Fatalf("joinObject: %v", err)
		}
	})
}

func FuzzSplitArray(f *testing.F) {
	for _, s := range []string{`[]`, `[1, "a", {"b":[2]}, [[]], null]`, ` [ "x\"" ] `, `[1,]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		es, ok := splitArray(b)
		var want []json.RawMessage
		if err := json.Unmarshal(b, &want); err != nil || want == nil {
			return
		}
		if !ok || len(es) != len(want) {
			t.Fatalf("splitArray(%q) = %d, %v; want %d", b, len(es), ok, len(want))
		}
		for i := range want {
			if !bytes.Equal(es[i], want[i]) {
				t.Fatalf("element %d: %q, want %q", i, es[i], want[i])
			}
		}
	})
}

func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`""`, `"a"`, `"\n\t\"\\\/\b\f\r"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`, `"\uDBFF\uDFFF"`, `"\x"`, "\"a\x01\"", "\"\xff\"", `"\u12"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, q []byte) {
		if len(q) > 0 && (skipSpace(q, 0) > 0 || bytes.TrimRight(q, " \t\r\n") == nil || len(bytes.TrimRight(q, " \t\r\n")) < len(q)) {
			return // unquote takes a raw value, without JSON's surrounding space
		}
		got, ok := unquote(q)
		var want string
		err := json.Unmarshal(q, &want)
		if (err == nil) != ok {
			t.Fatalf("unquote(%q) ok %v, encoding/json %v", q, ok, err)
		}
		if ok && got != want {
			t.Fatalf("unquote(%q) = %q, want %q", q, got, want)
		}
	})
}

// canonical holds only when writing the string again gives its bytes, and
// then always for a string without escapes (one with escapes is decoded
// and written again, which is also right).
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`"call_1"`, `"fco_01a2"`, `"a\"b"`, `"\u00e9"`, "\"é\"", "\"\u2028\"", "\"\x01\"", `""`, `"`, `x`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		s, ok := unquoteBytes(v)
		want := ok && bytes.Equal(jsonstr.AppendBytes(nil, s), v)
		if got := canonical(v); got && !want || !got && want && !bytes.Contains(v, []byte(`\`)) {
			t.Fatalf("canonical(%q) = %v, and writing it again gives it: %v", v, got, want)
		}
	})
}
