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
		if err != nil || e.Added.Binary != e.Removed.Binary {
			return nil, fmt.Errorf("numstat record for %q: bad counts %q %q", p, add, del)
		}
		b = rest
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("unexpected bytes after the last record: %.40q", b)
	}
	return dedupe(entries), nil
}

func parseCount(b []byte) (LineCount, error) {
	if string(b) == "-" {
		return LineCount{Binary: true, Measured: true}, nil
	}
	if len(b) == 0 || b[0] < '0' || b[0] > '9' {
		return LineCount{}, errors.New("not a count")
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return LineCount{}, err
	}
	return LineCount{N: n, Measured: true}, nil
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

// parseUntracked reads git ls-files --others -z. A name ending in "/" is a
// directory git did not descend into (an embedded repository).
func parseUntracked(b []byte) ([]Entry, error) {
	var entries []Entry
	for len(b) > 0 {
		p, rest, err := cutNUL(b)
		if err != nil {
			return nil, fmt.Errorf("untracked path: %w", err)
		}
		e := Entry{Status: "untracked"}
		if n := len(p); n > 1 && p[n-1] == '/' {
			e.Kind = "directory"
			p = p[:n-1]
		}
		if len(p) == 0 || p[0] == '/' {
			return nil, fmt.Errorf("untracked path %q is not repository-relative", p)
		}
		e.Path = Path(p)
		entries = append(entries, e)
		b = rest
	}
	return dedupe(entries), nil
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
