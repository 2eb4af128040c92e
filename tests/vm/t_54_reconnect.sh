#!/bin/bash
# claim: calls in flight and submitted while the kernel nfsd restarts (rpc.nfsd 0; rpc.nfsd 4) are re-sent on a new connection after backoff and all succeed
#
#   rpcrdma-call soak (8 NULL calls in flight, 25 s)   kernel nfsd
#        |  DISCONNECTED -> reap -> queue -> backoff      rpc.nfsd 0 at ~5 s
#        |  reconnect (REJECTED until the listener is back)  rpc.nfsd 4 + rdma 20049 at ~8 s
#        v  re-send with the same XIDs
#   rxe0 on d0 (10.99.0.1)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

TOOL=${BUILD:-build}/tools/rpcrdma-call
out=/tmp/t54
mkdir -p "$out"

bed_nfsd_up

step "soak: NULL calls for 25 s"
timeout 120 "$TOOL" --timeout 60 --retry-max 1000 --expect-reconnect \
	"$BED_IP" "$BED_RDMA_PORT" soak 25 >"$out/log" 2>&1 &
tool=$!
sleep 5
step "rpc.nfsd 0"
rpc.nfsd 0
sleep 3
step "rpc.nfsd 4; rdma 20049"
rpc.nfsd 4
echo "rdma $BED_RDMA_PORT" >/proc/fs/nfsd/portlist
rc=0
wait "$tool" || rc=$?
sed 's/^/  /' "$out/log"
assert_eq 0 "$rc" "rpcrdma-call exit status"
assert_grep '^pool event: down' "$out/log"
assert_grep '^soak: [0-9]* calls, [0-9]* done, 0 failed' "$out/log"
