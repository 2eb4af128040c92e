# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# This file contains the test bed and the assertion helpers that VM scenarios
# (tests/vm/t_NN_name.sh) source.  It runs only inside the guest that
# tests/vm/run-vm.sh boots: it rewrites /etc/exports, mounts tmpfs file
# systems and adds network devices, so it refuses to run anywhere else.
#
# The bed, all inside one guest, nothing on any other address:
#
#     d0 (dummy netdev, 10.99.0.1/24)
#      |
#     rxe0 (Soft-RoCE on d0)  <-- verbs / rdma_cm for user space and the kernel
#      |
#     nfsd: tcp 2049, rdma 20049, exporting the tmpfs /srv/nfs (fsid=0)
#
# Sourcing this file turns on `set -euo pipefail`, prints the scenario's
# claim (its second line) and, on exit, one line "PASS: claim" or
# "FAIL (exit N): claim"; a command failing under set -e names its line.
#
# Helpers (each prints what failed and returns 1, which ends the scenario):
#   bed_rdma_up            dummy netdev d0 + rxe0, waits until usable
#   bed_nfsd_up            bed_rdma_up + nfsd on tcp 2049 and rdma 20049
#   bed_nfs_client_modules load the kernel NFS client (nfs, nfsv3, nfsv4)
#   bed_wait SECS DESC CMD...   retry CMD every 0.2 s until it succeeds
#   bed_poll SECS CMD...   the same, quiet, 1 on timeout; bed_gone PID for it
#   step MSG               print MSG with the guest uptime (timing in logs)
#   assert_eq EXPECTED ACTUAL WHAT
#   assert_file_sum FILE SHA256
#   assert_same_file A B
#   assert_grep PATTERN FILE
#   assert_mount_opt MOUNTPOINT OPTION...   e.g. proto=rdma port=20049
#   bed_netns NAME ROOT-ADDR NS-ADDR...   a namespace behind a veth (raw NLM hosts)
#
# The gateway (section "the gateway of the end-to-end scenarios" below):
#   gw_start PORT OUTDIR [SECTION.KEY=VALUE...]   start it, stopped at exit
#   gw_mount VERS MNT [OPTION...]   kernel NFS mount through it
#   gw_stop, gw_alive       a clean SIGTERM exit; still running
#   gw_log_clean [PROBLEM...]   no sanitizer report (or PROBLEM) in its log
#   gw_spread_check [MIN]   with GW_WORKERS > 1: every worker forwarded MIN calls

set -euo pipefail

if [ "${VM_GUEST:-}" != 1 ] || [ "$(stat -f -c %T / 2>/dev/null)" != overlayfs ]; then
	echo "${0##*/}: runs only in the test guest: tests/vm/run-vm.sh ${0#"$PWD"/}" >&2
	exit 2
fi

BED_NETDEV=d0
BED_IP=10.99.0.1
BED_PREFIX=24
BED_RDMA_DEV=rxe0
BED_EXPORT=/srv/nfs
BED_NFS_PORT=2049
BED_RDMA_PORT=20049

BED_CLAIM=$(sed -n '2s/^# *claim: *//p' "$0")
: "${BED_CLAIM:=${0##*/} (no claim line)}"

