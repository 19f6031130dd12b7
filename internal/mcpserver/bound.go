package mcpserver

import (
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/agent"
)

// An agent client hands its model a tool result whole only up to a bound
// of its own; above it, Codex cuts the middle out and Claude Code shows a
// saved file's 2 KB preview, while rowkit's continuation note at the end
// survives and claims the view was whole. So every result is bounded by
// the token rule and by the bound of the client the call comes from, with
// a margin, measured in bytes of what the client shows: the text content,
// or the JSON of structuredContent when the result has it (which is what
// both clients show then). A byte is at most one character, so a byte
// bound also holds a bound counted in characters (Claude Code's).
//
// The figures are the clients' own, measured with the real clients:
// internal/agenttest's TestCodex and TestClaude pin them, so an upgrade
// that moves them fails there first.
const (
	// codexResultBytes: Codex 0.169 passes 47,964 bytes of an MCP result
	// whole (1.2 times its 40,000-byte command output policy, less its
	// header) when it has metadata for the model (agent.CodexKnows).
	codexResultBytes = 46_000
	// codexFallbackBytes: 11,964 bytes for any other model, whose
	// fallback policy keeps 10,000 bytes of a command's output.
	codexFallbackBytes = 11_400
	// claudeResultBytes: Claude Code passes 50,000 characters whole.
	claudeResultBytes = 48_000
	// ClaudeMaxResultChars is what every tool declares as
	// _meta["anthropic/maxResultSizeChars"]: Claude Code then passes a
	// result whole up to that many characters instead of 50,000 (and
	// exempts it from its MAX_MCP_OUTPUT_TOKENS check). rowkit's results
	// are bounded by the token rule anyway (about 45 to 60 KB of code), so
	// the declaration lets Claude Code's model see a whole 15,000-token
	// view instead of one cut at 48,000 bytes.
	ClaudeMaxResultChars = 100_000
	// claudeDeclaredBytes is the bound under that declaration.
	claudeDeclaredBytes = 96_000
	// defaultResultBytes is the bound for a client that says nothing
	// rowkit knows: within both clients' bounds.
	defaultResultBytes = 46_000
)

// claudeDeclared is the first Claude Code version known to honour the
// declared bound (the one measured); an older one gets claudeResultBytes.
var claudeDeclared = [3]int{2, 1, 328}

// Client names as they introduce themselves at initialize.
const (
	codexName  = "codex-mcp-client"
	claudeName = "claude-code"
)

// NoOutputBound is Options.OutputBytes for no byte bound: the token rule
// alone (rowkit mcp --max-output 0).
const NoOutputBound = -1

// peer is who a call's result is for, as far as the call tells: the
// client's name and version from initialize, and the model Codex says it
// serves in each call's _meta (x-codex-turn-metadata).
type peer struct {
	name, version, model string
}

func peerOf(req *mcp.CallToolRequest) peer {
	var p peer
	if req == nil {
		return p
	}
	if req.Session != nil {
		if ip := req.Session.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			p.name, p.version = ip.ClientInfo.Name, ip.ClientInfo.Version
		}
	}
	if req.Params != nil {
		if turn, ok := req.Params.Meta["x-codex-turn-metadata"].(map[string]any); ok {
			p.model, _ = turn["model"].(string)
		}
	}
	return p
}

// clientBytes is the bound of a result for p.
func clientBytes(p peer) int {
	switch p.name {
	case codexName:
		if agent.CodexKnows(p.model) {
			return codexResultBytes
		}
		return codexFallbackBytes
	case claudeName:
		if atLeast(p.version, claudeDeclared) {
			return claudeDeclaredBytes
		}
		return claudeResultBytes
	}
	return defaultResultBytes
}

// atLeast reports whether the dotted version v is at least min; a version
// that does not parse is not.
func atLeast(v string, min [3]int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) != 3 {
		return false
	}
	for i, s := range parts {
		if end := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); end >= 0 {
			s = s[:end] // 2.1.328-beta
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return false
		}
		if n != min[i] {
			return n > min[i]
		}
	}
	return true
}

// resultBytes is the byte bound of the result of call req: the operator's
// (Options.OutputBytes), else the client's; 0 for none.
func (s *Server) resultBytes(req *mcp.CallToolRequest) int {
	switch {
	case s.outputBytes == NoOutputBound:
		return 0
	case s.outputBytes > 0:
		return s.outputBytes
	}
	return clientBytes(peerOf(req))
}

// longestFit is the largest n in [0, most] for which fits(n) holds, fits
// holding for every n up to it and none after; fits(0) is not asked.
func longestFit(most int, fits func(n int) bool) int {
	lo, hi := 0, most
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
