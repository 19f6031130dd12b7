// Package symbol owns semantic navigation: definitions, references,
// implementations, type definitions, hover, one level of the call
// hierarchy and workspace symbol search, asked of the language servers
// users already run (gopls, pyright, TypeScript 7's own server) and
// answered in verified rows.
//
// An Engine serves one workspace root. It keeps one server per language
// alive between queries (started on the first query of its language),
// tells it every change under the root (an inotify watcher, since all
// three servers leave file watching to their client), and checks each
// answer before it shows it: the position asked about is a verified row
// and an exact token on it (checked before any server is involved); an
// answer is complete only once the server's index was ready (its own
// signal: gopls's work-done progress, pyright's initialized workspace,
// TypeScript's answer itself) and the server stayed alive; a file the
// answer shows that changed while the server answered fails with
// changed. Entries go through the token admission of every verified-row
// command (rows.Admitter); what the bound leaves out is counted and
// named.
//
// The servers' stderr and log messages go to Options.Log, never into a
// result. The broker (broker.go) runs one Engine per workspace in a
// process of its own for the shell commands, which would otherwise start
// a server per call.
package symbol
