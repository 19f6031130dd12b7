// Package lsp owns rowkit's side of the Language Server Protocol: a small
// client that starts a server through internal/proc, speaks JSON-RPC 2.0
// with the protocol's Content-Length framing, initializes the server,
// answers what it asks (configuration, progress tokens, registrations),
// tracks its work-done progress (the readiness signal of gopls) and tells
// how it ended; and the file watcher (inotify) whose changes a long-lived
// server must be told, since gopls, pyright and TypeScript 7 all leave file
// watching to their client.
//
// The protocol types are rowkit's own minimal structs, the fields it sends
// and reads in LSP 3.17's spelling. golang.org/x/tools keeps its protocol
// package internal to gopls (gopls/internal/protocol), so it cannot be
// imported; the public alternative, go.lsp.dev/protocol, has not been
// released since 2022 and brings a logging stack with it. A dozen structs
// are less to trust than either.
package lsp
