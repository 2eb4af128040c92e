#!/bin/bash
# Claim: `dpkg-buildpackage -us -uc -b` builds a .deb from a copy of the
# tree, running the unit tests (not with DEB_BUILD_OPTIONS=nocheck, nor with
# DEB_NOCHECK=1, which `make check` sets: its unit tier has just run them), that
# installs the daemon, the units (not enabled, not started), the
# configuration (a conffile: every key commented at its default, accepted by
# --check-config), the man pages and the monitoring files where Debian
# expects them, leaves nothing git would see, and lintian finds no error in it.
#
#   tests/pkg/check-deb.sh [--worktree]
#       default:     build `git archive HEAD` (what CI and a release see; other
#                    engineers' half-written files in the shared tree stay out);
#       --worktree:  build the working tree (tracked + untracked, not ignored).
#   exit 0 all good, 1 a check failed, 2 a tool or build dependency is missing
#   (apt-get install --no-install-recommends debhelper dpkg-dev lintian fakeroot
#    plus debian/control's Build-Depends).
#   KEEP=1 keeps the temp dir.  Logs: $BUILD/test-logs/pkg-deb-*.log.
#
# The tree itself is never written to but for the logs, so this can run
# beside another engineer's `make`.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
LOGDIR=${BUILD:-build}/test-logs
start=$(date +%s)
mode=head
case "${1:-}" in
--worktree) mode=worktree ;;
--head|"") ;;
*) echo "usage: $0 [--worktree]" >&2; exit 2 ;;
esac

