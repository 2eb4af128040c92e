#!/bin/bash
# claim: with ccp on, backend-rdma sends CONF_RDMA (draft-08 6) as the first call of each connection; rpcrdma-peer's answer lowers the inline send size to 2048 and the Read depth to 8, an answer above our limits raises nothing, and PROG_UNAVAIL, a garbage answer or no answer fall back to the RFC 8797 values with the connection usable; against the kernel nfsd (which answers PROG_UNAVAIL) NULL, a 1 MiB WRITE/READ and an NFSv3 mount through rpcrdma-gw with ccp = on all work
#
#   rpcrdma-call --ccp ---- rxe0 on d0 (10.99.0.1) ---- rpcrdma-peer :20050 (PEER_CCP=...)
#   rpcrdma-call --ccp ---- rxe0 -------------------- kernel nfsd :20049
#   mount -t nfs --tcp--> rpcrdma-gw (ccp = on) --rdma--> kernel nfsd
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

TOOL=${BUILD:-build}/tools/rpcrdma-call
PEER=${BUILD:-build}/peer/rpcrdma-peer
GW=${BUILD:-build}/rpcrdma-gw
PORT=20050
GW_PORT=20496
out=/tmp/t56
mkdir -p "$out"

bed_nfsd_up

# peer_case NAME PEER_CCP TOOL-ARGS...: peer in mode normal answering
# CONF_RDMA as PEER_CCP says; logs in $out/NAME.{peer,tool}, tool status
# in $tool_rc.
peer_case() {
	local name=$1 ccp=$2
	shift 2
	step "$name: rpcrdma-peer with PEER_CCP=${ccp:-(unset)}, rpcrdma-call $*"
	PEER_CCP=$ccp timeout 60 "$PEER" "$BED_IP" "$PORT" normal 32 >"$out/$name.peer" 2>&1 &
	local peer=$!
	bed_wait 20 "rpcrdma-peer listening" \
		sh -c "rdma resource show cm_id | grep -q 'state LISTEN.*src-addr $BED_IP:$PORT'"
	tool_rc=0
	timeout 60 "$TOOL" --timeout 8 "$@" "$BED_IP" "$PORT" null 3 >"$out/$name.tool" 2>&1 ||
		tool_rc=$?
	bed_poll 5 bed_gone "$peer" || true
	kill "$peer" 2>/dev/null || true
	wait "$peer" || true
	sed 's/^/  peer: /' "$out/$name.peer"
	sed 's/^/  tool: /' "$out/$name.tool"
}

peer_case control ""
assert_eq 0 "$tool_rc" "tool status"
assert_grep '^inline thresholds: send 4096 recv 4096$' "$out/control.tool"
assert_grep '^ccp: off, read depth 16$' "$out/control.tool"
if grep -q 'CONF_RDMA' "$out/control.peer"; then bed_fail "CONF_RDMA sent with ccp off"; fi

peer_case lower 2048,4,8 --ccp
assert_eq 0 "$tool_rc" "tool status"
assert_grep 'peer: CONF_RDMA vers 1 proc 1: maxcall_sendsize 4096 maxreply_sendsize 4096 maxrdmaread 16' \
	"$out/lower.peer"
assert_grep 'CONF_RDMA answered maxcall_sendsize 2048 align 4 maxrdmaread 8: inline send 4096 -> 2048, Read depth 8' \
	"$out/lower.tool"
assert_grep '^inline thresholds: send 2048 recv 4096$' "$out/lower.tool"
assert_grep '^ccp: done, read depth 8$' "$out/lower.tool"
assert_grep '^null: 3 calls ok' "$out/lower.tool"
assert_grep 'ccp_ok 1 ccp_fallback 0' "$out/lower.tool"
# CONF_RDMA first: the peer saw it before any other call.
assert_eq "CONF_RDMA" "$(grep -m1 -o 'CONF_RDMA\|call 1 ' "$out/lower.peer")" "first call on the wire"

