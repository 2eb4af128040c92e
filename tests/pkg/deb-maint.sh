# shellcheck shell=bash
# tests/pkg/deb-maint.sh - sourced by check-deb.sh: the package's maintainer
# scripts run as dpkg runs them, in a minimal root, and what they do to a
# running gateway is checked (not what they say).
#
#   ROOT ($tmp/maint/root): busybox as /bin/sh and its tools, the daemon's
#   shared libraries (the scripts may run rpcrdma-gw itself), and
#   /run/systemd/system (a systemd host).  systemctl, deb-systemd-invoke and
#   deb-systemd-helper are fakes that log every call to
#   /var/log/fake-systemd.log and keep a unit's state in
#   /run/fake-systemd/UNIT: a running gateway is that file, naming the
#   checksum and --version of the binary it was started from.  Starting the
#   service runs ExecStartPre= (--check-config) first, as systemd does: a
#   file the binary refuses leaves the unit stopped.
#   `dpkg --root=ROOT` installs, upgrades, removes and purges; it runs each
#   maintainer script chrooted into ROOT.
#
#   maint_check DEB     needs root (chroot); exit-free: counts ok/bad
#
# Upgrades come from two previous versions, both VERSION~prev (older than
# DEB) and with a binary of another checksum: DEB's own scripts (the next
# upgrade after this one), and the scripts of release 0.1.0
# (tests/pkg/deb-0.1.0/, as debhelper built them), the upgrade a site does now.

MAINT_UNIT=rpcrdma-gw.service

# The fakes, written into the root.  A unit is "active" while
# /run/fake-systemd/UNIT exists, "enabled" while UNIT.enabled does.
maint_fakes() {
	local r=$1
	cat >"$r/usr/bin/systemctl" <<'EOF'
#!/bin/sh
# fake systemctl: logs, and acts on /run/fake-systemd
echo "systemctl $*" >>/var/log/fake-systemd.log
S=/run/fake-systemd
mkdir -p $S
while [ $# -gt 0 ]; do case $1 in --system|--quiet|--no-block|--) shift ;; *) break ;; esac; done
act=$1
shift
start() {
	case $1 in
	rpcrdma-gw.service)	# ExecStartPre=, then the daemon
		/usr/sbin/rpcrdma-gw --check-config /etc/rpcrdma-gw/rpcrdma-gw.conf >>/var/log/fake-systemd.log 2>&1 ||
			{ echo "$1 failed: ExecStartPre" >>/var/log/fake-systemd.log; rm -f "$S/$1"; return 1; }
		{ echo "binary $(md5sum </usr/sbin/rpcrdma-gw | cut -d' ' -f1)"
		  echo "version $(/usr/sbin/rpcrdma-gw --version)"; } >"$S/$1" ;;
	*) echo active >"$S/$1" ;;
	esac
	n=$(cat $S/starts 2>/dev/null || echo 0)
	echo $((n + 1)) >$S/starts
}
rc=0
for u in "$@"; do
	case $act in
	daemon-reload) ;;
	start) [ -e "$S/$u" ] || start "$u" || rc=1 ;;
	restart) rm -f "$S/$u"; start "$u" || rc=1 ;;
	try-restart) [ ! -e "$S/$u" ] || { rm -f "$S/$u"; start "$u"; } || rc=1 ;;
	stop) rm -f "$S/$u" ;;
	is-active) [ -e "$S/$u" ] || rc=3 ;;
	is-enabled) if [ -e "$S/$u.enabled" ]; then echo enabled; else echo disabled; rc=1; fi ;;
	enable) touch "$S/$u.enabled" ;;
	disable) rm -f "$S/$u.enabled" ;;
	*) echo "fake systemctl: $act not faked" >&2; rc=1 ;;
	esac
done
exit $rc
EOF
	cat >"$r/usr/bin/deb-systemd-invoke" <<'EOF'
#!/bin/sh
# fake deb-systemd-invoke: policy-rc.d, then systemctl (start and restart
# only for an enabled or running unit), as init-system-helpers does
echo "deb-systemd-invoke $*" >>/var/log/fake-systemd.log
act=$1
shift
if [ -x /usr/sbin/policy-rc.d ]; then
	for u in "$@"; do /usr/sbin/policy-rc.d "$u" "$act"; [ $? = 101 ] && exit 0; done
