package router

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/jsonstr"
)

// The routed tools: what the model calls instead of apply_patch and
// exec_command.
const (
	ToolHpatch = "hpatch"
	ToolShell  = "shell"
)

// Limits of one carrier. Codex runs exec_command's cmd as one argv string
// of /bin/sh -c, so Linux's MAX_ARG_STRLEN (128 KiB with the final NUL)
// bounds it: a 200 KiB cmd failed with E2BIG under Codex 0.169, a 120 KiB
// one ran. MaxCmdBytes keeps 4 KiB of that free. A script is refused by
// its own size (MaxInputBytes) rather than by the cmd's, so that the
// refusal the model reads does not depend on where the rowkit binary
// lives; MaxFrontendBytes bounds the quoted binary path so that every
// script of MaxInputBytes fits.
const (
	MaxCmdBytes      = 126976
	MaxInputBytes    = 120 << 10
	MaxFrontendBytes = 3072
)

// Output bounds. Codex 0.169 hands the model a command's output whole when
// it is at most 4 x min(max_output_tokens, policy) bytes and otherwise
// cuts the middle out, inside a line. The policy is agent.CodexPolicy of the
// request's model: 10,000 tokens for a model of Codex's catalogue, 2,500
// for any other (measured with gpt-5.5-codex and gpt-4.1: 40,000 and
// 10,000 bytes came whole, a byte more was cut; the count is bytes, not
// characters). So a carrier asks for the policy's tokens, the largest
// output Codex passes whole, and rowkit bounds what it prints 400 bytes
// below that (OutputBound), so that rowkit's own note (what it left out) is
// what the model reads and never Codex's cut; the margin is for what
// /bin/sh itself may print around the carrier (a "not found" when the
// binary is gone). A user who sets tool_output_token_limit below the
// policy lowers Codex's cut below the bound.
const (
	outputMargin = 400
	// OutputBytes is the bound of a carrier for a model without
	// metadata, and of rowkit carrier without --max-output.
	OutputBytes = 4*agent.CodexFallbackPolicy - outputMargin
	// YieldMS is the most Codex honours: a longer run returns a session ID
	// that the model polls with write_stdin.
	YieldMS = 30000
)

// OutputBound is the output bound of a carrier under a tool output policy
// of tokens.
func OutputBound(tokens int) int { return 4*tokens - outputMargin }

// CarrierShell runs every carrier: a quoted heredoc is literal in every
// POSIX sh, and naming it keeps the user's login shell (fish, zsh) and its
// profile scripts out of the way.
const CarrierShell = "/bin/sh"

// Codes of a script that cannot be carried.
const (
	CodeNUL    = "carrier_nul"    // the script contains a NUL byte
	CodeUnsafe = "carrier_unsafe" // no heredoc delimiter carries the script whole
)

// Carrier turns a routed call into exec_command arguments and back.
type Carrier struct {
	frontend string // the rowkit binary as Codex's executor sees it
	quoted   string // frontend as one POSIX single-quoted word
	yield    int    // yield_time_ms of every carrier
	tokens   int    // max_output_tokens of every carrier: the model's policy
	memo     *memo  // the carriers of recent requests, decoded (see memo)
	// histories are the last few histories rewritten (see histories).
	histories *histories
}

// NewCarrier returns the carrier that runs frontend, the path of the
// rowkit binary as the commands Codex runs see it.
func NewCarrier(frontend string) (*Carrier, error) {
	switch {
	case frontend == "":
		return nil, errs.Usagef("the rowkit binary for the carrier has no path")
	case strings.ContainsAny(frontend, "\x00\n"):
		return nil, errs.Usagef("the rowkit binary's path %s contains a NUL or a line feed, which a carrier cannot name", errs.Name(frontend))
	case !strings.HasPrefix(frontend, "/"):
		return nil, errs.Usagef("the rowkit binary's path %s is not absolute; Codex runs commands in the session's directory", errs.Name(frontend))
	}
	q := shellQuote(frontend)
	if len(q) > MaxFrontendBytes {
		return nil, errs.Usagef("the rowkit binary's path is %d bytes quoted; a carrier takes at most %d", len(q), MaxFrontendBytes)
	}
	return &Carrier{frontend: frontend, quoted: q, yield: YieldMS, tokens: agent.CodexFallbackPolicy, memo: newMemo(), histories: &histories{}}, nil
}

// WithYield returns the carrier with carriers that yield after ms
// milliseconds rather than YieldMS: for tests of a call that outlasts its
// yield, which would otherwise take 30 s. Decode reads any yield.
func (c *Carrier) WithYield(ms int) *Carrier {
	d := *c
	d.yield = ms
	return &d
}

