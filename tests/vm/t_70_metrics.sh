#!/bin/bash
# claim: with the kernel NFS client doing IO through rpcrdma-gw over RPC-over-RDMA, GET /metrics on the admin listener shows non-zero counters for the NFS procedures used (WRITE, READ, GETATTR...), read/write chunk bytes, RDMA-leg latency, and the backend connection up with its credits granted; /healthz and /readyz answer 200; rpcrdma-gwctl backends shows the path on one row, and with --workers the live connections with their credits, two RDMA connections for one worker and one per worker for several (connections unset); after a vers=4.1 mount writes and reads 2 MiB, rpcrdma_gw_nfs4_ops_total counts SEQUENCE, PUTFH, READ and WRITE inside COMPOUND (non-zero), and rpcrdma-gwctl stats lists them; READ targets are not zeroed again for the same connection's re-reads (under a quarter of the bytes placed), and another connection's (the v4.1 mount's) go to buffers never written while the pool has them rather than onto the v3 mount's, so nothing is zeroed for it either (scrubbed_bytes_total unchanged); the latency histograms count the v3 READ and WRITE procedures, taking at most one precise clock read per event loop pass (syscalls_total clock_gettime between 1 and epoll_wait), the v4.1 COMPOUNDs under READ and WRITE (never under PUTFH, which only sets up the request), and the path nfs/nfsd; rpcrdma-gwctl stats --ops shows them; a v3 mount from the next client address (another worker under GW_WORKERS=2) reads the file back, its READs counted in the sums
#
#   kernel NFS client              rpcrdma-gw                           kernel nfsd
#   /mnt/m70 (vers=3)   --tcp--> 127.0.0.1:20490 --rdma 20049 (rxe0)--> tmpfs /srv/nfs
#   /mnt/m70b (vers=4.1) -tcp-->
#                              127.0.0.1:9466  <--HTTP-- wget/curl /metrics
#                              /tmp/t70/control <--unix-- rpcrdma-gwctl
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

CTL=${BUILD:-build}/rpcrdma-gwctl
GW_PORT=20490
ADMIN=127.0.0.1:9466
out=/tmp/t70
mkdir -p "$out"

http_get() {	# URL -> body on stdout; HTTP status in $out/code (curl) or 200/fail (wget)
	if command -v curl >/dev/null; then
		curl -s -o "$out/body" -w '%{http_code}' "$1" >"$out/code"
		cat "$out/body"
	else
		if busybox wget -q -O "$out/body" "$1"; then echo 200 >"$out/code"; else echo fail >"$out/code"; fi
		cat "$out/body"
	fi
}
metric() {	# NAME_WITH_LABELS_PREFIX -> first value
	grep -F "$1" "$out/metrics" | grep -v '^#' | head -1 | awk '{ print $NF }'
}

bed_nfsd_up
bed_nfs_client_modules

gw_start "$GW_PORT" "$out" "gateway.admin_listen=$ADMIN" "gateway.control_socket=$out/control" \
	"backend.port=$BED_NFS_PORT" backend.credits=32
bed_wait 10 "the gateway listening" sh -c "ss -ltn | grep -q ':$GW_PORT '"

step "/healthz and /readyz"
http_get "http://$ADMIN/healthz" >/dev/null
assert_eq 200 "$(cat "$out/code")" "/healthz status"
http_get "http://$ADMIN/readyz" >/dev/null
assert_eq 200 "$(cat "$out/code")" "/readyz status"

step "IO through the gateway: mount vers=3, write and read 2 MiB, ls, stat"
gw_mount 3 /mnt/m70 nolock
head -c $((2 << 20)) /dev/urandom >/tmp/m70.bin
cp /tmp/m70.bin /mnt/m70/m70.bin
sync
echo 3 >/proc/sys/vm/drop_caches
assert_same_file /tmp/m70.bin /mnt/m70/m70.bin
ls -l /mnt/m70 >/dev/null
stat /mnt/m70/m70.bin >/dev/null

step "GET /metrics"
http_get "http://$ADMIN/metrics" >"$out/metrics"
assert_eq 200 "$(cat "$out/code")" "/metrics status"
grep -E '^rpcrdma_gw_calls_total|_credits_|rdma_connection_up|payload_bytes|rdma_duration_seconds_count|call_duration_seconds_count' \
	"$out/metrics" | sed 's/^/  /'
for p in write read getattr; do
	v=$(grep -E "^rpcrdma_gw_calls_total\{program=\"100003\",name=\"nfs\",version=\"3\",procedure=\"[0-9]+\",procname=\"$p\"\}" \
		"$out/metrics" | awk '{ print $NF }')
	[ "${v:-0}" -gt 0 ] || bed_fail "NFSv3 $p not counted in /metrics (got '${v:-none}')"
	echo "  nfs v3 $p: $v calls"
