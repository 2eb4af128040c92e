#!/bin/bash
# claim: backend-rdma connects to the kernel nfsd at 10.99.0.1:20049, gets RFC 8797 private data f6ab0e1801000303 and a grant of 64 credits, and 100 NULL calls succeed
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