// ForModel returns the carrier with carriers for model: they ask for its
// tool output policy and bound the output below what Codex then passes
// whole. The memo and histories are shared.
func (c *Carrier) ForModel(model string) *Carrier {
	d := *c
	d.tokens = agent.CodexPolicy(model)
	return &d
}

// Frontend is the path of the rowkit binary the carrier runs.
func (c *Carrier) Frontend() string { return c.frontend }

// Command is the shell command that runs tool on input: a quoted heredoc
// into `rowkit carrier`, readable in Codex's approval prompt. The script
// arrives on the carrier's stdin byte for byte, followed by the LF that
// ends the heredoc's last line.
func (c *Carrier) Command(tool, input string) (string, error) {
	d, err := carriable(tool, input)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(c.quoted) + len(input) + 100)
	b.WriteString(c.quoted)
	b.WriteString(" carrier --max-output ")
	b.WriteString(strconv.Itoa(OutputBound(c.tokens)))
	b.WriteString(" ")
	b.WriteString(tool)
	b.WriteString(" <<'")
	b.WriteString(d)
	b.WriteString("'\n")
	b.WriteString(input)
	b.WriteString("\n")
	b.WriteString(d)
	if b.Len() > MaxCmdBytes { // unreachable while MaxFrontendBytes holds
		return "", tooLarge(tool, len(input))
	}
	return b.String(), nil
}

// Encode returns the arguments of the exec_command call that carries tool
// on input, with a fixed key order: the same call gives the same bytes, so
// a retried stream gives the same carrier. It refuses a script that cannot
// be carried with an *errs.Error whose message is meant for the model.
func (c *Carrier) Encode(tool, input string) (string, error) {
	cmd, err := c.Command(tool, input)
	if err != nil {
		return "", err
	}
	b := make([]byte, 0, len(cmd)+len(cmd)/8+128)
	b = append(b, `{"cmd":`...)
	b = jsonstr.Append(b, cmd)
	b = append(b, `,"shell":"`+CarrierShell+`","login":false,"yield_time_ms":`...)
	b = strconv.AppendInt(b, int64(c.yield), 10)
	b = append(b, `,"max_output_tokens":`...)
	b = strconv.AppendInt(b, int64(c.tokens), 10)
	b = append(b, '}')
	return string(b), nil
}

// Carriable says whether a carrier can take input: nil, or the refusal
// the model reads in place of the call's output.
func Carriable(tool, input string) error {
	_, err := carriable(tool, input)
	return err
}

// carriable returns the delimiter that carries input, or the refusal.
func carriable(tool, input string) (string, error) {
	switch {
	case strings.IndexByte(input, 0) >= 0:
		return "", errs.New(CodeNUL, tool+": not run: the script contains a NUL byte, which a command line cannot carry; remove it and call again")
	case len(input) > MaxInputBytes:
		return "", tooLarge(tool, len(input))
	}
	d := delimiter(tool, input)
	if d == "" {
		return "", errs.New(CodeUnsafe, tool+": not run: /bin/sh would change this script on its way to rowkit (its lines begin like every heredoc delimiter rowkit could use, followed by non-ASCII text); split it into several calls")
	}
	return d, nil
}

func tooLarge(tool string, n int) error {
	return errs.New(errs.TooLarge, fmt.Sprintf("%s: not run: the script is %s bytes and one call carries at most %s bytes; split it into several calls",
		tool, errs.Thousands(n), errs.Thousands(MaxInputBytes)))
}

// Decode returns the tool and the script a carrier's arguments run, and
// false for anything else. The binary's path may be any quoted word (a
// carrier from an older binary or another path still decodes), but the
// delimiter must be the one Encode derives from the script, so that only a
// carrier rowkit made is taken back, and the script must reach the carrier
// whole under sh (no line of it ends the heredoc).
func Decode(arguments string) (tool, input string, ok bool) {
	if !strings.Contains(arguments, " carrier ") {
		return "", "", false // the common case: an ordinary command
	}
	return decodeArguments([]byte(arguments))
}

func decodeArguments(arguments []byte) (tool, input string, ok bool) {
	var d decoder
	return d.arguments(arguments)
}

// decoder decodes carriers with buffers it keeps from one to the next, so
// that a history of many carriers is decoded with an allocation each (its
// command, which the script is a part of).
type decoder struct {
	cmd, hash []byte
}

func (d *decoder) arguments(arguments []byte) (tool, input string, ok bool) {
	cmd, ok := d.cmdOf(arguments)
	if !ok {
		return "", "", false
	}
	return d.command(string(cmd))
}

