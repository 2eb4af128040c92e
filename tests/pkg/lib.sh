# shellcheck shell=bash
# tests/pkg/lib.sh - what the packaging checks share; sourced by
# tests/pkg/check-*.sh from the repository root:
#   ok / bad        count a check and print its line; pkg_end prints the
#                   script's "NAME: N passed, N failed" and is its status
#   pkg_tmp         $tmp, a fresh directory; on exit the background processes
#                   listed in pids are killed and waited for, and $tmp removed
#   pkg_gw          BUILD, GW (the built daemon) and H (ops-helpers.py); exit 2
#                   when the daemon is not built
#   pkg_need T...   exit 2 naming the first of the tools T not found
# NAME is the script's name without .sh (check-ops).
PKG_NAME=$(basename "$0" .sh)
passed=0 failed=0
pids=()

ok()  { passed=$((passed + 1)); echo "ok:   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

pkg_end() {
	echo "$PKG_NAME: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

pkg_cleanup() {
	if [ "${#pids[@]}" -gt 0 ]; then
		for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
		wait 2>/dev/null
	fi
	rm -rf "$tmp"
}

pkg_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$PKG_NAME.XXXXXX")
	trap pkg_cleanup EXIT
}

pkg_gw() {
	BUILD=${BUILD:-build}
	GW=$BUILD/rpcrdma-gw
	# shellcheck disable=SC2034	# used by the sourcing script
	H=tests/pkg/ops-helpers.py
	[ -x "$GW" ] || { echo "$PKG_NAME: $GW not built (make)"; exit 2; }
}

pkg_need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || { echo "$PKG_NAME: $t not found"; exit 2; }
	done
}
