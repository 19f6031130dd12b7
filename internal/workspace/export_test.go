package workspace

// SetLookups installs the lookup counter (nil removes it).
func SetLookups(f func(components int)) { lookups = f }
