// Package grep owns hgrep's engine: ripgrep searches whose every result is
// a verified row. It holds the argv policy (the one table of which ripgrep
// options pass, are removed or are rejected) and the structured Query that
// goes through it, runs rg through internal/proc with --json and consumes
// its event stream, maps the byte offsets rg reports to the file's verified
// rows (with context counted in rows), and pushes each row once to a
// rows.Sink, stopping and reaping rg when the sink is full. Confinement to a
// workspace.Root is an option of the search (Config).
package grep
