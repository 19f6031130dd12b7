package txn

import "time"

// SetFaultHook installs the hook that runs before every step (nil removes
// it), for the tests of package txn_test and the processes they start.
func SetFaultHook(f func(step string) error) { faultHook = f }

// SetLockWait sets how long a commit or recovery waits for the lock and
// returns the previous value.
func SetLockWait(d time.Duration) time.Duration {
	old := lockWait
	lockWait = d
	return old
}
