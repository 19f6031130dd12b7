package read

import (
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

var rangeTests = []struct {
	in      string
	want    Range
	wantErr string
}{
	{"1:1", Range{1, 1}, ""},
	{"2:10", Range{2, 10}, ""},
	{"007:8", Range{7, 8}, ""},
	{"", Range{}, "must be START:END"},
	{"5", Range{}, "must be START:END"},
	{":5", Range{}, "START is missing"},
	{"5:", Range{5, All.End}, ""},
	{"1:", Range{1, All.End}, ""},
	{"0:", Range{}, "at least 1"},
	{"0:5", Range{}, "at least 1"},
	{"-1:5", Range{}, "positive base-10"},
	{"+1:5", Range{}, "positive base-10"},
	{"1:5:6", Range{}, "positive base-10"},
	{"0x1:5", Range{}, "positive base-10"},
	{" 1:5", Range{}, "positive base-10"},
	{"6:5", Range{}, "reversed"},
	{"1:99999999999999999999", Range{1, All.End}, ""},
	{"3:999999999999999999999999999999", Range{3, All.End}, ""},
	{"99999999999999999999:99999999999999999999", Range{}, "START is too large"},
}

func TestParseRange(t *testing.T) {
	for _, tt := range rangeTests {
		got, err := ParseRange(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errs.Code(err) != CodeOf(CodeInvalidInput) {
				t.Errorf("ParseRange(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRange(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseRange(f *testing.F) {
	for _, tt := range rangeTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s)
		if err != nil {
			if errs.Code(err) != CodeOf(CodeInvalidInput) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v", err)
			}
			return
		}
		if r.Start < 1 || r.End < r.Start {
			t.Fatalf("accepted %q as %+v", s, r)
		}
	})
}
