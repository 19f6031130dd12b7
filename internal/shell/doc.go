// Package shell owns rowkit's shell: a script run by the system's bash,
// as a login shell in its own session (as Codex runs its model's
// commands), with rowkit's commands private to it through a directory of
// links first on its PATH (Links). It owns what a script may leave behind
// (nothing in its process group: stopped at its end, and by a guardian
// process when the shell itself is killed) and the bound on what a script
// prints (Output).
package shell
