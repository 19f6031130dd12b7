package review

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// The parsers below read git's -z formats, where a path is raw bytes ended
// by NUL: no quoting to undo, so every name survives byte for byte.

var errTruncated = errors.New("record cut short")

// cutNUL returns the bytes before the next NUL and the rest after it.
func cutNUL(b []byte) (field, rest []byte, err error) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, nil, errTruncated
	}
	return b[:i], b[i+1:], nil
}

var statusNames = map[byte]string{
	'A': "added", 'C': "copied", 'D': "deleted", 'M': "modified",
	'R': "renamed", 'T': "typechange", 'U': "unmerged",
}

// parseDiff reads the output of git diff --raw --numstat -z: every raw
// record, then one numstat record for each in the same order. A path can
// appear twice (an unmerged path is also diffed against stage 2); the first
// record wins, which keeps "unmerged".
func parseDiff(b []byte) ([]Entry, error) {
	var entries []Entry
	for len(b) > 0 && b[0] == ':' {
		head, rest, err := cutNUL(b)
		if err != nil {
			return nil, fmt.Errorf("raw record: %w", err)
		}
		// :MODE MODE OID OID STATUS[SCORE]
		f := bytes.Fields(head[1:])
		if len(f) != 5 || len(f[4]) == 0 {
			return nil, fmt.Errorf("raw record %q: want 5 fields", head)
		}
		st := f[4]
		name, ok := statusNames[st[0]]
		if !ok {
			return nil, fmt.Errorf("raw record: unknown status %q", st)
		}
		e := Entry{Status: name}
		if len(st) > 1 {
			n, err := strconv.Atoi(string(st[1:]))
			if err != nil || n < 0 || n > 100 {
				return nil, fmt.Errorf("raw record: bad score %q", st)
			}
			e.Score = n
		}
		var p []byte
		if p, rest, err = cutNUL(rest); err != nil || len(p) == 0 {
			return nil, fmt.Errorf("raw record %q: missing path", head)
		}
		if st[0] == 'R' || st[0] == 'C' {
			e.OrigPath = Path(p)
			if p, rest, err = cutNUL(rest); err != nil || len(p) == 0 {
				return nil, fmt.Errorf("raw record %q: missing destination path", head)
			}
		} else if len(st) > 1 {
			return nil, fmt.Errorf("raw record: score on status %q", st)
		}
		e.Path = Path(p)
		entries = append(entries, e)
		b = rest
	}
	for i := range entries {
		if len(b) == 0 {
			return nil, fmt.Errorf("numstat: %d records for %d paths", i, len(entries))
		}
		add, rest, ok := bytes.Cut(b, []byte{'\t'})
		if !ok {
			return nil, fmt.Errorf("numstat record: %w", errTruncated)
		}
		del, rest, ok := bytes.Cut(rest, []byte{'\t'})
		if !ok {
			return nil, fmt.Errorf("numstat record: %w", errTruncated)
		}
		var p, orig []byte
		var err error
		if len(rest) > 0 && rest[0] == 0 { // rename or copy: \0OLD\0NEW\0
			if orig, rest, err = cutNUL(rest[1:]); err == nil {
				p, rest, err = cutNUL(rest)
			}
		} else {
			p, rest, err = cutNUL(rest)
		}
		if err != nil {
			return nil, fmt.Errorf("numstat record: %w", err)
		}
		e := &entries[i]
		if string(p) != string(e.Path) || orig != nil && string(orig) != string(e.OrigPath) {
			return nil, fmt.Errorf("numstat record for %q does not match raw record for %q", p, e.Path)
		}
		if e.Added, err = parseCount(add); err == nil {
			e.Removed, err = parseCount(del)
		}
		if err != nil || (e.Added == nil) != (e.Removed == nil) {
			return nil, fmt.Errorf("numstat record for %q: bad counts %q %q", p, add, del)
		}
		e.PathBase64, e.OrigPathBase64 = base64Of(e.Path), base64Of(e.OrigPath)
		b = rest
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("unexpected bytes after the last record: %.40q", b)
	}
	return dedupe(entries), nil
}

// parseCount reads one numstat count: nil for a binary file ("-").
func parseCount(b []byte) (*int, error) {
	if string(b) == "-" {
		return nil, nil
	}
	if len(b) == 0 || b[0] < '0' || b[0] > '9' {
		return nil, errors.New("not a count")
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return nil, err
	}
	return &n, nil
}

func dedupe(entries []Entry) []Entry {
	seen := make(map[Path]bool, len(entries))
	out := entries[:0]
	for _, e := range entries {
		if !seen[e.Path] {
			seen[e.Path] = true
			out = append(out, e)
		}
	}
	return out
}

// parseIndexList reads git ls-files -z -t --stage [--others]: "? PATH" for
// an untracked path (a name ending in "/" is a directory git did not
// descend into, an embedded repository), "TAG MODE OID STAGE\tPATH" for an
// index entry. It returns the untracked paths and whether the index holds
// a gitlink (mode 160000, a submodule's commit), with or without a
// .gitmodules entry for it. Every record carries its tag, so no name can
// pass for another kind of record.
func parseIndexList(b []byte) (untracked []Untracked, gitlink bool, err error) {
	seen := map[string]bool{}
	for len(b) > 0 {
		rec, rest, err := cutNUL(b)
		if err != nil {
			return nil, false, fmt.Errorf("ls-files record: %w", err)
		}
		b = rest
		if len(rec) < 3 || rec[1] != ' ' {
			return nil, false, fmt.Errorf("ls-files record %.40q: no tag", rec)
		}
		tag, body := rec[0], rec[2:]
		if tag != '?' {
			meta, _, ok := bytes.Cut(body, []byte{'\t'})
			mode, _, _ := bytes.Cut(meta, []byte{' '})
			if !ok || len(mode) != 6 {
				return nil, false, fmt.Errorf("ls-files record %.40q: want MODE OID STAGE\\tPATH", rec)
			}
			if string(mode) == "160000" {
				gitlink = true
			}
			continue
		}
		u := Untracked{Path: Path(body), Status: "untracked"}
		if n := len(body); n > 1 && body[n-1] == '/' {
			u.Kind = "directory"
		}
		if len(body) == 0 || body[0] == '/' || string(body) == "/" {
			return nil, false, fmt.Errorf("untracked path %q is not repository-relative", body)
		}
		if seen[string(body)] {
			continue
		}
		seen[string(body)] = true
		u.PathBase64 = base64Of(u.Path)
		untracked = append(untracked, u)
	}
	return untracked, gitlink, nil
}

// configEntry is one line of git config --list -z --show-scope.
type configEntry struct {
	Scope, Key, Value string
	HasValue          bool // "[x] key" without "=" has none
}

// parseConfigList reads git config --list -z --show-scope: records
// SCOPE\0KEY\nVALUE\0, or SCOPE\0KEY\0 for a key without a value.
func parseConfigList(b []byte) ([]configEntry, error) {
	var out []configEntry
	for len(b) > 0 {
		scope, rest, err := cutNUL(b)
		if err != nil {
			return nil, fmt.Errorf("config scope: %w", err)
		}
		kv, rest, err := cutNUL(rest)
		if err != nil {
			return nil, fmt.Errorf("config entry: %w", err)
		}
		if len(scope) == 0 {
			return nil, errors.New("config entry: empty scope")
		}
		k, v, has := bytes.Cut(kv, []byte{'\n'})
		if len(k) == 0 {
			return nil, errors.New("config entry: empty key")
		}
		out = append(out, configEntry{Scope: string(scope), Key: string(k), Value: string(v), HasValue: has})
		b = rest
	}
	return out, nil
}
