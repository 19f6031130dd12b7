package cmd

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/review"
)

// reportExit is the one decision for a produced report; errors carry
// their own status.
func TestReviewReportExit(t *testing.T) {
	vs := func(st ...string) *review.Report {
		r := &review.Report{}
		for _, s := range st {
			r.Validations = append(r.Validations, review.Validation{Status: s})
		}
		return r
	}
	for _, c := range []struct {
		r    *review.Report
		want int
		line string
	}{
		{vs(), 0, ""}, {vs(review.StatusPassed), 0, ""},
		{vs(review.StatusPassed, review.StatusFailed), 1, "rowkit review: 1 of 2 validations did not pass\n"},
		{vs(review.StatusSpawnError), 1, "rowkit review: 1 of 1 validations did not pass\n"},
		{vs(review.StatusFailed, review.StatusTimedOut), 4, "rowkit review: 2 of 2 validations did not pass\n"},
		{vs(review.StatusTimedOut, review.StatusFailed), 4, "rowkit review: 2 of 2 validations did not pass\n"},
		{vs(review.StatusSkipped), 4, "rowkit review: 1 of 1 validations did not pass\n"},
	} {
		err := reportExit(c.r, false)
		if got := errs.ExitCode(err); got != c.want {
			t.Errorf("%+v: exit %d, want %d", c.r.Validations, got, c.want)
		}
		if err != nil {
			var stderr bytes.Buffer
			if code := failReview(&cli.Env{Stderr: &stderr, Name: "rowkit review"}, err); code != c.want || stderr.String() != c.line {
				t.Errorf("%+v: printed %q exit %d", c.r.Validations, stderr.String(), code)
			}
		}
		if reportExit(c.r, true) != nil {
			t.Error("--exit-zero did not give 0")
		}
	}
}

// A failure is one line with the engine's words turned into flags, and
// an error without a code is internal (70).
func TestReviewFailWording(t *testing.T) {
	for _, c := range []struct {
		err  error
		line string
		exit int
	}{
		{review.CheckRef("-x"), `rowkit review: usage: --base-ref "-x" starts with '-'` + "\nrowkit review: hint: refs may not start with a dash\n", 2},
		{errors.New("boom"), "rowkit review: internal: boom\n", 70},
		{errs.New(review.CodeGitTimeout, "git diff took longer than 1s").WithHint("inspect a smaller repository or raise the git timeout").WithExit(4),
			"rowkit review: git_timeout: git diff took longer than 1s\nrowkit review: hint: inspect a smaller repository or raise --git-timeout\n", 4},
	} {
		var stderr bytes.Buffer
		if code := failReview(&cli.Env{Stderr: &stderr, Name: "rowkit review"}, c.err); code != c.exit || stderr.String() != c.line {
			t.Errorf("got %q exit %d, want %q exit %d", stderr.String(), code, c.line, c.exit)
		}
	}
	_, err := review.Tokenize("a;b")
	var stderr bytes.Buffer
	failReview(&cli.Env{Stderr: &stderr, Name: "rowkit review"}, err)
	if !strings.HasPrefix(stderr.String(), `rowkit review: usage: --validate "a;b": shell metacharacter ';' at position 2`) {
		t.Errorf("got %q", stderr.String())
	}
}

// rowkit help review lists every engine code under the status it carries
// (outside_workspace only arises with a root, which the CLI never passes).
func TestReviewExitsDocumentCodes(t *testing.T) {
	rows := map[int]string{}
	for _, e := range Review.Exits {
		rows[e.Status] = e.When
	}
	for code, exit := range review.Codes() {
		if code == errs.Outside {
			continue
		}
		if !strings.Contains(rows[exit], code) {
			t.Errorf("%s (exit %d) is not documented under %d: %q", code, exit, exit, rows[exit])
		}
	}
	for _, n := range []int{0, 1, 2, 3, 4, 70} {
		if rows[n] == "" {
			t.Errorf("exit %d is not documented", n)
		}
	}
}
