#!/bin/bash
# Runs the packaging checks and ends with one line `pkg: N passed, N failed`
# (N counts scripts; each prints its own per-check lines).
#   tests/pkg/run.sh [--worktree]   the .deb is built from git HEAD unless --worktree
# Needs: systemd man-db groff-base debhelper dpkg-dev lintian prometheus, and the
# Build-Depends of debian/control.  A missing tool fails (exit 2 of a script).
set -u
cd "$(dirname "$0")"
passed=0 failed=0
for t in check-systemd.sh check-man.sh check-monitoring.sh check-deb.sh; do
	args=()
	[ "$t" = check-deb.sh ] && [ "${1:-}" = --worktree ] && args=(--worktree)
	echo "== tests/pkg/$t"
	if ./"$t" "${args[@]}"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "pkg: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
