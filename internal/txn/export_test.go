package txn

import "time"

// SetLockWait sets how long a commit or recovery waits for the lock and
// returns the previous value.
func SetLockWait(d time.Duration) time.Duration {
	old := lockWait
	lockWait = d
	return old
}
