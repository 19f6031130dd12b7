package read

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
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

// resultFields has Result's fields and tags but not its MarshalJSON.
type resultFields Result

// Every status carries exactly the keys of its variant in seed 003, in
// struct order: an ok result's conversion (plain text) and observation (a
// directory) are null rather than absent, and every line has clamped and
// sourceChars (false and null unless clamped); unsupported and error
// results have neither key. Otherwise the encoding is encoding/json's.
func TestResultMarshalJSON(t *testing.T) {
	root, dir := ws(t, map[string]string{"a.txt": "alpha\n" + strings.Repeat("x", 2500) + "\n", "d/b.txt": "b\n", "bin": "x\x00y", "nb.ipynb": notebookJSON})
	writeFile(t, filepath.Join(dir, "pic.png"), string(pngBytes(t)))
	variants := map[Status][]string{
		StatusOK:          {"tool", "status", "request", "file", "classification", "conversion", "view", "truncation", "continuation", "totals", "observation", "notes"},
		StatusMedia:       {"tool", "status", "request", "file", "classification", "conversion", "parts", "observation", "notes"},
		StatusUnsupported: {"tool", "status", "code", "request", "file", "classification", "notes"},
		StatusError:       {"tool", "status", "error", "request", "file", "notes"},
	}
	for _, c := range []struct {
		path       string
		status     Status
		conversion bool // not null
		observed   bool
	}{
		{"a.txt", StatusOK, false, true},
		{"d", StatusOK, true, false},
		{"nb.ipynb", StatusOK, true, true},
		{"pic.png", StatusMedia, true, true},
		{"bin", StatusUnsupported, false, false},
		{"missing.txt", StatusError, false, false},
	} {
		res, _ := read(t, root, Input{Path: c.path}, Options{})
		if res.Status != c.status {
			t.Fatalf("%s: status %s, want %s", c.path, res.Status, c.status)
		}
		j := JSON(res)
		if got := objectKeys(t, j); strings.Join(got, ",") != strings.Join(variants[c.status], ",") {
			t.Errorf("%s: keys %v, want seed 003's %v", c.path, got, variants[c.status])
		}
		var got, want map[string]any
		if err := json.Unmarshal(j, &got); err != nil {
			t.Fatal(err)
		}
		plain, _ := marshalNoEscape(resultFields(*res))
		json.Unmarshal(plain, &want)
		if c.status == StatusOK {
			for _, k := range []string{"conversion", "observation"} {
				if _, ok := want[k]; !ok {
					want[k] = nil
				}
			}
			for _, l := range want["view"].(map[string]any)["lines"].([]any) {
				l := l.(map[string]any)
				if _, ok := l["clamped"]; !ok {
					t.Fatalf("%s: the struct tags omit clamped", c.path)
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", c.path, j, plain)
		}
		if (got["conversion"] != nil) != c.conversion || (got["observation"] != nil) != c.observed {
			t.Errorf("%s: conversion %v, observation %v", c.path, got["conversion"], got["observation"])
		}
	}
	// An unclamped line and a clamped one.
	res, _ := read(t, root, Input{Path: "a.txt"}, Options{})
	lines := string(JSON(res))
	if !strings.Contains(lines, `"text":"alpha","clamped":false,"sourceChars":null}`) || !strings.Contains(lines, `"clamped":true,"sourceChars":2500}`) {
		t.Errorf("lines: %s", lines)
	}
	// HTML characters pass as they are here, and an escaping encoder
	// escapes them.
	res, _ = read(t, root, Input{Path: "<missing>&.txt"}, Options{})
	if j := JSON(res); !bytes.Contains(j, []byte(`"<missing>&.txt"`)) {
		t.Errorf("escaped: %s", j)
	}
	if j, _ := json.Marshal(res); !bytes.Contains(j, []byte(`"\u003cmissing\u003e\u0026.txt"`)) {
		t.Errorf("not escaped by json.Marshal: %s", j)
	}
}

// objectKeys lists the top-level keys of the JSON object j in order.
func objectKeys(t *testing.T, j []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(j))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", j)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