# Guest uptime in seconds: cheap, monotonic, the same clock as the kernel log.
# The helpers below that run often (step, bed_wait, bed_sleep, gw_running)
# use shell builtins only: under TCG one fork and exec costs 40-100 ms, and a
# scenario calls them hundreds of times.
bed_now() { local s; read -r s _ </proc/uptime; echo "$s"; }
# bed_now_cs: the uptime in centiseconds (/proc/uptime has two decimals) in
# BED_NOW_CS, without a subshell.
bed_now_cs() {
	local s
	read -r s _ </proc/uptime
	BED_NOW_CS=$((10#${s%.*} * 100 + 10#${s#*.}))
}
bed_now_cs
BED_T0_CS=$BED_NOW_CS
# bed_sleep SECS: sleep without starting a process (a read that times out on
# a pipe that nobody writes: this shell holds its only write end).
exec {BED_SLEEP_FD}<> <(:)
bed_sleep() { read -r -t "$1" -u "$BED_SLEEP_FD" _ || true; }

step() {
	local d
	bed_now_cs
	d=$((BED_NOW_CS - BED_T0_CS))
	printf '[%4d.%02d s] %s\n' $((d / 100)) $((d % 100)) "$*"
}

bed_fail() {
	echo "FAIL: $*" >&2
	BED_FAIL_SAID=1
	return 1
}

# First failing command under set -e: say what failed (unless an assertion
# already did) and where, from the scenario's line inwards.
bed_on_err() {
	local rc=$? i where=""
	[ -z "${BED_ERR_SHOWN:-}" ] || return 0
	BED_ERR_SHOWN=1
	for ((i = ${#BASH_SOURCE[@]} - 1; i >= 1; i--)); do
		where+="${where:+ > }${BASH_SOURCE[i]##*/}:${BASH_LINENO[i - 1]}"
	done
	if [ -z "${BED_FAIL_SAID:-}" ]; then
		echo "FAIL: command failed (exit $rc): $BASH_COMMAND" >&2
	fi
	echo "  at $where" >&2
}

bed_on_exit() {
	local rc=$?
	trap - ERR
	if [ "$rc" -eq 0 ]; then
		step "PASS: $BED_CLAIM"
	else
		step "FAIL (exit $rc): $BED_CLAIM"
	fi
	return "$rc"
}
trap bed_on_exit EXIT
trap bed_on_err ERR
set -o errtrace

echo "claim: $BED_CLAIM"

# bed_wait SECS DESC CMD... : retries CMD (quietly) until it succeeds.
bed_wait() {
	local secs=$1 what=$2
	shift 2
	bed_poll "$secs" "$@" || bed_fail "timed out after $secs s waiting for $what"
}
# bed_poll SECS CMD... : the same retries, quiet: 1 when SECS pass first
# (for a wait whose timeout is an answer, not a failure).
bed_poll() {
	local end
	bed_now_cs
	end=$((BED_NOW_CS + $1 * 100))
	shift
	until "$@" >/dev/null 2>&1; do
		bed_now_cs
		[ "$BED_NOW_CS" -le "$end" ] || return 1
		bed_sleep 0.2
	done
}
# bed_gone PID: process PID has ended (for bed_poll).
bed_gone() { ! kill -0 "$1" 2>/dev/null; }

# --- assertions -------------------------------------------------------------

assert_eq() {
	[ "$1" = "$2" ] || bed_fail "${3:-values}: expected '$1', got '$2'"
}

assert_file_sum() {
	local got
	got=$(sha256sum "$1" | cut -d' ' -f1) || bed_fail "cannot read $1" || return 1
	[ "$got" = "$2" ] || bed_fail "sha256 of $1: expected $2, got $got"
}

assert_same_file() {
	local a b
	a=$(sha256sum "$1" | cut -d' ' -f1) || bed_fail "cannot read $1" || return 1
	b=$(sha256sum "$2" | cut -d' ' -f1) || bed_fail "cannot read $2" || return 1
	[ "$a" = "$b" ] || bed_fail "$1 ($a) and $2 ($b) differ"
}

assert_grep() {
	grep -q -e "$1" "$2" || {
		bed_fail "no line matching '$1' in $2; it holds:"
		head -20 "$2" | sed 's/^/    /' >&2
		return 1
	}
}

# assert_mount_opt MOUNTPOINT OPTION... : each OPTION is one of the mount's
# comma-separated options in /proc/mounts.
assert_mount_opt() {
	local mnt=$1 line opt
	shift
	line=$(awk -v m="$mnt" '$2 == m { l = $0 } END { print l }' /proc/mounts)
	[ -n "$line" ] || bed_fail "$mnt is not mounted" || return 1
	for opt in "$@"; do
		case ",$(echo "$line" | cut -d' ' -f4)," in
		*",$opt,"*) ;;
		*) bed_fail "$mnt lacks mount option $opt: $line" || return 1 ;;
		esac
	done
}

# --- the bed ------------------------------------------------------------------

# bed_modules_start VAR MODULE...: loads MODULEs in the background and puts
# the loader's pid in VAR. Each modprobe chain takes seconds in the guest;
# run one beside the next step instead of in series.
bed_modules_start() {
	local var=$1
	shift
	modprobe -a "$@" &
	printf -v "$var" '%s' "$!"
}

# bed_modules_wait VAR: waits for the load bed_modules_start began (if any).
bed_modules_wait() {
	local pid=${!1:-}
	[ -n "$pid" ] || return 0
	printf -v "$1" '%s' ''
	wait "$pid" || bed_fail "modprobe (pid $pid) failed"
}

bed_rdma_ready() {
	rdma link show "$BED_RDMA_DEV/1" | grep -q 'state ACTIVE' &&
		ibv_devices | grep -qw "$BED_RDMA_DEV"
}

bed_rdma_up() {
	if bed_rdma_ready 2>/dev/null; then
		return 0
	fi
	step "bed: $BED_NETDEV (dummy) $BED_IP/$BED_PREFIX + $BED_RDMA_DEV (rdma_rxe)"
	ip link add "$BED_NETDEV" type dummy
	# BED_MTU (default 1500): Soft-RoCE's path MTU follows it (9000 -> 4096).
	ip link set "$BED_NETDEV" mtu "${BED_MTU:-1500}" up
	ip addr add "$BED_IP/$BED_PREFIX" dev "$BED_NETDEV"
	modprobe rdma_rxe
	rdma link add "$BED_RDMA_DEV" type rxe netdev "$BED_NETDEV"
	bed_wait 20 "$BED_RDMA_DEV ACTIVE in 'rdma link' and listed by ibv_devices" bed_rdma_ready
}

bed_nfsd_ready() {
	grep -qx "rdma $BED_RDMA_PORT" /proc/fs/nfsd/portlist &&
		grep -qx "tcp $BED_NFS_PORT" /proc/fs/nfsd/portlist &&
		rpcinfo -p 127.0.0.1 | grep -q nfs
}

# bed_krb5_up OUT REALM HOST: an MIT KDC for REALM on 127.0.0.1:88, the
# guest named HOST (127.0.0.1 in /etc/hosts), a keytab with nfs/HOST, and
# rpc.svcgssd (nfsd's side) and rpc.gssd (the kernel client's) running;
# their logs in OUT (the Kerberos bed of t_74 and t_84).
bed_krb5_up() {
	local out=$1 REALM=$2 HOST=$3
	step "bed: MIT KDC for $REALM, keytab nfs/$HOST, rpc.gssd + rpc.svcgssd + rpc.idmapd"
	for b in krb5kdc kdb5_util kadmin.local rpc.gssd rpc.svcgssd rpc.idmapd; do
		command -v "$b" >/dev/null || bed_fail "$b missing (make deps installs krb5-kdc, krb5-admin-server)" ||
			return 1
	done
	hostname "$HOST"
	sed -i "1i 127.0.0.1 $HOST" /etc/hosts
	cat >/etc/krb5.conf <<-CONF
	[libdefaults]
	    default_realm = $REALM
	    dns_lookup_kdc = false
	    dns_lookup_realm = false
	    dns_canonicalize_hostname = false
	    rdns = false
	[realms]
	    $REALM = {
	        kdc = 127.0.0.1
	        admin_server = 127.0.0.1
	    }
	[domain_realm]
	    .test = $REALM
	    $HOST = $REALM
	CONF
	mkdir -p /etc/krb5kdc /var/lib/krb5kdc
	cat >/etc/krb5kdc/kdc.conf <<-CONF
	[realms]
	    $REALM = {
	        database_name = /var/lib/krb5kdc/principal
	        key_stash_file = /etc/krb5kdc/stash
	    }
	CONF
	rm -f /etc/krb5.keytab
	kdb5_util create -s -r "$REALM" -P gw-test-master >"$out/kdb.log" 2>&1 ||
		{ cat "$out/kdb.log"; bed_fail "kdb5_util create"; return 1; }
	kadmin.local -q "addprinc -randkey nfs/$HOST" >>"$out/kdb.log" 2>&1
	kadmin.local -q "ktadd -k /etc/krb5.keytab nfs/$HOST" >>"$out/kdb.log" 2>&1
	klist -k /etc/krb5.keytab | grep -q "nfs/$HOST@$REALM" || bed_fail "keytab lacks nfs/$HOST" || return 1
	krb5kdc -P "$out/kdc.pid" || bed_fail "krb5kdc did not start" || return 1
	modprobe auth_rpcgss
	modprobe rpcsec_gss_krb5
	mkdir -p /run/rpc_pipefs
	mountpoint -q /run/rpc_pipefs || mount -t rpc_pipefs sunrpc /run/rpc_pipefs
	printf '[General]\nDomain = gw.test\n' >/etc/idmapd.conf
	rpc.svcgssd -f -v -p "nfs/$HOST@$REALM" >"$out/svcgssd.log" 2>&1 &
	rpc.gssd -f -v -v >"$out/gssd.log" 2>&1 &
	sleep 1
}


bed_nfsd_up() {
	if [ -e /proc/fs/nfsd/portlist ] && bed_nfsd_ready 2>/dev/null; then
		return 0
	fi
	bed_modules_start BED_NFSD_MODS nfsd rpcrdma lockd
	bed_rdma_up
	bed_modules_wait BED_NFSD_MODS
	step "bed: nfsd exporting tmpfs $BED_EXPORT on tcp $BED_NFS_PORT and rdma $BED_RDMA_PORT"
	# overlayfs cannot be exported; a tmpfs can.
	mkdir -p "$BED_EXPORT"
	mount -t tmpfs -o size=512m,mode=0777 bed-nfs "$BED_EXPORT"
	echo "$BED_EXPORT *(rw,fsid=0,no_root_squash,insecure,no_subtree_check,sync)" >/etc/exports
	# The client's modules load while nfsd starts (bed_nfs_client_modules).
	bed_modules_start BED_CLIENT_MODS nfs nfsv3 nfsv4 rpcrdma
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	# Short NFSv4 lease and grace (only settable before nfsd starts): a
	# fresh server otherwise holds OPENs back for 90 s.
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	# lockd's grace (read when nfsd starts lockd; default 5 x nlm_timeout,
	# 50 s) also holds back NFSv4 LOCKs and delegations: 10 s like nfsd's.
	sysctl -qw fs.nfs.nlm_grace_period=10
	# A scenario may raise nfsd's largest READ/WRITE (settable only before
	# nfsd starts; by default sized from the guest's memory: 256 KiB).
	[ -z "${BED_NFSD_MAX_BLOCK:-}" ] || echo "$BED_NFSD_MAX_BLOCK" >/proc/fs/nfsd/max_block_size
	# No systemd in the guest: the daemons are started by hand.
	rpcbind -w
	exportfs -ra
	rpc.mountd
	rpc.nfsd 4
	echo "rdma $BED_RDMA_PORT" >/proc/fs/nfsd/portlist
	bed_wait 30 "nfsd on tcp $BED_NFS_PORT + rdma $BED_RDMA_PORT, registered with rpcbind" \
		bed_nfsd_ready
}

# Without these, mount -t nfs fails with "No such device".
bed_nfs_client_modules() {
	bed_modules_wait BED_CLIENT_MODS
	modprobe -a nfs nfsv3 nfsv4 rpcrdma
}

# bed_haproxy_cfg PORT FILE: the configuration of HAProxy (mode tcp) on
# $BED_IP:PORT to nfsd's TCP port; HAPROXY_NBTHREAD=N sets its threads
# (default: HAProxy's own, one per CPU).
bed_haproxy_cfg() {
	local nb=
	[ -z "${HAPROXY_NBTHREAD:-}" ] || printf -v nb '\tnbthread %s\n' "$HAPROXY_NBTHREAD"
	printf 'global\n\tmaxconn 256\n%sdefaults\n\tmode tcp\n\ttimeout connect 5s\n\ttimeout client 1h\n\ttimeout server 1h\nlisten nfs\n\tbind %s:%s\n\tserver nfsd %s:%s\n' \
		"$nb" "$BED_IP" "$1" "$BED_IP" "$BED_NFS_PORT" >"$2"
}
# bed_haproxy PORT DIR: HAProxy on $BED_IP:PORT (bed_haproxy_cfg), the
# benchmarks' plain proxy (config DIR/haproxy.cfg, pid in DIR/haproxy.pid);
# returns once its pid file is written.
bed_haproxy() {
	bed_haproxy_cfg "$1" "$2/haproxy.cfg"
	haproxy -D -f "$2/haproxy.cfg" -p "$2/haproxy.pid" || { echo "bed: haproxy did not start" >&2; return 1; }
	bed_wait 10 "haproxy's pid file" test -s "$2/haproxy.pid"
}

# ---- the gateway of the end-to-end scenarios --------------------------------
# gw_start PORT OUTDIR [SECTION.KEY=VALUE...]: rpcrdma-gw on 127.0.0.1:PORT
# with the NFS route to the bed's nfsd over RDMA (or TCP: nfs.transport=tcp)
# and MOUNT over TCP, log in OUTDIR/gw.log; returns once the NFS path is up.
# Options add or override config lines: SECTION is gateway, backend, nfs,
# mount or the name of another route (nlm, nsm: [route NAME] program = NAME),
# e.g. gateway.log_level=debug, backend.port=2049, nlm.transport=tcp;
# backend_NAME.KEY=VALUE adds a second backend, [backend NAME], for a route's
# NAME.backend=NAME (t_80); gateway.listen=ADDR:PORT replaces 127.0.0.1:PORT
# (and, with GW_WORKERS > 1, the other gw_addrs).  Core
# dumps go to the run folder (kept with VM_KEEP=1:
# gdb build/rpcrdma-gw RUN/core.rpcrdma-gw.PID).  Sets gw_port for gw_mount.
#
# gw_stop: runs at exit (before bed_on_exit) and keeps the script's status;
# may also be called as a step.  It fails (and prints the log tail) unless
# the gateway is still alive when asked to stop and then exits with status
# $gw_expect (default 0: SIGTERM is a clean shutdown) within 30 s,
# so a crash anywhere in a scenario fails it.  gw_alive asserts the same
# in the middle of a scenario.
gw_pid=
gw_out=
gw_log_tail() {
	tail -"${1:-30}" "$gw_out/gw.log" 2>/dev/null | sed 's/^/  gw: /' || true
}
gw_running() {
	local st
	kill -0 "$gw_pid" 2>/dev/null || return 1
	# kill -0 succeeds on a zombie: a crashed child not yet reaped
	st=
	{ read -r st <"/proc/$gw_pid/stat"; } 2>/dev/null || true
	st=${st##*) }	# the state follows the command name's ")"
	st=${st%% *}
	[ -n "$st" ] && [ "$st" != Z ]
}
gw_exited() { ! gw_running; }	# for bed_poll
# Explains a status of the gateway; returns 1.
gw_died() {
	local st=$1 what=$2 sig core
	if [ "$st" -gt 128 ]; then
		sig=$(kill -l $((st - 128)) 2>/dev/null || echo "?")
		bed_fail "the gateway $what: killed by signal $((st - 128)) (SIG$sig), status $st" || true
	else
		bed_fail "the gateway $what: exit status $st" || true
	fi
	gw_log_tail 40 >&2
	for core in /run/vm/core.*; do
		[ -e "$core" ] && echo "  core dump: $core (VM_KEEP=1 keeps it)" >&2
	done
	return 1
}
gw_alive() {
	local st=0
	[ -n "$gw_pid" ] || return 0
	gw_running && return 0
	wait "$gw_pid" || st=$?
	gw_pid=
	gw_died "$st" "died before it was asked to stop"
}
gw_stop() {
	local rc=$? want=${gw_expect:-0} st=0
	if [ "$rc" != 0 ] && [ -n "$gw_out" ]; then
		echo w >/proc/sysrq-trigger 2>/dev/null || true
		grep -h 'xprt:\|mounted on' /proc/self/mountstats 2>/dev/null | sed 's/^/  /' || true
		gw_log_tail 30
	fi
	[ -n "$gw_pid" ] || return "$rc"
	if ! gw_running; then
		wait "$gw_pid" || st=$?
		gw_pid=
		gw_died "$st" "died before it was asked to stop" || rc=1
		return "$rc"
	fi
	kill -TERM "$gw_pid" 2>/dev/null || true
	if ! bed_poll 30 gw_exited; then
		kill -KILL "$gw_pid" 2>/dev/null || true
		wait "$gw_pid" 2>/dev/null || true
		gw_pid=
		bed_fail "the gateway did not exit within 30 s of SIGTERM (killed)" || true
		gw_log_tail 40 >&2
		return 1
	fi
	wait "$gw_pid" || st=$?
	gw_pid=
	if [ "$st" != "$want" ]; then
		gw_died "$st" "stopped badly (expected status $want)" || rc=1
	fi
	return "$rc"
}
# ---- clients spread over the workers (GW_WORKERS > 1) ------------------------
# Every client in the guest would connect from 127.0.0.1, and gw_worker_pick
# (gateway/worker.c) hashes the source address, so with workers = N all of
# them would land on one worker.  gw_addrs holds one loopback address per
# worker (127.0.0.1 first, then the lowest 127.0.0.K for each other worker);
# gw_conf makes the gateway listen on each, and gw_mount takes them in turn.
# A local route per address with itself as `src` makes a connection TO
# 127.0.0.K come FROM 127.0.0.K (127.0.0.0/8's route has src 127.0.0.1).
gw_addrs=(127.0.0.1)
gw_nmounts=0
# gw_pick ADDR N: the worker of IPv4 ADDR, FNV-1a of its 4 bytes mod N, as
# gw_worker_pick computes it.
gw_pick() {
	local IFS=. b h=2166136261
	for b in $1; do h=$((((h ^ b) * 16777619) & 0xffffffff)); done
	echo $((h % $2))
}
gw_spread_addrs() {
	local n=${GW_WORKERS:-1} k w
	local -A seen=()
	gw_addrs=(127.0.0.1)
	[ "$n" -gt 1 ] 2>/dev/null || return 0
	seen[$(gw_pick 127.0.0.1 "$n")]=1
	for ((k = 2; k < 255 && ${#seen[@]} < n; k++)); do
		w=$(gw_pick "127.0.0.$k" "$n")
		[ -z "${seen[$w]:-}" ] || continue
		seen[$w]=1
		gw_addrs+=("127.0.0.$k")
	done
}
gw_spread_addrs
# gw_spread_up: the per-address local routes (idempotent).
gw_spread_up() {
	local a
	for a in "${gw_addrs[@]:1}"; do
		ip route replace local "$a" dev lo proto kernel scope host src "$a" table local
	done
}
# gw_spread_check [MIN]: with GW_WORKERS > 1, every worker forwarded at
# least MIN (1) calls (calls_forwarded_total{worker=...} on /metrics):
# clients of the scenario reached all workers, not one.
gw_spread_check() {
	local min=${1:-1} n=${GW_WORKERS:-1} w v line='' low=''
	[ "$n" -gt 1 ] 2>/dev/null || return 0
	for ((w = 0; w < n; w++)); do
		v=$(gw_metric "rpcrdma_gw_calls_forwarded_total{worker=\"$w\"}") || return 1
		line+=" worker $w: $v,"
		[ "$v" -ge "$min" ] || low+=" $w"
	done
	step "calls forwarded per worker:${line%,}"
	[ -z "$low" ] ||
		bed_fail "worker(s)$low of $n forwarded fewer than $min calls: the clients did not spread over the workers"
}

# gw_conf PORT OUTDIR [SECTION.KEY=VALUE...]: only writes OUTDIR/gw.conf as
# gw_start would (for --check-config before the start).  secure_port = no
# unless gateway.secure_port is given: the scenarios' python and libnfs
# clients connect from ordinary ports (the kernel client and gw-fragclient
# bind reserved ones; t_72 and t_73 run with secure_port = yes).
gw_nfs_tp=rdma
gw_port=
gw_conf() {
	local port=$1 out=$2 opt sec kv
	local -a routes=() backends=()
	local -A extra=()
	shift 2
	gw_nfs_tp=rdma
	for opt in "$@"; do
		sec=${opt%%.*}
		kv=${opt#*.}
		case "$sec" in
		gateway | backend | nfs | mount) ;;
		backend_*[!a-z0-9_]* | backend_) bed_fail "gw_conf: option $opt: no backend name"; return 1 ;;
		backend_*) [ -n "${extra[$sec]+set}" ] || backends+=("$sec") ;;
		*[!a-z0-9_]* | "") bed_fail "gw_conf: option $opt: no SECTION.KEY=VALUE"; return 1 ;;
		*) [ -n "${extra[$sec]+set}" ] || routes+=("$sec") ;;
		esac
		case "$opt" in
		nfs.transport=tcp) gw_nfs_tp=tcp; continue ;;
		nfs.transport=rdma) continue ;;
		esac
		extra[$sec]+="${kv%%=*} = ${kv#*=}"$'\n'
	done
	{
		printf '[gateway]\n'
		case $'\n'"${extra[gateway]:-}" in
		*$'\n'"listen = "*) ;;
		*) printf 'listen = %s:'"$port"'\n' "${gw_addrs[@]}" ;;
		esac
		printf '%s' "${extra[gateway]:-}"
		# One event loop unless GW_WORKERS=N (check.sh's workers pass)
		# or the scenario's own workers = says otherwise: the default,
		# one per core, would put the guest's scenarios on two.
		case "${extra[gateway]:-}" in
		*workers*) ;;
		*) printf 'workers = %s\n' "${GW_WORKERS:-1}" ;;
		esac
		case "${extra[gateway]:-}" in
		*secure_port*) ;;
		*) printf 'secure_port = no\n' ;;
		esac
		printf '[backend nfsd]\naddress = %s\n%s' "$BED_IP" "${extra[backend]:-}"
		for sec in "${backends[@]}"; do
			printf '[backend %s]\n%s' "${sec#backend_}" "${extra[$sec]}"
		done
		printf '[route nfs]\nprogram = nfs\n'
		printf 'transport = %s\n' "$gw_nfs_tp"
		printf '%s' "${extra[nfs]:-}"
		printf '[route mount]\nprogram = mount\ntransport = tcp\n%s' "${extra[mount]:-}"
		for sec in "${routes[@]}"; do
			printf '[route %s]\nprogram = %s\n%s' "$sec" "$sec" "${extra[$sec]}"
		done
	} >"$out/gw.conf"
}
gw_start() {
	gw_port=$1
	gw_out=$2
	shift 2
	gw_conf "$gw_port" "$gw_out" "$@"
	gw_run "127.0.0.1:$gw_port (nfs over $gw_nfs_tp, mount over tcp${*:+; $*})" \
		"path nfs/nfsd: transport $gw_nfs_tp up"
}
# gw_start_checked PORT OUT OPT...: gw_start once `rpcrdma-gw --check-config`
# has said the same configuration is OK; returns when it listens on PORT.
gw_start_checked() {
	local port=$1 out=$2
	gw_conf "$@"
	step "rpcrdma-gw --check-config"
	assert_eq "configuration OK" "$("${BUILD:-build}/rpcrdma-gw" --check-config "$out/gw.conf")" \
		"check-config output"
	gw_start "$@"
	bed_wait 10 "the gateway listening" sh -c "ss -ltn | grep -q ':$port '"
}
# gw_rw_files: 4 MiB of random data on the server's tmpfs (server.bin, its
# sha256 in gw_rw_sum) and 4 MiB for a client to write (/tmp/client.bin).
gw_rw_files() {
	step "write $((4)) MiB of random data on the server's tmpfs"
	head -c $((4 << 20)) /dev/urandom >"$BED_EXPORT/server.bin"
	gw_rw_sum=$(sha256sum "$BED_EXPORT/server.bin" | cut -d' ' -f1)
	head -c $((4 << 20)) /dev/urandom >/tmp/client.bin
}
# gw_rw_check VERS MNT: a vers=VERS mount of the gateway (nolock) reads
# gw_rw_files' server.bin with its sha256 and writes /tmp/client.bin, equal
# on the server once unmounted.
gw_rw_check() {
	local vers=$1 mnt=$2
	gw_mount "$vers" "$mnt" nolock
	grep " $mnt " /proc/mounts | sed 's/^/  /'
	assert_mount_opt "$mnt" "vers=$vers" proto=tcp "port=$gw_port"

	step "read through the gateway (vers=$vers)"
	assert_file_sum "$mnt/server.bin" "$gw_rw_sum"

	step "write through the gateway (vers=$vers), compare on the server side"
	cp /tmp/client.bin "$mnt/client-v$vers.bin"
	sync
	timeout 60 umount "$mnt"
	assert_same_file /tmp/client.bin "$BED_EXPORT/client-v$vers.bin"
}
# gw_run WHAT READY-LINE: rpcrdma-gw -c $gw_out/gw.conf in the background
# (gw_pid; core dumps into the run folder; gw_stop at exit), until its log
# shows READY-LINE.
gw_run() {
	if [ -d /run/vm ]; then
		ulimit -c unlimited
		echo "/run/vm/core.%e.%p" >/proc/sys/kernel/core_pattern
	fi
	step "start rpcrdma-gw on $1"
	# GW_NETNS=NAME: in network namespace NAME (ip netns add), the rest
	# of the guest's namespaces shared (an edge host, t_76).
	${GW_NETNS:+nsenter --net=/run/netns/$GW_NETNS} \
		"${BUILD:-build}/rpcrdma-gw" -c "$gw_out/gw.conf" >"$gw_out/gw.log" 2>&1 &
	gw_pid=$!
	trap 'gw_stop; bed_on_exit' EXIT
	# (a failure here shows the log tail through gw_stop at exit)
	bed_wait 30 "the gateway's NFS path up ($2)" grep -q "$2" "$gw_out/gw.log"
	gw_alive
}

