package cli

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// drainPatience is how long Drained waits while its reader reads nothing:
// a reader that does not read (hread FILE | sleep 60) must not hold the
// command that long, and an agent's reader on a loaded machine may not be
// scheduled for a while (250 ms was too short for Codex's on two busy
// cores: 3 of 1,000 calls).
const drainPatience = 2 * time.Second

// drainSettle is how long Drained waits once the pipe is read: Codex
// 0.169 reads each pipe in a task of its own that queues what it read,
// 8,192 bytes at a time, for a third task that merges the two queues,
// taking from either at random when both hold something (tokio::select!).
// A pipe read empty may still have chunks queued behind it, and a line
// sent to the other pipe at once could be merged before them (3 to 9 of
// 1,000 calls, on two cores busy with three Codex sessions; none of 1,000
// with this wait).
const drainSettle = 50 * time.Millisecond

// Drained waits until the pipe stdout writes to holds nothing unread, when
// stdout and stderr are two different pipes, so that a line written to
// stderr next reaches a reader of both after everything written to stdout.
// Codex reads a command's stdout and stderr in 8,192-byte chunks, each
// from its own pipe, and shows the model the chunks in the order it got
// them: a diagnostic written at once after 40,000 bytes of rows came
// before the rows' last chunks in 79 to 89 of 200 calls. The pipe tells
// how much of it is unread (FIONREAD, which Linux spells TIOCINQ), so the
// wait ends when the reader has read the rows, and drainSettle later. It
// gives up once the reader has read nothing for drainPatience. On
// anything but two pipes (a terminal, a file, one pipe for both) the
// order is the writes' own, and it returns at once.
func Drained(stdout, stderr *os.File) {
	if stdout == nil || stderr == nil || !otherPipes(stdout, stderr) {
		return
	}
	fd := int(stdout.Fd())
	last, since, pause := -1, time.Now(), 50*time.Microsecond
	for {
		n, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
		if err != nil {
			return
		}
		if n == 0 {
			time.Sleep(drainSettle)
			return
		}
		if n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > drainPatience {
			return
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
	}
}

// otherPipes reports whether a and b are both pipes, and not the same one.
func otherPipes(a, b *os.File) bool {
	var sa, sb unix.Stat_t
	if unix.Fstat(int(a.Fd()), &sa) != nil || unix.Fstat(int(b.Fd()), &sb) != nil {
		return false
	}
	fifo := func(s *unix.Stat_t) bool { return s.Mode&unix.S_IFMT == unix.S_IFIFO }
	return fifo(&sa) && fifo(&sb) && (sa.Dev != sb.Dev || sa.Ino != sb.Ino)
}