fi
case $act in
start|restart)
	for u in "$@"; do
		if systemctl is-enabled "$u" >/dev/null || { [ $act = restart ] && systemctl is-active "$u"; }; then
			systemctl "$act" "$u" || exit 1
		fi
	done ;;
*) exec systemctl "$act" "$@" ;;
esac
EOF
	cat >"$r/usr/bin/deb-systemd-helper" <<'EOF'
#!/bin/sh
# fake deb-systemd-helper: logs; a unit is debian-installed and was-enabled
# while enabled
echo "deb-systemd-helper $*" >>/var/log/fake-systemd.log
[ "$1" = --quiet ] && shift
case $1 in
debian-installed|was-enabled) [ -e "/run/fake-systemd/$2.enabled" ] ;;
*) exit 0 ;;
esac
EOF
	chmod 0755 "$r"/usr/bin/systemctl "$r"/usr/bin/deb-systemd-invoke "$r"/usr/bin/deb-systemd-helper
}

# maint_root DIR BINARY: a minimal root where BINARY (an rpcrdma-gw) runs.
maint_root() {
	local r=$1 lib a
	rm -rf "$r"
	mkdir -p "$r"/var/lib/dpkg/info "$r"/var/lib/dpkg/updates "$r"/var/log "$r"/bin "$r"/usr/bin \
		"$r"/usr/sbin "$r"/run/systemd/system "$r"/dev "$r"/tmp "$r"/etc
	touch "$r"/var/lib/dpkg/status "$r"/var/lib/dpkg/available
	mknod -m 0666 "$r/dev/null" c 1 3 2>/dev/null || : >"$r/dev/null"
	cp "$(command -v busybox)" "$r/bin/busybox"
	for a in sh cat cut echo env false grep head ln md5sum mkdir mv rm rmdir sed sleep tail test \
		touch tr true wc; do
		ln -s busybox "$r/bin/$a"
	done
	# The daemon's libraries, at the paths the loader looks for them.
	for lib in $(ldd "$2" | grep -o '/[^ ]*'); do
		cp -L --parents "$lib" "$r"
	done
	maint_fakes "$r"
}

# maint_repack DEB OUT VERSION [SCRIPTS]: DEB as VERSION, its binary changed
# (one byte more: another checksum), with the maintainer scripts of the
# directory SCRIPTS instead of its own when given.
maint_repack() {
	local d=$tmp/maint/repack f
	rm -rf "$d"
	dpkg-deb -R "$1" "$d"
	sed -i "s/^Version: .*/Version: $3/" "$d/DEBIAN/control"
	printf '\n' >>"$d/usr/sbin/rpcrdma-gw"
	sed -i '\| usr/sbin/rpcrdma-gw$|d' "$d/DEBIAN/md5sums"
	if [ -n "${4:-}" ]; then
		for f in preinst postinst prerm postrm; do
			rm -f "$d/DEBIAN/$f"
			[ -e "$4/$f" ] && install -m 0755 "$4/$f" "$d/DEBIAN/$f"
		done
	fi
	dpkg-deb --root-owner-group -b "$d" "$2" >/dev/null
}

# maint_dpkg WHAT ARGS...: dpkg on the root, its output in $tmp/maint/WHAT.log
maint_dpkg() {
	local what=$1
	shift
	: >"$MR/var/log/fake-systemd.log"
	dpkg --root="$MR" --force-depends --force-confold --force-confdef "$@" >"$tmp/maint/$what.log" 2>&1 ||
		bad "dpkg $* failed (log $tmp/maint/$what.log): $(tail -3 "$tmp/maint/$what.log")"
}
maint_in() { chroot "$MR" "$@"; }
maint_running() { [ -e "$MR/run/fake-systemd/$MAINT_UNIT" ]; }
maint_binary() { md5sum <"$MR/usr/sbin/rpcrdma-gw" | cut -d' ' -f1; }
maint_runs_binary() { grep -qx "binary $(maint_binary)" "$MR/run/fake-systemd/$MAINT_UNIT" 2>/dev/null; }
maint_log() { sed 's/^/      /' "$MR/var/log/fake-systemd.log"; }

