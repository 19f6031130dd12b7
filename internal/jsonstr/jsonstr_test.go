package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

var samples = []string{"", "plain", "a b.txt", "quote\" back\\ slash", "ctl\x00\x01\x1f\t\n\r\x7f", "naïve 値 😀", "\u2028\u2029", "bad\xff\xfeutf8", "<&>", "\xed\xa0\x80", "trunc\xe6\x97"}

// encodingJSON is what encoding/json writes for s with HTML escaping off.
func encodingJSON(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	for _, s := range samples {
		if got, want := Append(nil, s), encodingJSON(s); !bytes.Equal(got, want) {
			t.Errorf("Append(%q) = %s, want %s", s, got, want)
		}
		if got, want := AppendBytes(nil, []byte(s)), encodingJSON(s); !bytes.Equal(got, want) {
			t.Errorf("AppendBytes(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Append([]byte("x"), s), append([]byte("x"), encodingJSON(s)...); !bytes.Equal(got, want) {
			t.Fatalf("Append(%q) = %s, want %s", s, got, want)
		}
		if got, want := AppendBytes([]byte("x"), []byte(s)), append([]byte("x"), encodingJSON(s)...); !bytes.Equal(got, want) {
			t.Fatalf("AppendBytes(%q) = %s, want %s", s, got, want)
		}
	})
}
