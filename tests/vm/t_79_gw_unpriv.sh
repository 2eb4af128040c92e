#!/bin/bash
# claim: rpcrdma-gw runs as nobody with CAP_NET_BIND_SERVICE as its only capability and RLIMIT_MEMLOCK set to what docs/operations.md (Locked memory) says its configuration needs: it listens on a port below 1024, its NFS route comes up over RDMA (rxe0), a NULL call and a kernel NFSv3 mount through it work (sha256 of a 1 MiB file read back), its Unix admin socket answers only with the bearer token; with a memlock limit below the pool the route does not come up, the daemon stays alive and its log names RLIMIT_MEMLOCK and LimitMEMLOCK=; realtime_priority = 1 without RLIMIT_RTPRIO fails the start (status 1) with a line naming LimitRTPRIO= and RestrictRealtime=no, and with RLIMIT_RTPRIO 1 every thread of the gateway runs SCHED_RR at priority 1 and a NULL call goes through
#
#   kernel NFS client ──tcp:<1024─▶ rpcrdma-gw (uid nobody, caps: net_bind_service,
#   ops-helpers.py call              memlock = pool + connection buffers + 10 %)
#   curl --unix-socket ──HTTP──▶ │ ──rdma 20049 (rxe0)──▶ kernel nfsd
#
# The host-level half (tests/pkg/check-unpriv.sh) covers a TCP route, the
# missing capability and the token file's mode; this adds what needs RDMA:
# registration of the pool under a finite memlock limit.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

GW=${BUILD:-build}/rpcrdma-gw
H=tests/pkg/ops-helpers.py
out=/tmp/t79
mkdir -p "$out/run"
chmod 755 "$out"
chown nobody:nogroup "$out/run"

bed_nfsd_up
bed_nfs_client_modules

tok=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$tok" >"$out/token"
chown nobody:nogroup "$out/token"
chmod 600 "$out/token"
sock=$out/run/admin.sock
# 256 buffers of 64 KiB; one connection of 64 credits with 4 KiB inline
# buffers each way: docs/operations.md §3.3 gives 16 MiB + 64 x 8 KiB per
# worker (gw_conf's one, or GW_WORKERS).
need=$((256 * 65536 + 64 * 8192))
nworkers=${GW_WORKERS:-1}
gw_opts=(gateway.buffers=256 gateway.buffer_size=64k gateway.control_socket=
	"gateway.admin_listen=unix:$sock" "gateway.admin_token_file=$out/token"
	backend.port="$BED_NFS_PORT")

