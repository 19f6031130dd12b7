package shell

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What a script leaves behind. Its bash leads a session and a process
// group of its own, and (not an interactive shell: no job control) every
// command it starts, in the background too, stays in that group unless it
// leaves it (setsid -f, the one way to detach on purpose; a program that
// makes a group of its own, as timeout does). When bash has exited, what
// is still in the group was left running by the script: the shell names
// it, sends SIGTERM to the group, and SIGKILL to what is left after the
// grace period.

// settle is how long the group has to empty on its own once bash has
// exited: a process substitution, a job the script just killed, may still
// be on its way out then. leaveGrace is how long a process on its way out
// of the group (setsid -f's child, between fork and setsid(2)) has to
// leave it before it is counted as left behind.
const (
	settle     = 50 * time.Millisecond
	leaveGrace = 500 * time.Millisecond
)

// member is a live process of the script's group, as /proc shows it.
type member struct {
	pid, ppid int
	comm      string
	argv      []string
}

// members lists the live processes of group pgid: not the zombies, which
// have ended and only wait for their parent.
func members(pgid int) []member {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var ms []member
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if err != nil || open < 0 || close < open || close+2 > len(b) {
			continue
		}
		// pid (comm) state ppid pgrp session ...
		f := strings.Fields(string(b[close+2:]))
		if len(f) < 4 || f[0] == "Z" || f[0] == "X" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		m := member{pid: pid, ppid: ppid, comm: string(b[open+1 : close])}
		if cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && len(cmdline) > 0 {
			m.argv = strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		}
		ms = append(ms, m)
	}
	return ms
}

// endGroup stops what the script left in its group pgid (bash, its leader,
// has exited and been reaped) and returns the names of the commands it
// left, the outermost of each tree; bash names the script's bash's argv,
// which a subshell of the script shares.
func endGroup(pgid int, bash []string, grace time.Duration) []string {
	for deadline := time.Now().Add(settle); ; time.Sleep(2 * time.Millisecond) {
		if syscall.Kill(-pgid, 0) != nil {
			return nil // the usual case: nothing left, one kill(2)
		}
		if time.Now().After(deadline) {
			break
		}
	}
	var left []member
	for deadline := time.Now().Add(leaveGrace); ; time.Sleep(5 * time.Millisecond) {
		left = members(pgid)
		leaving := slices.ContainsFunc(left, func(m member) bool { return m.comm == "setsid" })
		if len(left) == 0 {
			return nil
		}
		if !leaving || time.Now().After(deadline) {
			break
		}
	}
	names := rootNames(left, bash)
	syscall.Kill(-pgid, syscall.SIGTERM)
	syscall.Kill(-pgid, syscall.SIGCONT) // a stopped process acts on it only once continued
	if !emptied(pgid, grace) {
		syscall.Kill(-pgid, syscall.SIGKILL)
		emptied(pgid, time.Second)
	}
	return names
}

// emptied waits up to d for group pgid to have no live process, and
// reports whether it has none.
func emptied(pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	lastScan := time.Now()
	for {
		if syscall.Kill(-pgid, 0) != nil {
			return true
		}
		// kill(2) finds zombies too; a zombie nobody reaps (an init that
		// does not) has ended all the same.
		if time.Since(lastScan) > 100*time.Millisecond {
			if len(members(pgid)) == 0 {
				return true
			}
			lastScan = time.Now()
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rootNames names the processes of left whose parent is not in left: what
// the script started and left, each with what it started under it.
func rootNames(left []member, bash []string) []string {
	in := map[int]bool{}
	for _, m := range left {
		in[m.pid] = true
	}
	slices.SortFunc(left, func(a, b member) int { return a.pid - b.pid })
	var name func(m member) string
	name = func(m member) string {
		if len(m.argv) == 0 {
			return m.comm
		}
		if !slices.Equal(m.argv, bash) {
			return commandLine(m.argv)
		}
		// A subshell of the script ( ... &): named by what it runs.
		var inside []string
		for _, c := range left {
			if c.ppid == m.pid {
				inside = append(inside, name(c))
			}
		}
		if len(inside) == 0 {
			return "(subshell)"
		}
		return "(" + strings.Join(inside, "; ") + ")"
	}
	var names []string
	for _, m := range left {
		if !in[m.ppid] {
			names = append(names, name(m))
		}
	}
	return names
}

// commandLine is argv as one short line, quoted as bash would read it.
func commandLine(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = quote(a)
	}
	s := strings.Join(words, " ")
	if len(s) > 80 {
		cut := 77
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// quote is s as one bash word: as it is when nothing in it is special,
// else in single quotes.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(oneLine(s), "'", `'\''`) + "'"
}
