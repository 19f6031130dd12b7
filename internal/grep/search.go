package grep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/jsonstr"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
)

// Error codes of hgrep for ripgrep itself.
const (
	CodeRgMissing      = "rg_missing"
	CodeInvalidPattern = "invalid_pattern"
	CodeRg             = "rg_failed"
	CodeCancelled      = "cancelled"
	CodeTooLarge       = "too_large"
	CodeWrite          = "write"
)

const (
	// maxEvent bounds one JSON line from ripgrep. A line that needs more
	// describes a source line far longer than any admissible row.
	maxEvent = 64 << 20
	// maxStderr bounds what is kept of ripgrep's diagnostics.
	maxStderr = 16 << 10
	// killDelay is how long ripgrep gets after SIGTERM before SIGKILL.
	killDelay = time.Second
)

// envAllow is the environment ripgrep keeps: where to find programs and the
// user's global git ignore file. RIPGREP_CONFIG_PATH never passes (and
// --no-config would ignore it anyway).
var envAllow = []string{"PATH", "HOME", "XDG_CONFIG_HOME"}

// Search runs ripgrep with plan in dir and writes each first-seen verified
// row of its results to w as "PATH":LINE:HASH TEXT, under token admission.
//
// It returns nil for a complete result (including no match), cli.Incomplete
// when admission stopped it (the admitted rows are written), or a coded
// error. ripgrep never outlives Search: on any early return it is killed
// and reaped.
func Search(ctx context.Context, plan *Plan, dir string, w io.Writer) error {
	rg, err := exec.LookPath("rg")
	if err != nil {
		return errs.Errorf(CodeRgMissing, "ripgrep (rg) is not on PATH; install it (e.g. apt-get install ripgrep)")
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := exec.CommandContext(ctx, rg, plan.Args...)
	cmd.Dir = dir
	cmd.Env = allowedEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		// rg runs in its own process group: end all of it.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = killDelay
	stderr := &capped{max: maxStderr}
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return errs.Errorf(CodeRg, "cannot start ripgrep: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return errs.Errorf(CodeRg, "cannot start ripgrep: %v", regfile.Cause(err))
	}

	out := bufio.NewWriterSize(w, 32<<10)
	st := &stream{dir: dir, out: out, seen: map[rowKey]bool{}, context: plan.Context}
	streamErr := st.run(bufio.NewReaderSize(pipe, 256<<10))
	st.close()
	if err := st.flush(); err != nil && streamErr == nil {
		streamErr = err
	}
	if streamErr != nil {
		stop() // ripgrep may still be writing: end it before waiting
	}
	waitErr := cmd.Wait()
	if err := out.Flush(); err != nil && streamErr == nil {
		streamErr = errs.Errorf(CodeWrite, "writing output: %v", regfile.Cause(err))
	}
	switch {
	case streamErr != nil:
		return streamErr
	case ctx.Err() != nil:
		return errs.Errorf(CodeCancelled, "the search was cancelled")
	}
	return rgStatus(waitErr, stderr.Bytes())
}

// rgStatus turns ripgrep's exit into hgrep's result: 0 (matches) and 1 (no
// match) are success; 2 is an error, reported with ripgrep's own message
// even when some rows were printed, since some path was not searched.
func rgStatus(waitErr error, stderr []byte) error {
	if waitErr == nil {
		return nil
	}
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) {
		return errs.Errorf(CodeRg, "ripgrep: %v", waitErr)
	}
	switch code := ee.ExitCode(); code {
	case 1:
		return nil
	case -1:
		return errs.Errorf(CodeRg, "ripgrep was killed (%v)", ee.ProcessState)
	}
	return rgError(stderr)
}

// rgError condenses ripgrep's diagnostics to one line: its own message
// without usage blocks, hints about flags hgrep does not take, or the
// caret drawings of regex errors.
func rgError(stderr []byte) error {
	var msgs []string
	lines := strings.Split(string(stderr), "\n")
	inUsage := false
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if inUsage && (l == "" || strings.HasPrefix(lines[i], " ")) {
			continue // clap's usage block: indented lines
		}
		inUsage = false
		switch {
		case l == "" || strings.Contains(l, "--debug") || strings.HasPrefix(l, "For more information"):
			continue
		case l == "USAGE:":
			inUsage = true
			continue
		case l == "regex parse error:":
			// The pattern, a caret line, then "error: WHAT".
			var pattern, what string
			for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "error:") {
				i++
				if pattern == "" {
					pattern = strings.TrimSpace(lines[i])
				}
			}
			if i+1 < len(lines) {
				i++
				what = strings.TrimSpace(strings.TrimPrefix(lines[i], "error:"))
			}
			return errs.Errorf(CodeInvalidPattern, "regex parse error: %s in %s", what, pattern)
		}
		msgs = append(msgs, strings.TrimPrefix(strings.TrimPrefix(l, "error: "), "rg: "))
	}
	if len(msgs) == 0 {
		return errs.Errorf(CodeRg, "ripgrep failed without a message (exit status 2)")
	}
	code := CodeRg
	if m := msgs[0]; strings.HasPrefix(m, "PCRE2: error compiling") || strings.HasPrefix(m, "Compiled regex exceeds size limit") {
		code = CodeInvalidPattern
	}
	msg := strings.Join(msgs[:min(3, len(msgs))], "; ")
	if len(msgs) > 3 {
		msg += " (and more)"
	}
	return errs.Errorf(code, "%s", msg)
}