# ---- NLM through the gateway (t_68) -----------------------------------------
# bed_lockd_pin PORT: the kernel lockd listens on TCP and UDP PORT instead of
# a port rpcbind hands out, so a gateway route can name it.  Call BEFORE
# bed_nfsd_up: lockd reads the port when nfsd starts it.  Also a 10 s lockd
# grace period (default: 90 s of DENIED_GRACE_PERIOD after start).
bed_lockd_pin() {
	modprobe lockd
	sysctl -qw fs.nfs.nlm_tcpport="$1" fs.nfs.nlm_udpport="$1" fs.nfs.nlm_grace_period=10
}

# bed_nlm_server PORT [statd]: the server of the raw NLM scenarios (t_77,
# t_80, t_81, t_82): lockd pinned to PORT, nfsd up and, with statd, the
# server's rpc.statd registered (its lockd monitors every lock holder through
# it; no notification at start).
bed_nlm_server() {
	bed_lockd_pin "$1"
	bed_nfsd_up
	[ "${2:-}" = statd ] || return 0
	step "rpc.statd (the server's lockd monitors every lock holder through it)"
	rpc.statd --no-notify
	bed_wait 20 "statd registered with rpcbind" sh -c 'rpcinfo -p 127.0.0.1 | grep -q status'
}