. tests/pkg/lib.sh
finish() {
	echo "check-deb: $(( $(date +%s) - start )) s"
	echo "check-deb: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

for t in dpkg-buildpackage dpkg-checkbuilddeps dh lintian dpkg-deb git tar; do
	command -v "$t" >/dev/null || {
		echo "check-deb: $t not found (apt-get install --no-install-recommends debhelper dpkg-dev lintian)"
		exit 2; }
done
if ! out=$(dpkg-checkbuilddeps 2>&1); then
	echo "check-deb: $out"; exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-deb.XXXXXX")
if [ "${KEEP:-}" = 1 ]; then echo "check-deb: temp dir $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
src=$tmp/rpcrdma-gw
mkdir -p "$src" "$LOGDIR"

# 1. A copy of the tree, without build products or .git.
if [ $mode = head ]; then
	git archive HEAD | tar -x -C "$src"
else
	git ls-files -z -c -o --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf - | tar -x -C "$src"
fi
[ -e "$src/debian/control" ] || { bad "no debian/control in the $mode copy"; finish; }
for f in config/rpcrdma-gw.conf docs/operations.md; do
	[ -e "$src/$f" ] || bad "$f missing in the $mode copy: make install or dh_installdocs will fail"
done
# A git repository of the copy, to see what the build leaves behind.
git -C "$src" init -q && git -C "$src" add -A && \
	git -C "$src" -c user.name=t -c user.email=t@t commit -q -m copy || bad "git init of the copy"

# 2. Build.
log=$LOGDIR/pkg-deb-build.log
bstart=$(date +%s)
opts="parallel=$(nproc)${DEB_NOCHECK:+ nocheck}"
if (cd "$src" && DEB_BUILD_OPTIONS="$opts" dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b ($(( $(date +%s) - bstart )) s, log $log)"
else
	bad "dpkg-buildpackage failed (log $log):"
	tail -30 "$log" | sed 's/^/    /'
	finish
fi
deb=$(ls "$tmp"/rpcrdma-gw_*.deb 2>/dev/null | head -1)
changes=$(ls "$tmp"/rpcrdma-gw_*.changes 2>/dev/null | head -1)
[ -n "$deb" ] && [ -n "$changes" ] || { bad "no .deb/.changes in $tmp"; finish; }
ok "built $(basename "$deb")"

left=$(git -C "$src" status --porcelain --ignored=no)
if [ -z "$left" ]; then ok "build leaves nothing git sees (debian/.gitignore, .gitignore)"
else bad "build products git would see:"; echo "$left" | sed 's/^/    /'; fi

# 3. Contents.
dpkg-deb -c "$deb" >"$LOGDIR/pkg-deb-contents.log"
has() {	# PATH [MODE-REGEX]
	if grep -Eq "^${2:-.}[^ ]* .* \.$1( |$)" "$LOGDIR/pkg-deb-contents.log"; then ok "ships $1"; else bad "does not ship $1${2:+ with mode $2}"; fi
}
lacks() {
	if grep -Eq " \.$1( |$)" "$LOGDIR/pkg-deb-contents.log"; then bad "ships $1 ($2)"; else ok "does not ship $1 ($2)"; fi
}
has /usr/sbin/rpcrdma-gw '-rwxr-xr-x'
unitdir=/lib/systemd/system
grep -q ' \./usr/lib/systemd/system/rpcrdma-gw\.service' "$LOGDIR/pkg-deb-contents.log" && unitdir=/usr/lib/systemd/system
has $unitdir/rpcrdma-gw.service '-rw-r--r--'
has $unitdir/rpcrdma-gw.socket '-rw-r--r--'
has /etc/rpcrdma-gw/rpcrdma-gw.conf '-rw-r--r--'
lacks /etc/rpcrdma-gw/rpcrdma-gw.conf.sample "the configuration itself is shipped"
has /usr/share/rpcrdma-gw/rpcrdma-gw-dashboard.json '-rw-r--r--'
has /usr/share/rpcrdma-gw/rpcrdma-gw-rules.yml '-rw-r--r--'
has /usr/share/man/man8/rpcrdma-gw.8.gz
has /usr/share/man/man5/rpcrdma-gw.conf.5.gz
if grep -Eq ' \./usr/s?bin/rpcrdma-gwctl$' "$LOGDIR/pkg-deb-contents.log"; then
	has /usr/share/man/man8/rpcrdma-gwctl.8.gz
else
	lacks /usr/share/man/man8/rpcrdma-gwctl.8.gz "no rpcrdma-gwctl command yet"
fi
has /usr/share/bash-completion/completions/rpcrdma-gwctl '-rw-r--r--'
has /etc/rpcrdma-gw/conf.d/ 'd'
has /usr/share/doc/rpcrdma-gw/copyright
has "/usr/share/doc/rpcrdma-gw/operations\.md(\.gz)?"
lacks /usr/local "nothing under /usr/local"

# 4. The conffile.
ctl=$tmp/control
dpkg-deb -e "$deb" "$ctl"
if grep -qx /etc/rpcrdma-gw/rpcrdma-gw.conf "$ctl/conffiles" 2>/dev/null; then ok "the configuration is a conffile"
else bad "/etc/rpcrdma-gw/rpcrdma-gw.conf not in conffiles"; fi
# 5. The packaged binary runs and agrees with the package version.
x=$tmp/root
dpkg-deb -x "$deb" "$x"
pkgver=$(dpkg-deb -f "$deb" Version)
if v=$("$x/usr/sbin/rpcrdma-gw" --version 2>&1) && [ "$v" = "rpcrdma-gw $pkgver" ]; then
	ok "rpcrdma-gw --version says $pkgver"
else
	bad "rpcrdma-gw --version said '$v', package version is $pkgver (debian/changelog)"
fi

# The shipped configuration is config/rpcrdma-gw.conf (which test_cfg_keys
# holds to the key table: every key, commented, at its default) and the
# packaged daemon accepts it.
if cmp -s "$x/etc/rpcrdma-gw/rpcrdma-gw.conf" "$src/config/rpcrdma-gw.conf"; then
	ok "/etc/rpcrdma-gw/rpcrdma-gw.conf is config/rpcrdma-gw.conf"
else bad "/etc/rpcrdma-gw/rpcrdma-gw.conf differs from config/rpcrdma-gw.conf"; fi
if v=$("$x/usr/sbin/rpcrdma-gw" --check-config "$x/etc/rpcrdma-gw/rpcrdma-gw.conf" 2>&1) &&
	[ "$v" = "configuration OK" ]; then ok "rpcrdma-gw --check-config accepts the shipped configuration"
else bad "rpcrdma-gw --check-config on the shipped configuration: $v"; fi
nkeys=$(grep -c '^;\?[a-z_]* = ' "$x/etc/rpcrdma-gw/rpcrdma-gw.conf")
nopen=$(grep -c '^[a-z_]* = ' "$x/etc/rpcrdma-gw/rpcrdma-gw.conf")
if [ "$nopen" -le 1 ] && [ "$nkeys" -ge 30 ]; then ok "shipped configuration: $nkeys key lines, $nopen set (the backend address)"
else bad "shipped configuration: $nkeys key lines, $nopen set (want >= 30, and only the backend address set)"; fi

# 5b. The maintainer scripts, run by dpkg in a minimal root with a fake
# systemd (tests/pkg/deb-maint.sh): install neither enables nor starts;
# upgrade restarts a running gateway on the new binary (unless the new
# binary refuses the configuration: then it keeps running), leaves a
# stopped one stopped; remove stops it; purge cleans up.
. tests/pkg/deb-maint.sh
maint_check "$deb"

# 6. The unit tests ran in the build (with DEB_NOCHECK: the rules would run
# them); DEB_BUILD_OPTIONS=nocheck skips them.
if [ -n "${DEB_NOCHECK:-}" ]; then
	if out=$(cd "$src" && DEB_BUILD_OPTIONS= make -s -n -f debian/rules override_dh_auto_test 2>&1) &&
		echo "$out" | grep -q 'make.* unit'; then
		ok "dh_auto_test would run the unit tests (not run here: DEB_NOCHECK, make check's unit tier ran them)"
	else bad "override_dh_auto_test would not run the unit tests: $out"; fi
elif grep -Eq '^check: [1-9][0-9]* passed, 0 failed' "$log"; then
	ok "dh_auto_test ran the unit tests: $(grep -E '^check: ' "$log" | tail -1)"
else bad "no 'check: N passed, 0 failed' of make unit in the build log $log"; fi
if out=$(cd "$src" && DEB_BUILD_OPTIONS=nocheck make -s -n -f debian/rules override_dh_auto_test 2>&1) &&
	! echo "$out" | grep -q 'make unit\|MAKE' && echo "$out" | grep -q nocheck; then
	ok "DEB_BUILD_OPTIONS=nocheck: override_dh_auto_test runs no test"
else bad "DEB_BUILD_OPTIONS=nocheck: override_dh_auto_test would run: $out"; fi

# 7. lintian: no error; warnings are printed, not fatal.
llog=$LOGDIR/pkg-deb-lintian.log
lintian --fail-on error --info --display-info "$changes" >"$llog" 2>&1
lrc=$?
nerr=$(grep -c '^E: ' "$llog")
nwarn=$(grep -c '^W: ' "$llog")
if [ "$lrc" -eq 0 ] && [ "$nerr" -eq 0 ]; then ok "lintian: 0 errors, $nwarn warnings (log $llog)"
else bad "lintian: rc=$lrc, $nerr errors (log $llog):"; grep -v '^[WIPNX]: ' "$llog" | sed 's/^/    /'; fi
grep -E '^[WI]: ' "$llog" | sed 's/^/    lintian /'

finish
