package main

import (
	"fmt"
	"sort"
	"strings"
)

// table is the Markdown of the figures: one row per task and
// configuration, then per task and client the ratios rowkit/plain, then
// the totals.
func table(figs []*Figures) string {
	by := map[string]map[Config]*Figures{}
	var tasks []string
	for _, f := range figs {
		if by[f.Task] == nil {
			by[f.Task] = map[Config]*Figures{}
			tasks = append(tasks, f.Task)
		}
		by[f.Task][Config(f.Config)] = f
	}
	sort.Strings(tasks)
	var b strings.Builder
	b.WriteString("| task | configuration | turns | tool-output tokens read | tokens written | failed calls | tool definitions per request | all requests sent |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	total := map[Config]*Figures{}
	for _, t := range tasks {
		for _, c := range Configs {
			f := by[t][c]
			if f == nil {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %d | %s | %s |\n", t, c, f.Turns, thousands(f.Read), thousands(f.Written), f.Failed, thousands(f.Tools), thousands(f.Sent))
			if total[c] == nil {
				total[c] = &Figures{}
			}
			total[c].Turns += f.Turns
			total[c].Read += f.Read
			total[c].Written += f.Written
			total[c].Failed += f.Failed
			total[c].Sent += f.Sent
		}
	}
	for _, c := range Configs {
		if f := total[c]; f != nil {
			fmt.Fprintf(&b, "| all | %s | %d | %s | %s | %d | | %s |\n", c, f.Turns, thousands(f.Read), thousands(f.Written), f.Failed, thousands(f.Sent))
		}
	}
	b.WriteString("\nrowkit / plain, per client (turns as rowkit/plain counts):\n\n")
	b.WriteString("| task | client | turns | tool-output tokens read | tokens written | read + written | all requests sent |\n")
	b.WriteString("| --- | --- | --- | ---: | ---: | ---: | ---: |\n")
	pairs := []struct {
		name        string
		rowkit, own Config
	}{{"Codex: router / alone", CodexRouter, CodexPlain}, {"Claude Code: mcp / alone", ClaudeMCP, ClaudePlain}}
	for _, t := range append(tasks, "all") {
		for _, p := range pairs {
			var r, o *Figures
			if t == "all" {
				r, o = total[p.rowkit], total[p.own]
			} else {
				r, o = by[t][p.rowkit], by[t][p.own]
			}
			if r == nil || o == nil {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %d/%d | %s | %s | %s | %s |\n", t, p.name, r.Turns, o.Turns,
				ratio(r.Read, o.Read), ratio(r.Written, o.Written), ratio(r.Read+r.Written, o.Read+o.Written), ratio(r.Sent, o.Sent))
		}
	}
	b.WriteString("\nWhere the reads went: tool-output tokens by kind of step, all tasks (calls in parentheses):\n\n")
	byKind(&b, tasks, by, func(c Call) int { return c.Read }, true)
	b.WriteString("\nOf those, the tokens of the prefixes that number or name the lines (rowkit's `LINE:HASH` and a row's `\"PATH\":`, an outline's `LINE:HASH..LINE:HASH`; `Read`'s `LINE` and tab; ripgrep's `PATH:LINE:` in a search or an outline):\n\n")
	byKind(&b, tasks, by, func(c Call) int { return c.Lines }, false)
	return b.String()
}

// byKind writes the table of v summed per configuration and kind of step,
// with the number of calls when calls is set.
func byKind(b *strings.Builder, tasks []string, by map[string]map[Config]*Figures, v func(Call) int, calls bool) {
	kinds := []string{"load", "search", "read", "outline", "edit", "run"}
	b.WriteString("| configuration |")
	for _, k := range kinds {
		fmt.Fprintf(b, " %s |", k)
	}
	b.WriteString(" all |\n| --- |" + strings.Repeat(" ---: |", len(kinds)+1) + "\n")
	for _, c := range Configs {
		sum, n := map[string]int{}, map[string]int{}
		all, seen := 0, false
		for _, t := range tasks {
			f := by[t][c]
			if f == nil {
				continue
			}
			seen = true
			for _, call := range f.Calls {
				sum[call.Kind] += v(call)
				n[call.Kind]++
				all += v(call)
			}
		}
		if !seen {
			continue
		}
		fmt.Fprintf(b, "| %s |", c)
		for _, k := range kinds {
			switch {
			case n[k] == 0:
				b.WriteString(" |")
			case calls:
				fmt.Fprintf(b, " %s (%d) |", thousands(sum[k]), n[k])
			default:
				fmt.Fprintf(b, " %s |", thousands(sum[k]))
			}
		}
		fmt.Fprintf(b, " %s |\n", thousands(all))
	}
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