done
v=$(metric 'rpcrdma_gw_calls_total{program="100005",name="mount",version="3",procedure="1",procname="mnt"}')
[ "${v:-0}" -gt 0 ] || bed_fail "MOUNT MNT not counted"
v=$(metric 'rpcrdma_gw_payload_bytes_total{path="read_chunk"}')
[ "${v:-0}" -ge $((2 << 20)) ] || bed_fail "read_chunk bytes $v < 2 MiB written"
v=$(metric 'rpcrdma_gw_payload_bytes_total{path="write_chunk"}')
[ "${v:-0}" -ge $((2 << 20)) ] || bed_fail "write_chunk bytes $v < 2 MiB read"
v=$(metric 'rpcrdma_gw_rdma_duration_seconds_count')
[ "${v:-0}" -gt 0 ] || bed_fail "RDMA-leg histogram empty"
v=$(metric 'rpcrdma_gw_rdma_connection_up{path="nfs/nfsd"')
assert_eq 1 "$v" "rdma_connection_up of nfs/nfsd"
v=$(metric 'rpcrdma_gw_rdma_credits_granted{path="nfs/nfsd"')
[ "${v:-0}" -ge 1 ] || bed_fail "credits granted '$v'"
echo "  credits granted by nfsd: $v"
v=$(metric 'rpcrdma_gw_path_up{path="nfs/nfsd"')
assert_eq 1 "$v" "path_up of nfs/nfsd"
for op in READ WRITE GETATTR; do
	v=$(metric "rpcrdma_gw_op_duration_seconds_count{op=\"$op\",vers=\"3\"}")
	[ "${v:-0}" -gt 0 ] || bed_fail "op_duration_seconds: no NFSv3 $op (got '${v:-none}')"
done
v=$(metric 'rpcrdma_gw_backend_duration_seconds_count{path="nfs/nfsd"}')
[ "${v:-0}" -gt 0 ] || bed_fail "backend_duration_seconds of nfs/nfsd empty"
echo "  backend_duration_seconds_count{path=\"nfs/nfsd\"}: $v"
# The pass clock: latencies take at most one precise clock read per loop
# pass (syscalls_total, summed over the workers; epoll_wait counts passes).
sum_sys() { awk -v c="call=\"$1\"" 'index($0, "rpcrdma_gw_syscalls_total{") == 1 && index($0, c) { s += $NF } END { print s + 0 }' "$out/metrics"; }
c=$(sum_sys clock_gettime)
e=$(sum_sys epoll_wait)
echo "  precise clock reads $c, loop passes $e"
{ [ "$c" -gt 0 ] && [ "$c" -le "$e" ]; } || bed_fail "precise clock reads $c not in 1..$e (one per loop pass at most)"

step "READ targets: the same connection's own bytes are not zeroed again"
# Targets that may hold another connection's bytes are zeroed before the
# server writes them (scrubbed_bytes_total); the buffers this mount's own
# READs filled are not.  Two more cold reads of the 2 MiB file.
s0=$(metric 'rpcrdma_gw_scrubbed_bytes_total')
w0=$(metric 'rpcrdma_gw_payload_bytes_total{path="write_chunk"}')
[ -n "$s0" ] || bed_fail "no rpcrdma_gw_scrubbed_bytes_total in /metrics"
for i in 1 2; do
	echo 3 >/proc/sys/vm/drop_caches
	assert_same_file /tmp/m70.bin /mnt/m70/m70.bin
done
http_get "http://$ADMIN/metrics" >"$out/metrics"
s1=$(metric 'rpcrdma_gw_scrubbed_bytes_total')
w1=$(metric 'rpcrdma_gw_payload_bytes_total{path="write_chunk"}')
echo "  first read: $s0 B zeroed of $w0 B placed; two re-reads: $((s1 - s0)) B zeroed of $((w1 - w0)) B"
[ $((w1 - w0)) -ge $((4 << 20)) ] || bed_fail "re-reads placed $((w1 - w0)) B < 4 MiB"
[ $(((s1 - s0) * 4)) -lt $((w1 - w0)) ] ||
	bed_fail "re-reads zeroed $((s1 - s0)) B of $((w1 - w0)) B: own buffers cleared again"

if [ -x "$CTL" ]; then
	step "rpcrdma-gwctl backends / stats"
	"$CTL" -s "$out/control" backends | sed 's/^/  /'
	# One row for the path however many workers; --workers: each one's.
	[ "$("$CTL" -s "$out/control" backends | grep -c '^nfs/nfsd ')" = 1 ] ||
		bed_fail "gwctl backends: nfs/nfsd not on exactly one row"
	"$CTL" -s "$out/control" backends --workers >"$out/backends"
	grep -Eq '^nfs/nfsd +nfsd +rdma +up .* 0:up credits [1-9][0-9]*/' "$out/backends" ||
		bed_fail "gwctl backends does not show nfs/nfsd up with its credits"
	# connections unset: two for one worker, one per worker for several
	want=2; [ "${GW_WORKERS:-1}" -le 1 ] || want=1
	awk -v w="$want" -v nw="${GW_WORKERS:-1}" '$1 == "nfs/nfsd" && $3 == "rdma" { p++
			n = gsub(/[0-9]+:[a-z]+ credits/, "&"); if (n != w) bad = bad " " n }
		END { if (p != nw || bad != "") { printf "%d paths (want %d), connections%s (want %d each)\n", p, nw, bad, w; exit 1 } }' \
		"$out/backends" || bed_fail "gwctl backends: not $want RDMA connection(s) per worker for ${GW_WORKERS:-1} worker(s)"
	"$CTL" -s "$out/control" stats | sed -n '1,30p' | sed 's/^/  /'
	"$CTL" -s "$out/control" stats | grep -Eq '^write +[1-9]' || bed_fail "gwctl stats: no WRITE"