# One upgrade from PREV (a .deb) to DEB with a running gateway.
maint_upgrade() {	# LABEL PREV DEB
	local label=$1 old
	maint_root "$MR" "$tmp/root/usr/sbin/rpcrdma-gw"
	maint_dpkg "$label-install" -i "$2"
	if ! maint_running && ! grep -Eq 'systemctl .*(start|restart|enable)|invoke (start|restart)' \
		"$MR/var/log/fake-systemd.log"; then
		ok "$label: a new install neither enables nor starts the gateway"
	else bad "$label: a new install enabled or started something:"; maint_log; fi
	maint_in systemctl enable "$MAINT_UNIT"
	maint_in systemctl start "$MAINT_UNIT"
	old=$(maint_binary)
	maint_dpkg "$label-upgrade" -i "$3"
	if maint_running && maint_runs_binary && [ "$(maint_binary)" != "$old" ]; then
		ok "$label: upgrade: the running gateway runs again, on the new binary ($(grep version "$MR/run/fake-systemd/$MAINT_UNIT"))"
	else
		bad "$label: upgrade: the running gateway is $(maint_running && echo "running the old binary" || echo stopped) after it; calls:"
		maint_log
	fi
}

maint_check() {
	local deb=$1 ver prev
	MR=$tmp/maint/root
	mkdir -p "$tmp/maint"
	if [ "$(id -u)" != 0 ]; then
		echo "!!! SKIPPED: maintainer scripts in a root: needs root (chroot)"
		return
	fi
	command -v busybox >/dev/null || { bad "maintainer scripts: busybox not found (apt-get install busybox-static)"; return; }
	ver=$(dpkg-deb -f "$deb" Version)
	prev=$tmp/maint/prev.deb
	# From release 0.1.0, then from this package's own scripts.
	maint_repack "$deb" "$prev" "$ver~prev" tests/pkg/deb-0.1.0
	maint_upgrade "from 0.1.0" "$prev" "$deb"
	maint_repack "$deb" "$prev" "$ver~prev"
	maint_upgrade "from $ver~prev" "$prev" "$deb"

	# A stopped gateway stays stopped through an upgrade.
	maint_in systemctl stop "$MAINT_UNIT"
	maint_dpkg reinstall-stopped -i "$deb"
	if ! maint_running; then ok "upgrade: a stopped gateway stays stopped"
	else bad "upgrade: a stopped gateway was started:"; maint_log; fi

	# A configuration the new binary refuses: the running gateway is left
	# running (a restart would stop it, then fail its ExecStartPre=), and
	# the upgrade says why.
	maint_in systemctl start "$MAINT_UNIT"
	cp "$MR/etc/rpcrdma-gw/rpcrdma-gw.conf" "$tmp/maint/conf.good"
	printf '[gateway]\nno_such_key = 1\n' >>"$MR/etc/rpcrdma-gw/rpcrdma-gw.conf"
	maint_dpkg reinstall-badconf -i "$deb"
	if maint_running && grep -q 'rpcrdma-gw.conf:[0-9]*: unknown key' "$tmp/maint/reinstall-badconf.log"; then
		ok "upgrade with a configuration the new binary refuses: the gateway keeps running, and dpkg's output names FILE:LINE"
	else
		bad "upgrade with a refused configuration: gateway $(maint_running && echo running || echo stopped); output:"
		grep -v "depends on\\|not installed\\|dependency problems" "$tmp/maint/reinstall-badconf.log" | sed 's/^/      /'; maint_log
	fi
	cp "$tmp/maint/conf.good" "$MR/etc/rpcrdma-gw/rpcrdma-gw.conf"
	maint_running || maint_in systemctl start "$MAINT_UNIT"

	# remove stops it; purge cleans up.
	maint_dpkg remove -r rpcrdma-gw
	if ! maint_running && grep -q "invoke stop.*$MAINT_UNIT" "$MR/var/log/fake-systemd.log"; then
		ok "remove: the gateway is stopped"
	else bad "remove: the gateway is $(maint_running && echo "still running" || echo "stopped, but not by deb-systemd-invoke stop"):"; maint_log; fi
	maint_dpkg purge -P rpcrdma-gw
	if grep -q 'deb-systemd-helper purge rpcrdma-gw.service rpcrdma-gw.socket' "$MR/var/log/fake-systemd.log" &&
		[ ! -e "$MR/etc/rpcrdma-gw" ] && [ ! -e "$MR/usr/sbin/rpcrdma-gw" ] &&
		! grep -q '^Package: rpcrdma-gw' "$MR/var/lib/dpkg/status"; then
		ok "purge: units' state purged, /etc/rpcrdma-gw and the package gone"
	else
		bad "purge left: $(ls -d "$MR"/etc/rpcrdma-gw "$MR"/usr/sbin/rpcrdma-gw 2>/dev/null)"; maint_log
	fi
}
