#!/bin/bash
# claim: backend-rdma connects to the kernel nfsd at 10.99.0.1:20049, gets RFC 8797 private data f6ab0e1801000303 and a grant of 64 credits, 100 NULL calls succeed, and an idle connection sends keepalive NULLs
#
#   rpcrdma-call (backend-rdma, MW registration)      kernel nfsd (svcrdma)
#        rdma_cm + RC QP  ---- rxe0 on d0 (dummy, 10.99.0.1/24) ----  rdma 20049
#
# The vertical slice of the RDMA backend against the reference peer:
# rdma_cm driven from libevent, receives posted before connect, our private
# data in the CONNECT request, the server's parsed from ESTABLISHED, credits
# taken from the first reply.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

TOOL=${BUILD:-build}/tools/rpcrdma-call
out=/tmp/t50
mkdir -p "$out"

bed_nfsd_up

step "NULL calls over RDMA to $BED_IP:$BED_RDMA_PORT"
rc=0
timeout 60 "$TOOL" --expect-credits 64 --expect-pd f6ab0e1801000303 \
	"$BED_IP" "$BED_RDMA_PORT" null 100 >"$out/log" 2>&1 || rc=$?
sed 's/^/  /' "$out/log"
assert_eq 0 "$rc" "rpcrdma-call exit status"
assert_grep '^ok: credits 64$' "$out/log"
assert_grep '^ok: private data f6ab0e1801000303 (196 bytes)$' "$out/log"
assert_grep '^null: 100 calls ok' "$out/log"

step "idle connection with a 300 ms keepalive: NULL pings keep it checked"
rc=0
timeout 60 "$TOOL" --keepalive 300 "$BED_IP" "$BED_RDMA_PORT" idle 2 >"$out/idle" 2>&1 || rc=$?
sed 's/^/  /' "$out/idle"
assert_eq 0 "$rc" "rpcrdma-call idle exit status"
assert_grep '^idle 2 s: [1-9][0-9]* keepalives' "$out/idle"

step "same NULL calls with per-call MR registration and with the R flag off"
rc=0
timeout 60 "$TOOL" --mode mr --no-remote-inv --expect-credits 64 "$BED_IP" "$BED_RDMA_PORT" null 10 \
	>"$out/mr" 2>&1 || rc=$?
sed 's/^/  /' "$out/mr"
assert_eq 0 "$rc" "rpcrdma-call (mr) exit status"
assert_grep '^pool inline thresholds: send 4096 recv 4096$' "$out/log"