else
	step "rpcrdma-gwctl not built ($CTL): skipped (Makefile rule pending)"
fi

timeout 60 umount /mnt/m70

step "NFSv4.1 through the gateway: write and read 2 MiB; per-operation counters"
# From the v3 mount's address, so on the same worker's pool: its READ
# targets must not land on the buffers the v3 mount left (to be zeroed),
# while the pool has runs no one has written.
GW_HOST=${gw_addrs[0]} gw_mount 4.1 /mnt/m70b
cp /tmp/m70.bin /mnt/m70b/m70v4.bin
sync
echo 3 >/proc/sys/vm/drop_caches
assert_same_file /tmp/m70.bin /mnt/m70b/m70v4.bin
timeout 60 umount /mnt/m70b
http_get "http://$ADMIN/metrics" >"$out/metrics"
assert_eq 200 "$(cat "$out/code")" "/metrics status"
grep -E '^rpcrdma_gw_nfs4_ops_total' "$out/metrics" | sed 's/^/  /'
s2=$(metric 'rpcrdma_gw_scrubbed_bytes_total')
echo "  another connection (vers=4.1) wrote and read 2 MiB: $((s2 - s1)) B zeroed"
[ $((s2 - s1)) -eq 0 ] ||
	bed_fail "another connection's READ targets zeroed $((s2 - s1)) B: placed on the v3 mount's buffers"
for op in SEQUENCE PUTFH READ WRITE; do
	v=$(metric "rpcrdma_gw_nfs4_ops_total{op=\"$op\"}")
	[ "${v:-0}" -gt 0 ] || bed_fail "NFSv4 op $op not counted in /metrics (got '${v:-none}')"
done
v=$(metric 'rpcrdma_gw_calls_total{program="100003",name="nfs",version="4",procedure="1",procname="compound"}')
[ "${v:-0}" -gt 0 ] || bed_fail "NFSv4 COMPOUND not counted"
echo "  nfs v4 compound: $v calls"
if [ -x "$CTL" ]; then
	"$CTL" -s "$out/control" stats >"$out/stats"
	sed -n '/nfs v4 operations/,/^$/p' "$out/stats" | sed 's/^/  /'
	for op in SEQUENCE PUTFH READ WRITE; do
		grep -Eq "^$op +[1-9]" "$out/stats" || bed_fail "gwctl stats: no NFSv4 op $op"
	done
fi
grep -E '^rpcrdma_gw_op_duration_seconds_count\{.*vers="4"' "$out/metrics" | sed 's/^/  /'
for op in READ WRITE; do
	v=$(metric "rpcrdma_gw_op_duration_seconds_count{op=\"$op\",vers=\"4\"}")
	[ "${v:-0}" -gt 0 ] || bed_fail "op_duration_seconds: no NFSv4 COMPOUND under $op (got '${v:-none}')"
done
if grep -q '^rpcrdma_gw_op_duration_seconds_count{op="PUTFH",vers="4"}' "$out/metrics"; then
	bed_fail "a COMPOUND counted under PUTFH (set-up operations are skipped)"
fi
if [ -x "$CTL" ]; then
	"$CTL" -s "$out/control" stats --ops >"$out/ops"
	sed 's/^/  /' "$out/ops"
	for row in '3 +WRITE' '4 +READ' 'nfs/nfsd'; do
		grep -Eq "^$row +[1-9]" "$out/ops" || bed_fail "gwctl stats --ops: no row '$row'"
	done
fi

step "a v3 mount from the next client address (another worker with GW_WORKERS=2) reads 2 MiB"
r0=$(gw_metric 'rpcrdma_gw_op_duration_seconds_count{op="READ",vers="3"}')
gw_mount 3 /mnt/m70c nolock
echo 3 >/proc/sys/vm/drop_caches
assert_same_file /tmp/m70.bin /mnt/m70c/m70.bin
timeout 60 umount /mnt/m70c
r1=$(gw_metric 'rpcrdma_gw_op_duration_seconds_count{op="READ",vers="3"}')
echo "  NFSv3 READs counted (summed over the workers): $r0 -> $r1"
[ "$r1" -ge $((r0 + 8)) ] || bed_fail "2 MiB read in $((r1 - r0)) NFSv3 READs counted (< 8 of 256 KiB)"
gw_spread_check 8	# GW_WORKERS > 1: the first mounts and the last on two workers
step "SIGTERM: clean shutdown"
gw_stop
gw_log_clean
