package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Plan is what the played model decided, in abstract steps that every
// configuration renders into its own tool calls: one Turn is one model
// response (a configuration that cannot do a turn's steps in one
// response splits it, see split).
type Plan struct {
	Turns []PlanTurn `json:"turns"`
}

// PlanTurn is one response of the model: Say is its text, Steps its
// calls. A turn without steps is the final answer.
type PlanTurn struct {
	Say   string `json:"say,omitempty"`
	Steps []Step `json:"steps,omitempty"`
}

// Step is one abstract call; exactly one of Search, Read, Outline, Edit
// and Run is set.
type Step struct {
	// Search is a regular expression (ripgrep's syntax) searched in Path
	// ("" the tree), with Context lines either side and only files
	// matching Glob.
	Search  string `json:"search,omitempty"`
	Path    string `json:"path,omitempty"`
	Context int    `json:"context,omitempty"`
	Glob    string `json:"glob,omitempty"`
	// Read is a file read from line From to line To (0: its first, its
	// last).
	Read string `json:"read,omitempty"`
	From int    `json:"from,omitempty"`
	To   int    `json:"to,omitempty"`
	// Outline is a file whose definitions are listed.
	Outline string `json:"outline,omitempty"`
	// Edit is a file in which the whole lines Old (one occurrence) become
	// New.
	Edit string `json:"edit,omitempty"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
	// Run is a shell command run in the tree.
	Run string `json:"run,omitempty"`
}

// Kind names the step's kind, as it stands in a call's id.
func (s Step) Kind() string {
	switch {
	case s.Search != "":
		return "search"
	case s.Read != "":
		return "read"
	case s.Outline != "":
		return "outline"
	case s.Edit != "":
		return "edit"
	case s.Run != "":
		return "run"
	}
	return ""
}

func (s Step) check() error {
	n := 0
	for _, v := range []string{s.Search, s.Read, s.Outline, s.Edit, s.Run} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("a step must be exactly one of search, read, outline, edit, run: %+v", s)
	}
	if s.Read != "" && s.To != 0 && s.To < s.From {
		return fmt.Errorf("read %s: to %d before from %d", s.Read, s.To, s.From)
	}
	if s.Edit != "" && s.Old == "" {
		return fmt.Errorf("edit %s: no old lines", s.Edit)
	}
	return nil
}

// LoadPlan reads a plan file; a missing file is an empty plan.
func LoadPlan(path string) (Plan, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return Plan{}, nil
	}
	if err != nil {
		return Plan{}, err
	}
	var p Plan
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Plan{}, fmt.Errorf("%s: %w", path, err)
	}
	for i, t := range p.Turns {
		for _, s := range t.Steps {
			if err := s.check(); err != nil {
				return Plan{}, fmt.Errorf("%s: turn %d: %w", path, i+1, err)
			}
		}
		if len(t.Steps) == 0 && i != len(p.Turns)-1 {
			return Plan{}, fmt.Errorf("%s: turn %d has no steps but is not the last", path, i+1)
		}
	}
	return p, nil
}

// lines splits text into lines without their terminators; a final
// terminator adds no line.
func lines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// span finds the one place where old's lines stand in content, as
// 1-based first and last line numbers.
func span(content, old string) (int, int, error) {
	file, want := lines(content), lines(old)
	if len(want) == 0 {
		return 0, 0, fmt.Errorf("no old lines")
	}
	found := -1
	for i := 0; i+len(want) <= len(file); i++ {
		match := true
		for j, w := range want {
			if file[i+j] != w {
				match = false
				break
			}
		}
		if match {
			if found >= 0 {
				return 0, 0, fmt.Errorf("the old lines stand at lines %d and %d: not one place", found+1, i+1)
			}
			found = i
		}
	}
	if found < 0 {
		return 0, 0, fmt.Errorf("the old lines are not in the file (%q...)", want[0])
	}
	return found + 1, found + len(want), nil
}
