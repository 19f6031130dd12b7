package agenttest

// What each client hands its model whole, at most, as TestCodex,
// TestCodexFallback and TestClaude measure it with the clients of
// package-lock.json (Codex CLI 0.169.0, Claude Code 2.1.328). Above these,
// Codex cuts the middle out and Claude Code shows a saved file's preview
// (or, for a failed command, cuts the middle). rowkit bounds its outputs
// below them (internal/mcpserver, internal/cmd); their tests compare with
// these figures, so a client upgrade that moves one fails here first.
const (
	// CodexResultBytes is an MCP result's text for a model Codex has
	// metadata for (gpt-5.5-codex): 1.2 times its command output policy
	// of 10,000 tokens (4 bytes each), less 36.
	CodexResultBytes = 47_964
	// CodexFallbackResultBytes is the same for any other model
	// (gpt-4.1): 1.2 times the fallback policy of 10,000 bytes, less 36.
	CodexFallbackResultBytes = 11_964
	// CodexExecBytes is exec_command's output (stdout and stderr as they
	// came), whatever the exit status, for a model with metadata.
	CodexExecBytes = 40_000
	// CodexFallbackExecBytes is exec_command's output for any other model.
	// A call that sets max_output_tokens M (rowkit router's carriers)
	// gets 4 x M bytes when that is less, never more than these two.
	CodexFallbackExecBytes = 10_000
	// CodexReadBytes is the chunk in which Codex reads a command's stdout
	// and stderr, each from its own pipe, handing the model the chunks in
	// the order it got them: a line on stderr written at once after the
	// rows can fall between two chunks of stdout, inside a line (89 of
	// 200 outputs of 38,400 bytes then a stderr line, in
	// TestCodexShellBound). An output of at most this size, written at
	// once, arrives in one chunk; rowkit's diagnostic waits until Codex
	// has read the rows (cli.Drained).
	CodexReadBytes = 8_192
	// ClaudeResultChars is an MCP result's text, in characters.
	ClaudeResultChars = 50_000
	// ClaudeDeclaredChars is what a tool that declares
	// _meta["anthropic/maxResultSizeChars"] of 200,000 gets (measured at
	// that value).
	ClaudeDeclaredChars = 200_000
	// ClaudeBashBytes is a Bash command's output when it exits 0.
	ClaudeBashBytes = 30_000
	// ClaudeBashFailChars is a Bash command's output, in characters, when
	// it exits with another status.
	ClaudeBashFailChars = 11_012
)
