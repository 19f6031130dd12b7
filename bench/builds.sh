# Sourced by the benchmarks that compare this tree with a base build.
#
#   builds OUT BASE_REV
#
# builds rowkit from this tree into OUT/new and, when BASE_REV is not
# empty, from `git archive BASE_REV` into OUT/base (kept while BASE_REV is
# the same), links the shell names beside each, and sets bins to the
# builds made: (base new) or (new).
builds() {
	local out=$1 rev=$2 b n
	mkdir -p "$out/new" "$out/base"
	go build -o "$out/new/rowkit" ./cmd/rowkit
	bins=(new)
	if [ -n "$rev" ]; then
		if [ ! -x "$out/base/rowkit" ] || [ "$(cat "$out/base/rev" 2>/dev/null)" != "$rev" ]; then
			rm -rf "$out/base/src" && mkdir -p "$out/base/src"
			git archive "$rev" | tar -x -C "$out/base/src"
			(cd "$out/base/src" && go build -o ../rowkit ./cmd/rowkit)
			echo "$rev" >"$out/base/rev"
		fi
		bins=(base new)
	fi
	for b in "${bins[@]}"; do
		for n in hread hpatch inspect_file hgrep; do ln -sf rowkit "$out/$b/$n"; done
	done
}
