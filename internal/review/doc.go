// Package review owns the repository inspector behind rowkit review and
// the MCP inspect_repository tool: which paths changed in a git work tree,
// in four disjoint scopes (committed, staged, unstaged, untracked) and
// their union, and whether the validations the operator allows still pass.
//
// It owns the trust boundary of that job. git runs through package proc
// (no shell, an allowlisted environment, a timeout, its own process group)
// with every program the repository's own config names blanked (audit.go);
// caller refs are checked before they reach git; with a workspace root the
// work tree is located and confined before git runs (confine.go);
// validations run from argv only, one at a time, within time and output
// budgets, their output kept head and tail (validate.go). Inspect returns
// one typed Report, whose JSON is both the CLI's and the MCP
// structuredContent, or an *errs.Error with a stable UPPER_SNAKE code and
// its exit status. It never prints: the CLI adapter is internal/cmd.
package review
