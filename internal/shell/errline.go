package shell

import (
	"bytes"
	"regexp"
	"sync"
)

// ErrorLine reports whether line names an error or a failure, by the rule
// the bounded output keeps such lines of the middle it leaves out with
// (Output), measured on the failures of go test, go build, pytest, tsc,
// npm test (node:test) and cargo build and test
// (TestErrorLineOnRealFailures):
//
//   - a word error, Error or ERROR, an exception name (TypeError,
//     AssertionError, IOException), Traceback, or rustc's error[E0308];
//   - FAIL, FAILED or FAILURE in capitals, or fail, failed, failing or
//     failure as a word;
//   - panic or panicked (Go's and Rust's);
//   - a test framework's mark of a failed test: ✕ ✗ × ✖ (jest, mocha,
//     node:test), ● heading a failed jest test, pytest's "E   " detail
//     lines and its ______ test_name ______ headers;
//   - a compiler's "FILE.go:LINE:COL: ..." (Go's errors name no error);
//
// but not a line that says something passed or ran (go test's "--- PASS"
// and "=== RUN", "ok  \tpkg", "PASS", pytest's "... PASSED", "✔ ..."),
// nor a summary that counts no failure ("0 failed", "fail 0"). A line
// that says where the error just named is (rustc's "  --> FILE:LINE:COL",
// Python's '  File "x.py", line 3', go test's "    x_test.go:12: got 1"
// under "--- FAIL: TestX") goes with it: WhereLine; and go test -v's last
// message before a "--- FAIL" line goes with that: MessageLine.
func ErrorLine(line []byte) bool {
	if !mayName(line) {
		return false
	}
	re := rules()
	if loc := re.pass.FindIndex(line); loc != nil && !re.failWord.Match(line[loc[1]:]) {
		return false
	}
	return re.err.Match(line) && !re.none.Match(line)
}

// MessageLine reports whether line is a message of a Go test, "    x_test.go:12:
// got 1", which go test -v prints before the test's "--- FAIL" line: the
// bounded output shows the last one with that line (FailLine).
func MessageLine(line []byte) bool {
	return bytes.Contains(line, []byte("_test.go:")) && rules().message.Match(line)
}

// FailLine reports whether line is go test's "--- FAIL: TestX" line.
func FailLine(line []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(line, " "), []byte("--- FAIL: "))
}

// WhereLine reports whether line locates the error named on the line
// before it: the bounded output shows it when it shows that one.
func WhereLine(line []byte) bool {
	return (bytes.Contains(line, []byte("-->")) || bytes.Contains(line, []byte("File \"")) || bytes.Contains(line, []byte(".go:"))) && rules().where.Match(line)
}

// mayName is a quick test that line holds one of the words or marks the
// rule looks for, so that most lines of a long output cost a few
// vectorised searches and no regular expression.
func mayName(line []byte) bool {
	for _, w := range rules().markers {
		if bytes.Contains(line, w) {
			return true
		}
	}
	return false
}

// rules are the rule's regular expressions, compiled when an output is
// first cut (not at start-up, which every rowkit command pays).
var rules = sync.OnceValue(func() *lineRules {
	return &lineRules{
		err: regexp.MustCompile(`\b(?:error|Error|ERROR)\b|[A-Z][A-Za-z]*(?:Error|Exception)\b|\berror\[E\d+\]|\bTraceback\b|` +
			`\b(?:FAIL|FAILED|FAILURE)\b|\b(?:[Ff]ail|[Ff]ailed|[Ff]ailing|[Ff]ailure|[Ff]ailures)\b|\bpanic(?:ked)?\b|` +
			`[✕✗×✖●]|^E {2,}|^_{3,} .+ _{3,}$|^\S+\.go:\d+:\d+: `),
		pass:     regexp.MustCompile(`^(?:\s*--- PASS|\s*=== (?:RUN|PAUSE|CONT|NAME)|ok  \t|PASS$|\s*✓|\s*✔|# pass |\S+::\S+ PASSED)`),
		failWord: regexp.MustCompile(`\bFAIL`),
		none:     regexp.MustCompile(`\b0 (?:errors?|failed|failures?|failing)\b|\b(?:errors?|failures?|failed|fail):? 0\b`),
		where:    regexp.MustCompile(`^\s*--> \S+:\d+:\d+|^\s+File "[^"]+", line \d+|^\s+\S+_test\.go:\d+: `),
		message:  regexp.MustCompile(`^\s+\S+_test\.go:\d+: `),
		markers: [][]byte{
			[]byte("rror"), []byte("RROR"), []byte("FAIL"), []byte("ail"), []byte("anic"), []byte("xception"),
			[]byte("raceback"), []byte("✕"), []byte("✗"), []byte("×"), []byte("✖"), []byte("●"),
			[]byte("E  "), []byte("___"), []byte(".go:"),
		},
	}
})

type lineRules struct {
	err *regexp.Regexp
	// pass is a line that reports a test that passed or ran, or a
	// package that passed.
	pass *regexp.Regexp
	// failWord finds a failure named after a pass mark ("=== RUN TestX"
	// is only a name; "=== RUN TestX ... FAIL" would not be).
	failWord *regexp.Regexp
	// none is a summary that counts no error or failure.
	none           *regexp.Regexp
	where, message *regexp.Regexp
	// markers are the words and marks the rule looks for (mayName).
	markers [][]byte
}