peer_case raise 65536,4,64 --ccp
assert_eq 0 "$tool_rc" "tool status"
assert_grep '^inline thresholds: send 4096 recv 4096$' "$out/raise.tool"
assert_grep '^ccp: done, read depth 16$' "$out/raise.tool"

peer_case unavail unavail --ccp
assert_eq 0 "$tool_rc" "tool status"
assert_grep 'CONF_RDMA PROG_UNAVAIL: server does not speak CCP' "$out/unavail.tool"
assert_grep '^ccp: fallback, read depth 16$' "$out/unavail.tool"
assert_grep '^inline thresholds: send 4096 recv 4096$' "$out/unavail.tool"
assert_grep 'ccp_ok 0 ccp_fallback 1' "$out/unavail.tool"

peer_case garbage "" --ccp
assert_eq 0 "$tool_rc" "tool status"
assert_grep 'CONF_RDMA garbage: server does not speak CCP' "$out/garbage.tool"
assert_grep '^null: 3 calls ok' "$out/garbage.tool"

peer_case silent silent --ccp
assert_eq 0 "$tool_rc" "tool status"
assert_grep 'CONF_RDMA no answer: server does not speak CCP' "$out/silent.tool"
assert_grep '^null: 3 calls ok' "$out/silent.tool"

step "kernel nfsd with --ccp: PROG_UNAVAIL, fallback, NULL and a 1 MiB WRITE/READ work"
rc=0
timeout 90 "$TOOL" --ccp --expect-credits 64 "$BED_IP" "$BED_RDMA_PORT" rw "$BED_EXPORT" f-ccp 1048576 \
	>"$out/nfsd.tool" 2>&1 || rc=$?
sed 's/^/  tool: /' "$out/nfsd.tool"
assert_eq 0 "$rc" "rpcrdma-call status"
assert_grep 'CONF_RDMA PROG_UNAVAIL: server does not speak CCP' "$out/nfsd.tool"
assert_grep '^ccp: fallback, read depth 16$' "$out/nfsd.tool"
assert_grep '^inline thresholds: send 4096 recv 4096$' "$out/nfsd.tool"
assert_grep '^sha256 read ' "$out/nfsd.tool"

step "rpcrdma-gw with ccp = on in front of the kernel nfsd: NFSv3 mount, 1 MiB each way"
bed_nfs_client_modules
gw_conf "$GW_PORT" "$out" backend.ccp=on
assert_eq "configuration OK" "$("$GW" --check-config "$out/gw.conf")" "check-config output"
gw_start "$GW_PORT" "$out" backend.ccp=on
gw_mount 3 /mnt/gw56 nolock
head -c $((1 << 20)) /dev/urandom >/tmp/ccp.bin
cp /tmp/ccp.bin /mnt/gw56/ccp.bin
sync
assert_same_file /tmp/ccp.bin "$BED_EXPORT/ccp.bin"
assert_file_sum /mnt/gw56/f-ccp "$(sha256sum "$BED_EXPORT/f-ccp" | cut -d' ' -f1)"
ccp_fb=$(gw_metric 'rpcrdma_gw_rdma_ccp_total{backend="nfsd",result="fallback"}')
ccp_ok=$(gw_metric 'rpcrdma_gw_rdma_ccp_total{backend="nfsd",result="applied"}')
echo "  /metrics: rdma_ccp_total fallback $ccp_fb, applied $ccp_ok"
assert_eq 1 "$(( ccp_fb >= 1 ))" "rdma_ccp_total{result=fallback} >= 1 (nfsd answers PROG_UNAVAIL)"
assert_eq 0 "$ccp_ok" "rdma_ccp_total{result=applied} against nfsd"
timeout 60 umount /mnt/gw56
gw_stop || bed_fail "gateway stop"
grep 'CONF_RDMA\|connection 0' "$out/gw.log" | sed 's/^/  gw: /'
assert_grep 'CONF_RDMA PROG_UNAVAIL: server does not speak CCP' "$out/gw.log"
gw_log_clean
