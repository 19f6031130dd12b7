package rows

import (
	"strings"
	"testing"
)

func TestHashKnownValues(t *testing.T) {
	for text, want := range map[string]string{
		"alpha":        "8ed3",
		"beta":         "f44e",
		"gamma":        "be9d",
		"":             "e3b0",
		"}":            "d10b",
		"needle":       "0988",
		"after":        "f395",
		"    return 1": "53c1",
	} {
		if got := Hash([]byte(text)); got != want {
			t.Errorf("Hash(%q) = %s, want %s", text, got, want)
		}
	}
}

func TestAppendRow(t *testing.T) {
	tests := []struct {
		line int
		text string
		want string
	}{
		{1, "alpha", "1:8ed3 alpha\n"},
		{12, "", "12:e3b0 \n"},
		{7, "    return 1", "7:53c1     return 1\n"},
		{1000000, "}", "1000000:d10b }\n"},
	}
	for _, tt := range tests {
		if got := string(AppendRow(nil, tt.line, []byte(tt.text))); got != tt.want {
			t.Errorf("AppendRow(%d, %q) = %q, want %q", tt.line, tt.text, got, tt.want)
		}
	}
}

var refTests = []struct {
	in      string
	want    Span
	wantErr string
}{
	{"1:8ed3", Span{Ref{1, "8ed3"}, Ref{1, "8ed3"}}, ""},
	{"120:e3b0", Span{Ref{120, "e3b0"}, Ref{120, "e3b0"}}, ""},
	{"2:f44e..3:be9d", Span{Ref{2, "f44e"}, Ref{3, "be9d"}}, ""},
	{"4:d10b..4:d10b", Span{Ref{4, "d10b"}, Ref{4, "d10b"}}, ""},
	{"", Span{}, "want LINE:HASH"},
	{"12", Span{}, "want LINE:HASH"},
	{":8ed3", Span{}, "LINE is missing"},
	{"0:8ed3", Span{}, "without leading zeros"},
	{"01:8ed3", Span{}, "without leading zeros"},
	{"-1:8ed3", Span{}, "decimal number"},
	{"1 :8ed3", Span{}, "decimal number"},
	{"1:8ED3", Span{}, "four lowercase hex"},
	{"1:8ed", Span{}, "four lowercase hex"},
	{"1:8ed3a", Span{}, "four lowercase hex"},
	{"1:8ed3 ", Span{}, "four lowercase hex"},
	{"1:zzzz", Span{}, "four lowercase hex"},
	{"99999999999999999999:8ed3", Span{}, "too large"},
	{"3:be9d..2:f44e", Span{}, "ends before it starts"},
	{"2:f44e..2:be9d", Span{}, "different hashes"},
	{"2:f44e ..3:be9d", Span{}, "four lowercase hex"},
	{"2:f44e..", Span{}, "want LINE:HASH"},
	{"2:f44e...3:be9d", Span{}, "decimal number"},
}

func TestParseSpan(t *testing.T) {
	for _, tt := range refTests {
		got, err := ParseSpan(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSpan(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSpan(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if got.String() != tt.in && got.Start != got.End {
			t.Errorf("String() = %q, want %q", got.String(), tt.in)
		}
	}
}

func FuzzParseSpan(f *testing.F) {
	for _, tt := range refTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpan(s)
		if err != nil {
			if !strings.Contains(err.Error(), "malformed row reference") {
				t.Fatalf("unexpected error form: %v", err)
			}
			return
		}
		if sp.Start.Line < 1 || sp.End.Line < sp.Start.Line || len(sp.Start.Hash) != 4 || len(sp.End.Hash) != 4 {
			t.Fatalf("accepted invalid span %q: %+v", s, sp)
		}
		// Accepted input is canonical: it prints back exactly.
		again := sp.Start.String() + ".." + sp.End.String()
		if s != again && s != sp.Start.String() {
			t.Fatalf("%q printed back as %q", s, sp.String())
		}
		if r2, err := ParseSpan(sp.String()); err != nil || r2 != sp {
			t.Fatalf("round trip of %q: %v %v", s, r2, err)
		}
	})
}
