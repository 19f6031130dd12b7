// Package review owns rowkit review, the repository inspector: which paths
// changed in a git work tree, in four disjoint scopes (committed, staged,
// unstaged, untracked) and their union, and whether the validations the
// operator allows still pass.
//
// It owns the trust boundary of that job. git runs without a shell, with an
// allowlisted environment, a timeout, its own process group and every
// program the repository's own config names blanked (audit.go); caller refs
// are checked before they reach git; validations run from argv only, one at
// a time, with a time budget that kills the whole process group, and their
// output is kept head and tail (validate.go, capture.go). One Report type
// is serialised once (JSON) and rendered for people (Markdown).
package review
