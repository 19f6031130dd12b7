package shell

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/spool"
)

// The private commands reach a script's bash through a directory of
// symbolic links to one binary, one link a name, that Run puts first on
// that bash's PATH once its login profile has run, and on no other PATH:
// the user's own shells never see it, the programs the script starts do
// (xargs hread), as they inherit the script's PATH. The directory is per
// user and per binary:
//
//	TMPDIR/rowkit-UID/           0700, the user's, never another's
//	TMPDIR/rowkit-UID/shell-KEY/bin/   NAME -> BINARY, one link a name
//	TMPDIR/rowkit-UID/shell-KEY/env    the BASH_ENV file (bashEnv)
//
// KEY is derived from the binary's path, the names and the BASH_ENV text,
// so a directory once complete never changes. Shells that start at once
// find it, or each makes one of its own under a temporary name and renames
// it into place: rename(2) is atomic, one of them wins, the others use the
// winner's. One found incomplete (a cleaner of TMPDIR took part of it) is
// moved aside and made again.

// bashEnv is what the script's bash reads through BASH_ENV: after the login
// profile (which sets PATH anew: Debian's /etc/profile does) and before
// the script. It puts the directory of private commands first on PATH,
// hands the caller's own BASH_ENV back to bash (as ROWKIT_BASH_ENV, read as
// bash would have read it), and leaves nothing behind: no variable, no
// function, the same $? and $_ as the profile left, and nothing on stderr
// under set -x.
const bashEnv = `# rowkit shell: puts rowkit's commands first on this bash's PATH
# (see rowkit help shell).
{
__rowkit_s=$? __rowkit_u=$_
__rowkit_env() {
	unset -f __rowkit_env
	unset __rowkit_s __rowkit_u
	case ${PATH-} in "$1" | "$1":*) ;; *) PATH=$1${PATH:+:$PATH} ;; esac
	return "$2"
}
if [ "${ROWKIT_BASH_ENV+set}" ]; then
	BASH_ENV=$ROWKIT_BASH_ENV
	unset ROWKIT_BASH_ENV
	if [ -f "$BASH_ENV" ]; then . "$BASH_ENV" 2>&3 3>&-; __rowkit_s=$? __rowkit_u=$_; fi
else
	unset BASH_ENV
fi
__rowkit_env "${BASH_SOURCE%/*}/bin" "$__rowkit_s" "$__rowkit_u"
} 3>&2 2>/dev/null
`

// CallerBashEnv is the variable that hands the caller's BASH_ENV to the
// script's bash, whose BASH_ENV is rowkit's (Run sets both).
const CallerBashEnv = "ROWKIT_BASH_ENV"

// PrivateError is a directory of private commands that could not be made
// or trusted. Its text says why and what to do.
type PrivateError struct{ msg string }

func (e *PrivateError) Error() string { return e.msg }

// staleAfter is how old a directory of private commands whose binary is
// gone must be before a shell making another one removes it.
const staleAfter = time.Hour

// Links returns the directory of private commands: a link to binary (an
// absolute path, symbolic links resolved) under each of names, in a
// directory of the user's own under base (the caller's TMPDIR). It makes
// the directory when it is missing or incomplete.
func Links(base, binary string, names []string) (string, error) {
	if !filepath.IsAbs(binary) {
		return "", &PrivateError{fmt.Sprintf("the binary %q is not an absolute path", binary)}
	}
	if !filepath.IsAbs(base) || strings.ContainsRune(base, ':') {
		base = "/tmp" // a PATH entry cannot hold a colon
	}
	top, err := userDir(base)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", binary, strings.Join(names, "\x00"), bashEnv)
	dir := filepath.Join(top, "shell-"+hex.EncodeToString(h.Sum(nil))[:16])
	bin := filepath.Join(dir, "bin")
	for range 3 {
		if complete(dir, names) {
			return bin, nil
		}
		made, err := makeLinks(top, binary, names)
		if err != nil {
			return "", err
		}
		if os.Rename(made, dir) == nil {
			sweep(top, dir)
			return bin, nil
		}
		// Another shell made it first, or an incomplete one is there.
		os.RemoveAll(made)
		if complete(dir, names) {
			return bin, nil
		}
		if aside, err := os.MkdirTemp(top, ".old-"); err == nil {
			os.Rename(dir, filepath.Join(aside, "x"))
			os.RemoveAll(aside)
		}
	}
	return "", &PrivateError{fmt.Sprintf("cannot make the directory of rowkit's commands %s: it keeps changing under this shell", dir)}
}

// userDir is base/rowkit-UID, the user's own directory that the store of
// kept outputs shares (spool.UserDir): made if missing, refused unless it
// is a directory of this user's that no one else may write to.
func userDir(base string) (string, error) {
	top, err := spool.UserDir(base)
	if err != nil {
		msg := err.Error()
		if e, ok := errs.As(err); ok {
			msg = e.Msg
		}
		return "", &PrivateError{msg + "; rowkit shell puts no commands there"}
	}
	return top, nil
}

// bashEnvFile is the BASH_ENV file beside bin, a directory of private
// commands Links returned.
func bashEnvFile(bin string) string { return filepath.Join(filepath.Dir(bin), "env") }

// complete reports whether dir holds the BASH_ENV file and exactly a link
// under each of names.
func complete(dir string, names []string) bool {
	bin := filepath.Join(dir, "bin")
	if fi, err := os.Lstat(bashEnvFile(bin)); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	ents, err := os.ReadDir(bin)
	if err != nil || len(ents) != len(names) {
		return false
	}
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink == 0 || !slices.Contains(names, e.Name()) {
			return false
		}
	}
	return true
}

// makeLinks makes a complete directory of private commands under a
// temporary name in top, and returns it.
func makeLinks(top, binary string, names []string) (string, error) {
	dir, err := os.MkdirTemp(top, ".new-")
	if err != nil {
		return "", &PrivateError{fmt.Sprintf("cannot make the directory of rowkit's commands in %s: %v", top, errors.Unwrap(err))}
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(dir)
		return "", &PrivateError{fmt.Sprintf("cannot make the directory of rowkit's commands in %s: %v", top, err)}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fail(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o700); err != nil {
		return fail(err)
	}
	for _, name := range names {
		if err := os.Symlink(binary, filepath.Join(bin, name)); err != nil {
			return fail(err)
		}
	}
	if err := os.WriteFile(bashEnvFile(bin), []byte(bashEnv), 0o600); err != nil {
		return fail(err)
	}
	return dir, nil
}

// sweep removes the directories of private commands in top, other than
// keep, whose binary is gone (a test binary, an old build), and what a
// shell that died while making one left, all older than staleAfter.
func sweep(top, keep string) {
	ents, err := os.ReadDir(top)
	if err != nil {
		return
	}
	for _, e := range ents {
		dir := filepath.Join(top, e.Name())
		if dir == keep || !e.IsDir() || !strings.HasPrefix(e.Name(), "shell-") && !strings.HasPrefix(e.Name(), ".") {
			continue // not the shell's (rowkit keeps other things here)
		}
		fi, err := e.Info()
		if err != nil || time.Since(fi.ModTime()) < staleAfter {
			continue
		}
		links, err := os.ReadDir(filepath.Join(dir, "bin"))
		gone := err != nil || len(links) == 0 || strings.HasPrefix(e.Name(), ".")
		if !gone {
			_, err := os.Stat(filepath.Join(dir, "bin", links[0].Name()))
			gone = errors.Is(err, fs.ErrNotExist)
		}
		if gone {
			os.RemoveAll(dir)
		}
	}
}
