#!/bin/bash
# claim: rpcrdma-gw runs as nobody with CAP_NET_BIND_SERVICE as its only capability and RLIMIT_MEMLOCK set to what docs/operations.md (Locked memory) says its configuration needs: it listens on a port below 1024, its NFS route comes up over RDMA (rxe0), a NULL call and a kernel NFSv3 mount through it work (sha256 of a 1 MiB file read back), its Unix admin socket answers only with the bearer token; with a memlock limit below the pool the route does not come up, the daemon stays alive and its log names RLIMIT_MEMLOCK and LimitMEMLOCK=
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
# buffers each way: docs/operations.md §3.3 gives 16 MiB + 64 x 8 KiB.
need=$((256 * 65536 + 64 * 8192))
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
# with only CAP_NET_BIND_SERVICE and RLIMIT_MEMLOCK = MEMLOCK bytes.
unpriv() {
	local memlock=$1
	shift
	gw_port=$low_port
	gw_out=$out
	gw_conf "$gw_port" "$out" "${gw_opts[@]}" "$@"
	chmod 644 "$out/gw.conf"
	step "start rpcrdma-gw as nobody, CAP_NET_BIND_SERVICE only, memlock $memlock bytes"
	prlimit --memlock="$memlock:$memlock" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all,+net_bind_service --ambient-caps=+net_bind_service -- \
		"$GW" -c "$out/gw.conf" --log stderr >"$out/gw.log" 2>&1 &
	gw_pid=$!
	trap 'gw_stop; bed_on_exit' EXIT
}
admin() {	# AUTH PATH: HTTP status of GET PATH on the admin socket, body in $out/body
	curl -s -o "$out/body" -w '%{http_code}' --unix-socket "$sock" ${1:+-H "Authorization: Bearer $1"} \
		"http://gw$2"
}

memlock=$((need * 11 / 10))
unpriv "$memlock"
bed_wait 30 "the NFS path up over RDMA" grep -q "path nfs/nfsd: transport rdma up" "$out/gw.log"
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