// transient is arguments with the script in the decoder's own buffer:
// input is valid until the decoder's next call (the rewrite writes it out
// at once), and costs no copy.
func (d *decoder) transient(arguments []byte) (tool, input string, ok bool) {
	cmd, ok := d.cmdOf(arguments)
	if !ok || len(cmd) == 0 {
		return "", "", false
	}
	return d.command(unsafe.String(&cmd[0], len(cmd)))
}

// cmdOf is the cmd of a carrier's arguments, decoded into d.cmd.
func (d *decoder) cmdOf(arguments []byte) ([]byte, bool) {
	if !bytes.Contains(arguments, []byte(" carrier ")) {
		return nil, false
	}
	var raw []byte
	found := false
	if bytes.HasPrefix(arguments, []byte(`{"cmd":"`)) {
		// As Encode writes it: cmd first, without spaces (the members
		// after it are not the carrier's to judge).
		if end, ok := skipString(arguments, len(`{"cmd":`)); ok {
			raw, found = arguments[len(`{"cmd":`):end], true
		}
	} else if !eachMember(arguments, func(k string, v []byte) {
		if k == "cmd" && !found {
			raw, found = v, true
		}
	}) {
		return nil, false
	}
	if !found {
		return nil, false
	}
	if d.cmd == nil {
		d.cmd = make([]byte, 0, 1<<10)
	}
	cmd, ok := unquoteInto(d.cmd[:0], raw)
	if !ok {
		return nil, false
	}
	d.cmd = cmd
	return cmd, true
}

func (dc *decoder) command(cmd string) (tool, input string, ok bool) {
	rest, ok := skipQuotedWord(cmd)
	if !ok {
		return "", "", false
	}
	if rest, ok = strings.CutPrefix(rest, " carrier "); !ok {
		return "", "", false
	}
	if r, found := strings.CutPrefix(rest, "--max-output "); found {
		i := 0
		for i < len(r) && r[i] >= '0' && r[i] <= '9' {
			i++
		}
		if i == 0 || i >= len(r) || r[i] != ' ' {
			return "", "", false
		}
		rest = r[i+1:]
	}
	switch {
	case strings.HasPrefix(rest, ToolHpatch+" "):
		tool = ToolHpatch
	case strings.HasPrefix(rest, ToolShell+" "):
		tool = ToolShell
	default:
		return "", "", false
	}
	rest = rest[len(tool)+1:]
	if !strings.HasPrefix(rest, "<<'") {
		return "", "", false
	}
	end := strings.Index(rest[3:], "'\n")
	if end < 0 {
		return "", "", false
	}
	end += 3
	d := rest[3:end]
	if !validDelimiter(d) {
		return "", "", false
	}
	// The body, then a line feed and the delimiter, which must be the one
	// derived from the body (and so safe for it).
	body := rest[end+2:]
	n := len(body) - len(d) - 1
	if n < 0 || body[n] != '\n' || body[n+1:] != d || !dc.derived(tool, body[:n], d) {
		return "", "", false
	}
	return tool, body[:n], true
}

// skipQuotedWord reads a word written as shellQuote writes it and returns
// what follows it.
func skipQuotedWord(s string) (string, bool) {
	if !strings.HasPrefix(s, "'") {
		return "", false
	}
	s = s[1:]
	for {
		j := strings.IndexByte(s, '\'')
		if j < 0 {
			return "", false
		}
		s = s[j:]
		if strings.HasPrefix(s, `'"'"'`) {
			s = s[5:]
			continue
		}
		return s[1:], true
	}
}

// shellQuote writes s as one POSIX single-quoted word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// delimiter is the heredoc word that ends input: derived from the tool and
// the script, so that the same call always gives the same carrier, and
// derived again while the script would not reach the carrier whole under
// it (see safeDelimiter). It is "" when no candidate is safe.
func delimiter(tool, input string) string {
	var buf [maxDelimiter]byte
	return string(deriveDelimiter(&buf, sha256.Sum256(seed(nil, tool, input)), input))
}

// seed is what the delimiter of tool on input derives from, appended to
// buf.
func seed(buf []byte, tool, input string) []byte {
	return append(append(append(buf, tool...), 0), input...)
}

// derived reports whether d is the delimiter of tool on input.
func (dc *decoder) derived(tool, input, d string) bool {
	dc.hash = seed(dc.hash[:0], tool, input)
	var buf [maxDelimiter]byte
	return string(deriveDelimiter(&buf, sha256.Sum256(dc.hash), input)) == d
}