# bed_netns NAME ROOT-ADDR NS-ADDR...: network namespace NAME behind a veth
# pair, ROOT-ADDR/24 on the root side (its default route), NS-ADDR/24 inside
# (t_80, t_81: hosts of their own for raw clients and the gateway).
bed_netns() {
	local name=$1 root=$2 a
	shift 2
	ip netns add "$name"
	ip link add "v$name" type veth peer name "p$name"
	ip link set "p$name" netns "$name"
	ip addr add "$root/24" dev "v$name"
	ip link set "v$name" up
	for a in "$@"; do ip netns exec "$name" ip addr add "$a/24" dev "p$name"; done
	ip netns exec "$name" ip link set "p$name" up
	ip netns exec "$name" ip link set lo up
	ip netns exec "$name" ip route add default via "$root"
}

# ---- reload of the gw_start gateway (t_71) -----------------------------------
# gw_reload: SIGHUP the gateway started by gw_start, wait for its next
# "reload: " log line (applied or refused) and print it.
gw_reload() {
	local n
	n=$(grep -c 'reload: ' "$gw_out/gw.log" || true)
	kill -HUP "$gw_pid"
	bed_wait 15 "the gateway's reload log line" \
		sh -c "[ \"\$(grep -c 'reload: ' '$gw_out/gw.log')\" -gt $n ]"
	grep 'reload: ' "$gw_out/gw.log" | tail -1
}

