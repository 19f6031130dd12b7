// Package router owns rowkit's Codex router: a local proxy between the
// Codex CLI and the OpenAI Responses API that takes Codex's apply_patch and
// exec_command away from the model and offers hpatch (an HPATCH/2 script,
// constrained by a Lark grammar) and shell (a bash script run by rowkit)
// instead.
//
// A routed call reaches Codex as an ordinary exec_command call, the
// carrier, whose command runs `rowkit carrier` on the model's exact text;
// Codex runs it under its own sandbox and approval policy and records it in
// its own transcript. The carrier can be turned back into the model's call,
// so every request's history is rebuilt from the request alone: the router
// keeps no state between requests (only bounded memos of what it decoded
// and rewrote, pure functions of the bytes, which change nothing but its
// speed: memo.go), reads and writes no workspace file and runs nothing
// itself.
//
// The parts are pure functions over bytes (carrier.go: the carrier's
// encoding; request.go: the request rewrite; stream.go: the server-sent
// event rewrite) and a thin net/http server around them (server.go).
package router