// delimiterPrefixes start the candidate delimiters, tried in order. dash
// (Debian's /bin/sh) drops a byte of a heredoc line that begins like the
// delimiter, so a script whose lines begin with R and a non-ASCII letter
// ("Résumé") needs a delimiter that begins otherwise.
var delimiterPrefixes = []string{
	"", "_", "Z_", "Q_", "X_", "J_", "K_", "V_", "W_", "Y_", "U_", "T_", "S_", "P_", "O_", "N_",
	"M_", "L_", "I_", "H_", "G_", "F_", "E_", "D_", "C_", "B_", "A_", "z_", "y_", "x_", "w_",
	"v_", "u_", "t_", "s_", "r_", "q_", "p_", "o_", "n_", "m_", "l_", "k_", "j_", "i_", "h_",
	"g_", "f_", "e_", "d_", "c_", "b_", "a_", "9_", "8_", "7_", "6_", "5_", "4_", "3_", "2_",
	"1_", "0_",
}

// delimiterRounds is how many hashes each prefix is tried with.
const delimiterRounds = 4

// maxDelimiter is the longest delimiter: a prefix, ROWKIT_ and 16 hex
// digits.
const maxDelimiter = 2 + len("ROWKIT_") + 16

// deriveDelimiter writes the first safe candidate for input into buf and
// returns it, or nil.
func deriveDelimiter(buf *[maxDelimiter]byte, h [32]byte, input string) []byte {
	for range delimiterRounds {
		for _, p := range delimiterPrefixes {
			d := append(append(buf[:0], p...), "ROWKIT_"...)
			d = hex.AppendEncode(d, h[:8])
			if safeDelimiter(input, d) {
				return d
			}
		}
		h = sha256.Sum256(h[:])
	}
	return nil
}

// safeDelimiter reports whether sh delivers input whole through a quoted
// heredoc ended by d: no line of input is d, and none begins with part of
// d followed by a byte of 0x80 or more, which dash 0.5.12 drops (measured:
// every such byte, after any non-empty part of the delimiter).
func safeDelimiter[D ~string | ~[]byte](input string, d D) bool {
	for len(input) > 0 {
		line := input
		if i := strings.IndexByte(input, '\n'); i >= 0 {
			line, input = input[:i], input[i+1:]
		} else {
			input = ""
		}
		if len(line) == 0 || line[0] != d[0] {
			continue
		}
		if line == string(d) {
			return false
		}
		k := 0
		for k < len(line) && k < len(d) && line[k] == d[k] {
			k++
		}
		if k < len(line) && line[k] >= 0x80 {
			return false
		}
	}
	return true
}

// hasLine reports whether a line of s (split at LF) is exactly d.
func hasLine(s, d string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], d)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(d)
		if (i == 0 || s[i-1] == '\n') && (end == len(s) || s[end] == '\n') {
			return true
		}
		off = i + 1
	}
}

// validDelimiter reports whether d has the shape deriveDelimiter gives.
func validDelimiter(d string) bool {
	i := strings.Index(d, "ROWKIT_")
	if i < 0 || i > 2 || len(d) != i+len("ROWKIT_")+16 || !isHex(d[i+len("ROWKIT_"):]) {
		return false
	}
	return slices.Contains(delimiterPrefixes, d[:i])
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// MaxStdinBytes bounds what `rowkit carrier` reads: a carrier's cmd is at
// most MaxCmdBytes, so its heredoc is less.
const MaxStdinBytes = 128 << 10

// Bound keeps out within max bytes for the model: whole lines from the
// start, then one line saying what was left out (name starts it, as the
// command's other diagnostics). A row is never cut; a line longer than the
// whole bound is left out with the rest. out within max is returned as is.
func Bound(out []byte, max int, name string) []byte {
	if len(out) <= max {
		return out
	}
	note := func(lines, n int) string {
		return fmt.Sprintf("%s: output incomplete: %d more line(s) (%s bytes) left out at the carrier's %s-byte bound\n",
			name, lines, errs.Thousands(n), errs.Thousands(max))
	}
	// The note is at most this long, whatever the counts.
	room := max - len(note(len(out), len(out)))
	keep := 0
	for keep < len(out) {
		i := bytes.IndexByte(out[keep:], '\n')
		end := len(out)
		if i >= 0 {
			end = keep + i + 1
		}
		if end > room {
			break
		}
		keep = end
	}
	rest := out[keep:]
	lines := bytes.Count(rest, []byte{'\n'})
	if len(rest) > 0 && rest[len(rest)-1] != '\n' {
		lines++
	}
	b := append(out[:keep:keep], note(lines, len(rest))...)
	return b
}