# gw_metric SAMPLE: the value of one sample of the gateway's /metrics, e.g.
# gw_metric 'rpcrdma_gw_callbacks_total{event="relayed"}' (the default admin
# listener, 127.0.0.1:9466, which gw_start's configuration keeps unless
# gateway.admin_listen moves it); 0
# when the sample is absent (a counter not bumped yet).
gw_metric() {
	local url=http://${GW_ADMIN:-127.0.0.1:9466}/metrics body v
	if command -v curl >/dev/null; then
		body=$(curl -sf "$url") || bed_fail "GET $url failed" || return 1
	else
		body=$(wget -q -O - "$url") || bed_fail "GET $url failed" || return 1
	fi
	# awk reads to the end: an early exit would end printf with SIGPIPE (141)
	v=$(printf '%s\n' "$body" | awk -v s="$1" '$1 == s && !n++ { print $2 }')
	echo "${v:-0}"
}

# gw_mount VERS MNT [OPTION...]: mounts the bed's export through the gateway
# of gw_start (127.0.0.1:$gw_port, proto=tcp; with GW_WORKERS > 1 the next
# of gw_addrs in turn, so mounts spread over the workers) on MNT; vers=3 mounts
# $BED_EXPORT with MOUNT through the gateway too (mountport, mountproto=tcp),
# from the server name $GW_HOST if set (a name resolving to 127.0.0.1: Kerberos),
# NFSv4 the pseudo root /.  OPTIONs are appended as given (nolock, hard...):
# without nolock the client locks through NLM (v3) or LOCK (v4).
gw_mount() {
	local vers=$1 mnt=$2 opts src=/ host=${GW_HOST:-}
	shift 2
	if [ -z "$host" ]; then
		host=${gw_addrs[gw_nmounts % ${#gw_addrs[@]}]}
		gw_nmounts=$((gw_nmounts + 1))
		[ "$host" = 127.0.0.1 ] || gw_spread_up
	fi
	opts="vers=$vers,proto=tcp,port=$gw_port"
	if [ "$vers" = 3 ]; then
		opts+=",mountport=$gw_port,mountproto=tcp"
		src=$BED_EXPORT
	fi
	[ "$#" = 0 ] || opts+=$(printf ',%s' "$@")
	mkdir -p "$mnt"
	step "mount -o $opts $host:$src $mnt (through the gateway)"
	timeout 90 mount -t nfs -o "$opts" "$host:$src" "$mnt" || {
		bed_fail "mount through the gateway failed: -o $opts $host:$src $mnt"
		gw_log_tail 60 >&2
		return 1
	}
}

# gw_log_clean [PROBLEM...]: fails when the gateway's log ($gw_out/gw.log)
# holds a sanitizer report (ASan, UBSan's "runtime error") or one of the
# PROBLEMs: leak (LeakSanitizer), failed-calls (a non-zero calls_failed
# counter is logged), illegal-transition, tcp-fallback (the NFS route fell
# back to TCP); prints the matching lines.
# shellcheck disable=SC2120 # every PROBLEM is optional
gw_log_clean() {
	local p re='ERROR: AddressSanitizer\|runtime error'
	for p in "$@"; do
		case "$p" in
		leak) re+='\|ERROR: LeakSanitizer' ;;
		failed-calls) re+='\|calls_failed' ;;
		illegal-transition) re+='\|illegal_transition' ;;
		tcp-fallback) re+='\|using the TCP fallback' ;;
		*) bed_fail "gw_log_clean: unknown problem '$p'"; return 1 ;;
		esac
	done
	if grep -q "$re" "$gw_out/gw.log"; then
		bed_fail "the gateway log $gw_out/gw.log shows a sanitizer report${*:+ or one of: $*}:"
		grep -m 5 "$re" "$gw_out/gw.log" | sed 's/^/  gw: /' >&2
		return 1
	fi
}
