#!/bin/bash
# claim: 1000 NULL calls one after the other cost fewer send-queue completions and CQ wake-ups with unsignaled Sends (default) than with every Send signaled (--send-batch 1); 256 concurrent calls through backend-rdma to the kernel nfsd all succeed, never more than the 64 granted credits' worth of calls sent awaiting their reply ("max sent"; "max in flight", calls not yet finished, is only printed), the rest waiting in the visible queue; same with 8 credits asked (cap below the grant); a pool of 4 connections carries up to 4 x 64
#
#   rpcrdma-call: 256 NULL calls submitted at once
#        |  wait queue (be_pool_queued) -> at most `grant` sent
#        v
#   kernel nfsd (grants 64) over rxe0 on d0 (10.99.0.1)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

TOOL=${BUILD:-build}/tools/rpcrdma-call
out=/tmp/t53
mkdir -p "$out"

bed_nfsd_up

step "256 concurrent NULL calls, 128 credits asked"
rc=0
timeout 120 "$TOOL" --timeout 60 "$BED_IP" "$BED_RDMA_PORT" concurrent 256 >"$out/a" 2>&1 || rc=$?
sed 's/^/  /' "$out/a"
assert_eq 0 "$rc" "rpcrdma-call exit status"
assert_grep '^concurrent: 256 calls, 256 done, 0 failed, max in flight [0-9]*, max sent 64, max queued [0-9]*, grant 64' "$out/a"

step "256 concurrent NULL calls, 8 credits asked: we never exceed our own ceiling"
rc=0
timeout 120 "$TOOL" --timeout 60 --credits 8 --expect-credits 8 "$BED_IP" "$BED_RDMA_PORT" \
	concurrent 256 >"$out/b" 2>&1 || rc=$?
sed 's/^/  /' "$out/b"
assert_eq 0 "$rc" "rpcrdma-call exit status"
assert_grep '^concurrent: 256 calls, 256 done, 0 failed, max in flight [0-9]*, max sent 8,' "$out/b"

step "256 concurrent NULL calls over a pool of 4 connections"
rc=0
timeout 120 "$TOOL" --timeout 60 --conns 4 "$BED_IP" "$BED_RDMA_PORT" concurrent 256 >"$out/c" 2>&1 || rc=$?
sed 's/^/  /' "$out/c"
assert_eq 0 "$rc" "rpcrdma-call exit status"
assert_eq 4 "$(grep -c '^pool event: up' "$out/c")" "connections up"
assert_grep '^concurrent: 256 calls, 256 done, 0 failed, max in flight [0-9]*, max sent \(6[5-9]\|[7-9][0-9]\|1[0-9][0-9]\|2[0-5][0-9]\),' "$out/c"

# per_call FILE FIELD: the stats line's FIELD divided by its calls
per_call() {
	awk -v f="$2" '/^stats:/ { for (i = 2; i < NF; i += 2) v[$i] = $(i + 1);
		printf "%.3f\n", v[f] / v["calls"] }' "$1"
}
step "1000 sequential NULL calls: completions and CQ wake-ups per call, unsignaled Sends vs every Send signaled"
for b in 0 1; do
	rc=0
	timeout 120 "$TOOL" --timeout 60 --send-batch "$b" "$BED_IP" "$BED_RDMA_PORT" null 1000 \
		>"$out/seq$b" 2>&1 || rc=$?
	assert_eq 0 "$rc" "rpcrdma-call exit status (--send-batch $b)"
	grep -E '^(null|stats):' "$out/seq$b" | sed 's/^/  /'
	echo "  --send-batch $b: send-queue completions per call $(per_call "$out/seq$b" sq_completions)," \
		"receive $(per_call "$out/seq$b" rq_completions), CQ wake-ups $(per_call "$out/seq$b" cq_wakeups)"
done
awk -v a="$(per_call "$out/seq0" sq_completions)" -v b="$(per_call "$out/seq1" sq_completions)" \
	'BEGIN { exit !(a < 0.1 && b >= 1) }' ||
	bed_fail "send-queue completions per call: $(per_call "$out/seq0" sq_completions) unsignaled, $(per_call "$out/seq1" sq_completions) signaled"
