// Package grep owns hgrep: ripgrep searches whose every result is a
// verified row. It holds the argv policy (the one table of which ripgrep
// options pass, are removed or are rejected), runs rg with --json and
// consumes its event stream, re-reads each file with results to turn
// ripgrep's LF-counted lines into verified rows, and admits the rows under
// the shared token rule, stopping and reaping rg at the first row left out.
package grep
