package review

import (
	"fmt"
	"sort"
	"strings"
)

// The repository's own configuration (local and worktree scope, including
// whatever include.path pulls in, which git attributes to the including
// scope) arrives with the directory and may name programs that git runs:
// a clean filter chosen by a tracked .gitattributes runs during git diff,
// a textconv during numstat, and so on. The audit lists the effective
// configuration (reading it executes nothing), finds every key of that
// kind and blanks it with -c KEY= for the whole inspection. System and
// global scope belong to the operator and stay as they are (git-lfs sets
// filter.lfs.* globally).

// execVars are variables that name a program, by section; "*" matches any
// subsection or none.
var execVars = map[string][]string{
	"core":        {"fsmonitor", "hookspath", "sshcommand", "pager", "editor", "askpass", "gitproxy", "alternaterefscommand"},
	"filter":      {"clean", "smudge", "process"},
	"diff":        {"textconv", "command", "external"},
	"merge":       {"driver"},
	"credential":  {"helper"},
	"sequence":    {"editor"},
	"gpg":         {"program", "defaultkeycommand"},
	"interactive": {"difffilter"},
	"web":         {"browser"},
	"remote":      {"uploadpack", "receivepack"},
	"uploadpack":  {"packobjectshook"},
	"submodule":   {"update"},
	"pager":       {"*"},
	"difftool":    {"cmd"},
	"mergetool":   {"cmd"},
	"man":         {"cmd", "path"},
	"browser":     {"cmd", "path"},
}

// isExecKey reports whether a config key (as git config --list prints it:
// section and variable lower-cased, subsection verbatim) names a program.
// Any variable ending in command, cmd or program counts too, so that a key
// this list does not know yet errs on the side of being blanked.
func isExecKey(key string) bool {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return false
	}
	section, variable := strings.ToLower(key[:first]), strings.ToLower(key[last+1:])
	for _, v := range execVars[section] {
		if v == "*" || v == variable {
			return true
		}
	}
	return strings.HasSuffix(variable, "command") || strings.HasSuffix(variable, "cmd") || strings.HasSuffix(variable, "program")
}

// blankable reports whether -c KEY= gives git back exactly KEY: git splits
// -c at the first '=', and rowkit refuses anything it cannot be sure of.
func blankable(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c >= 0x7f || c == '=' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// audit decides the -c pairs of the inspection from the listed config, or
// fails when a key cannot be blanked safely: skipping it would leave it
// live while the report claimed otherwise.
func audit(g *git, entries []configEntry, allow bool, r *repo) error {
	seen := map[string]bool{}
	var keys []string
	for _, e := range entries {
		if e.Scope != "local" && e.Scope != "worktree" || !isExecKey(e.Key) || seen[e.Key] {
			continue
		}
		seen[e.Key] = true
		keys = append(keys, e.Key)
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	if allow {
		r.warn("W_REPO_EXEC_CONFIG_ALLOWED", "--allow-repo-exec-config: git may run programs named by the repository's own config: "+strings.Join(keys, ", "), "use it only on repositories you trust")
		return nil
	}
	filters := map[string]bool{}
	for _, k := range keys {
		if !blankable(k) {
			return errorf(CodeRepoExecConfig, fmt.Sprintf("the repository's git config sets %q, which names a program and cannot be blanked safely", k),
				"remove the key from the repository's config, or allow the repository's exec config if you trust the repository")
		}
		g.blanked = append(g.blanked, "-c", k+"=")
		if strings.HasPrefix(strings.ToLower(k), "filter.") {
			filters[k[:strings.LastIndexByte(k, '.')]] = true
		}
	}
	// A required filter without its command makes git fail; it is
	// declared optional so that the file is read as it is.
	var fs []string
	for f := range filters {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	for _, f := range fs {
		g.blanked = append(g.blanked, "-c", f+".required=false")
	}
	r.warn("W_REPO_EXEC_CONFIG_BLANKED", "blanked repository git config that names programs, so git runs none of them: "+strings.Join(keys, ", "),
		"a file under a blanked filter may show as modified; --allow-repo-exec-config restores them")
	return nil
}