func allowedEnv() []string {
	var env []string
	for _, k := range envAllow {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// capped keeps the first max bytes written to it and discards the rest.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// event is one line of ripgrep's JSON stream. Only the fields hgrep uses
// are decoded.
type event struct {
	Type string `json:"type"`
	Data struct {
		Path       data   `json:"path"`
		Lines      data   `json:"lines"`
		LineNumber int    `json:"line_number"`
		Submatches []span `json:"submatches"`
	} `json:"data"`
}

// data is ripgrep's arbitrary data: UTF-8 text, or base64 bytes when not.
type data struct {
	Text  *string `json:"text"`
	Bytes *string `json:"bytes"`
}

// value returns the data's bytes and whether they were valid UTF-8.
func (d *data) value() ([]byte, bool, error) {
	switch {
	case d.Text != nil:
		return []byte(*d.Text), true, nil
	case d.Bytes != nil:
		b, err := base64.StdEncoding.DecodeString(*d.Bytes)
		return b, false, err
	}
	return nil, true, nil
}

type rowKey struct {
	path string
	line int
}

// stream turns ripgrep's events into admitted rows.
type stream struct {
	dir string // where rg runs: the base of the paths it reports
	out io.Writer
	adm *rows.Admitter
	// context: print every verified row of a matched ripgrep line, not
	// only those its submatches touch (see Plan.Context).
	context bool
	seen    map[rowKey]bool // admitted rows, for first-seen de-duplication
	src     *source         // the file of the current events
	pre     []byte          // src's row prefix: "PATH":
	row     []byte
}

// run consumes events until ripgrep's output ends or a row cannot be
// admitted or verified.
func (st *stream) run(r *bufio.Reader) error {
	var line []byte
	for {
		var err error
		line, err = readEvent(r, line[:0])
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			return errs.Errorf(CodeRg, "cannot parse ripgrep's output: %v", err)
		}
		switch ev.Type {
		case "match", "context":
			if err := st.lineEvent(&ev); err != nil {
				return err
			}
		case "end":
			st.close()
		}
	}
}

func (st *stream) lineEvent(ev *event) error {
	path, ok, err := ev.Data.Path.value()
	if err != nil {
		return errs.Errorf(CodeRg, "cannot parse ripgrep's output: path: %v", err)
	}
	if !ok {
		return errs.Errorf(CodeNotUTF8, "the path %s is not valid UTF-8, so it cannot be printed as a JSON string", quote(string(path)))
	}
	text, _, err := ev.Data.Lines.value()
	if err != nil {
		return errs.Errorf(CodeRg, "cannot parse ripgrep's output: lines: %v", err)
	}
	n := ev.Data.LineNumber
	if n < 1 {
		return errs.Errorf(CodeRg, "ripgrep reported a line of %s without a line number", quote(string(path)))
	}
	if st.src == nil || st.src.path != string(path) || n < st.src.lf {
		st.close()
		if st.src, err = openSource(st.dir, string(path)); err != nil {
			return err
		}
		st.pre = append(jsonstr.Append(st.pre[:0], string(path)), ':')
	}
	var subs []span
	if ev.Type == "match" && !st.context {
		subs = ev.Data.Submatches
	}
	segs, err := st.src.rowsOf(n, text, subs)
	if err == errRowTooLong {
		return errs.IncompleteTokens(rows.TokenLimit)
	}
	if err != nil {
		return err
	}
	for _, sg := range segs {
		k := rowKey{st.src.path, sg.line}
		if st.seen[k] {
			continue
		}
		st.row = rows.AppendRow(append(st.row[:0], st.pre...), sg.line, st.src.cur[sg.start:sg.end])
		ok, err := st.admit(st.row)
		if err != nil {
			return errs.Errorf(CodeWrite, "writing output: %v", regfile.Cause(err))
		}
		if !ok {
			return errs.IncompleteTokens(rows.TokenLimit)
		}
		st.seen[k] = true
	}
	return nil
}

// admit offers one row to token admission.
func (st *stream) admit(row []byte) (bool, error) {
	if st.adm == nil {
		st.adm = rows.NewAdmitter(st.out, rows.DefaultBudget)
	}
	return st.adm.Admit(row)
}

// flush writes the admitted rows that admission still holds.
func (st *stream) flush() error {
	if st.adm == nil {
		return nil
	}
	if err := st.adm.Flush(); err != nil {
		return errs.Errorf(CodeWrite, "writing output: %v", regfile.Cause(err))
	}
	return nil
}

func (st *stream) close() {
	if st.src != nil {
		st.src.Close()
		st.src = nil
	}
}

// readEvent appends the next LF-terminated line of r to buf.
func readEvent(r *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxEvent {
			return nil, errs.Errorf(CodeTooLarge, "ripgrep reported one line with over %d MiB of match data; narrow the search", maxEvent>>20)
		}
		switch err {
		case nil:
			return buf, nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if len(buf) > 0 {
				return buf, nil
			}
			return nil, io.EOF
		default:
			return nil, errs.Errorf(CodeRg, "reading ripgrep's output: %v", err)
		}
	}
}