# A free port below 1024 (the kernel's RPC clients hold some: 800 was taken).
low_port=$(python3 -c '
import socket
for p in range(1023, 600, -1):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try: s.bind(("127.0.0.1", p)); print(p); break
    except OSError: pass
')

# unpriv MEMLOCK [SECTION.KEY=VALUE...]: the gateway on $low_port as nobody
# with only CAP_NET_BIND_SERVICE and RLIMIT_MEMLOCK = MEMLOCK bytes
# (RTPRIO=N: RLIMIT_RTPRIO N too, else 0).
unpriv() {
	local memlock=$1
	shift
	gw_port=$low_port
	gw_out=$out
	gw_conf "$gw_port" "$out" "${gw_opts[@]}" "$@"
	chmod 644 "$out/gw.conf"
	step "start rpcrdma-gw as nobody, CAP_NET_BIND_SERVICE only, memlock $memlock bytes, rtprio ${RTPRIO:-0}"
	prlimit --memlock="$memlock:$memlock" --rtprio="${RTPRIO:-0}:${RTPRIO:-0}" \
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all,+net_bind_service --ambient-caps=+net_bind_service -- \
		"$GW" -c "$out/gw.conf" --log stderr >"$out/gw.log" 2>&1 &
	gw_pid=$!
	trap 'gw_stop; bed_on_exit' EXIT
}
admin() {	# AUTH PATH: HTTP status of GET PATH on the admin socket, body in $out/body
	curl -s -o "$out/body" -w '%{http_code}' --unix-socket "$sock" ${1:+-H "Authorization: Bearer $1"} \
		"http://gw$2"
}

rdma_up() {	# N: N workers' NFS paths up over RDMA (each registered its pool)
	[ "$(grep -c 'path nfs/nfsd: transport rdma up' "$out/gw.log")" -ge "$1" ]
}
memlock=$((nworkers * need * 11 / 10))
unpriv "$memlock"
bed_wait 30 "the NFS path up over RDMA in $nworkers worker(s)" rdma_up "$nworkers"
gw_alive
assert_eq "65534 65534" "$(awk '/^Uid:/ {u=$3} /^Gid:/ {g=$3} END {print u, g}' "/proc/$gw_pid/status")" \
	"effective uid and gid"
assert_eq 0000000000000400 "$(awk '/^CapEff:/ {print $2}' "/proc/$gw_pid/status")" \
	"effective capabilities (CAP_NET_BIND_SERVICE only)"
assert_eq "$memlock" "$(awk '/^Max locked memory/ {print $4}' "/proc/$gw_pid/limits")" "memlock limit"
assert_grep "listening on 127.0.0.1:$low_port" "$out/gw.log"

step "NULL call through the gateway's port $low_port (NFS route over RDMA)"
assert_eq 0 "$(python3 "$H" call "$low_port" 100003 3 0 1)" "NULL accept_stat"

step "the admin socket: 401 without the token, 200 with it"
assert_eq "660 nobody" "$(stat -c '%a %U' "$sock")" "admin socket mode and owner"
assert_eq 401 "$(admin "" /readyz)" "/readyz without the token"
assert_eq 200 "$(admin "$tok" /readyz)" "/readyz with the token"
assert_eq 200 "$(admin "$tok" /metrics)" "/metrics with the token"
rdma_calls=$(awk '$1 == "rpcrdma_gw_rdma_duration_seconds_count" { print $2 }' "$out/body")
[ "${rdma_calls:-0}" -ge 1 ] || bed_fail "no call went over RDMA (rdma_duration_seconds_count ${rdma_calls:-none})"
assert_grep 'rpcrdma_gw_admin_refused_total{reason="unauthorized"} 1$' "$out/body"

step "kernel NFSv3 mount through the unprivileged gateway, 1 MiB read back"
head -c $((1 << 20)) /dev/urandom >"$BED_EXPORT/unpriv.bin"
sum=$(sha256sum "$BED_EXPORT/unpriv.bin" | cut -d' ' -f1)
gw_mount 3 /mnt/gw3 nolock
assert_file_sum /mnt/gw3/unpriv.bin "$sum"
timeout 60 umount /mnt/gw3
gw_alive
gw_stop

step "memlock below the pool (1 MiB): the RDMA route stays down, a clear line, no crash"
unpriv $((1 << 20)) nfs.fallback=none
bed_wait 30 "the registration failure logged" grep -q "RLIMIT_MEMLOCK" "$out/gw.log"
sleep 2
gw_alive
grep -m1 "RLIMIT_MEMLOCK" "$out/gw.log" | sed 's/^/  /'
assert_grep "ibv_reg_mr(.*) failed: .*RLIMIT_MEMLOCK (memlock, now 1048576 bytes).*LimitMEMLOCK=" "$out/gw.log"
if grep -q "path nfs/nfsd: transport rdma up" "$out/gw.log"; then
	bed_fail "the RDMA route came up under a 1 MiB memlock limit"
fi
assert_eq 503 "$(admin "$tok" /readyz)" "/readyz with the pool unregistered"
gw_stop

step "realtime_priority = 1 without RLIMIT_RTPRIO: the start fails, a clear line"
unpriv "$memlock" gateway.realtime_priority=1
bed_poll 30 gw_exited || bed_fail "the gateway still runs with realtime_priority it cannot have"
st=0
wait "$gw_pid" || st=$?
gw_pid=
assert_eq 1 "$st" "exit status"
assert_grep "realtime_priority = 1: cannot switch to SCHED_RR: Operation not permitted .*LimitRTPRIO=1" "$out/gw.log"
assert_grep "RestrictRealtime=no" "$out/gw.log"

step "realtime_priority = 1 with RLIMIT_RTPRIO 1, two workers (the memlock of two): both RDMA paths up, every thread SCHED_RR at 1, a NULL call"
RTPRIO=1 unpriv "$((2 * need * 11 / 10))" gateway.realtime_priority=1 gateway.workers=2
bed_wait 30 "the NFS path up over RDMA in both workers" rdma_up 2
gw_alive
assert_grep "realtime_priority = 1: every thread runs SCHED_RR" "$out/gw.log"
# /proc/PID/task/TID/stat after the command: field 40 rt_priority, 41
# policy (2 = SCHED_RR), counted from the state (field 3).
rt=$(for t in /proc/"$gw_pid"/task/*/stat; do
	line=$(cat "$t"); line=${line##*) }
	read -r -a f <<<"$line"
	echo "${f[38]}/${f[37]}"
done | sort | uniq -c | awk '{ printf "%s%s:%s", (NR > 1 ? "," : ""), $2, $1 }')
echo "  threads (policy/priority:count): $rt"
case $rt in *,*) bed_fail "threads differ in scheduling: $rt" ;; esac
case $rt in 2/1:*) ;; *) bed_fail "threads not SCHED_RR at priority 1: $rt" ;; esac
assert_eq 0 "$(python3 "$H" call "$low_port" 100003 3 0 1)" "NULL accept_stat (SCHED_RR)"
gw_stop
