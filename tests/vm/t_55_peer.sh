#!/bin/bash
# claim: against tests/peer/rpcrdma-peer, an rkey from a finished call is refused by the device (window invalidated), Send With Invalidate is honoured, write lengths beyond the offer, ERR_CHUNK, ERR_VERS, a credit grant of 0 and replies with unknown XIDs are each handled as specified, long replies by Read list are pulled with RDMA Read and acknowledged with RDMA_DONE, RDMA_MSGP replies are taken, and a call beyond the segment limit fails through its callback
#
#   rpcrdma-call (backend-rdma) ---- rxe0 on d0 (10.99.0.1) ---- rpcrdma-peer :20050
#                                                                 (one mode per run)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

TOOL=${BUILD:-build}/tools/rpcrdma-call
PEER=${BUILD:-build}/peer/rpcrdma-peer
PORT=20050
out=/tmp/t55
mkdir -p "$out"

bed_rdma_up
opts=()

# run_case NAME PEER-MODE PEER-CREDITS CMD [ARGS]... (tool options in the
# array opts, reset after each case): peer status in $peer_rc,
# tool status in $tool_rc, logs in $out/NAME.{peer,tool}
run_case() {
	local name=$1 mode=$2 credits=$3
	shift 3
	step "$name: peer mode $mode, rpcrdma-call ${opts[*]} $*"
	timeout 60 "$PEER" "$BED_IP" "$PORT" "$mode" "$credits" >"$out/$name.peer" 2>&1 &
	local peer=$!
	bed_wait 20 "rpcrdma-peer listening" \
		sh -c "rdma resource show cm_id | grep -q 'state LISTEN.*src-addr $BED_IP:$PORT'"
	tool_rc=0
	timeout 60 "$TOOL" --timeout 8 --retry-max 500 "${opts[@]}" "$BED_IP" "$PORT" "$@" \
		>"$out/$name.tool" 2>&1 || tool_rc=$?
	opts=()
	peer_rc=0
	# The peer ends by itself on DISCONNECTED; give it a moment first.
	bed_poll 5 bed_gone "$peer" || true
	kill "$peer" 2>/dev/null || true
	wait "$peer" || peer_rc=$?
	sed 's/^/  peer: /' "$out/$name.peer"
	sed 's/^/  tool: /' "$out/$name.tool"
}

run_case stale stale-rkey 32 chunky 3
assert_eq 0 "$peer_rc" "peer verdict (0 = stale rkey refused)"
assert_grep 'stale rkey refused' "$out/stale.peer"

opts=(--mode persistent)
run_case control stale-control 32 chunky 3
assert_eq 0 "$peer_rc" "control: with one persistent rkey the stale write lands"
assert_grep 'stale rkey accepted' "$out/control.peer"

run_case remoteinv remote-inv 32 chunky 3
assert_eq 0 "$tool_rc" "tool status"
assert_grep 'remote invalidation 1' "$out/remoteinv.tool"
assert_grep 'local_inv 0 remote_inv 3' "$out/remoteinv.tool"

opts=(--expect-error "chunk lengths beyond the offer")
run_case overrun overrun 32 chunky 2
assert_eq 0 "$tool_rc" "tool status"
assert_grep 'overrun 2' "$out/overrun.tool"

opts=(--expect-error "RDMA_ERROR ERR_CHUNK")
run_case errchunk err-chunk 32 chunky 2
assert_eq 0 "$tool_rc" "tool status"

opts=(--expect-error "RDMA_ERROR ERR_VERS")
run_case errvers err-vers 32 chunky 1
assert_eq 0 "$tool_rc" "tool status"
assert_grep 'giving up on this server' "$out/errvers.tool"

run_case zero normal 0 concurrent 32
assert_eq 0 "$tool_rc" "tool status"
assert_grep 'max in flight 1,' "$out/zero.tool"

run_case unknown unknown-xid 32 chunky 3
assert_eq 0 "$tool_rc" "tool status"
assert_grep 'unknown_xid 4' "$out/unknown.tool"

run_case longreply read-reply 32 null 3
assert_eq 0 "$tool_rc" "tool status"
assert_eq 0 "$peer_rc" "peer verdict (an RDMA_DONE for each long reply)"
assert_grep 'NULL reply: rdma proc 1, credits 32, 8024 bytes' "$out/longreply.tool"
assert_grep 'long_replies 3 rdma_done 3' "$out/longreply.tool"

run_case longmsg read-reply-msg 32 null 3
assert_eq 0 "$tool_rc" "tool status"
assert_eq 0 "$peer_rc" "peer verdict (an RDMA_DONE for each long reply)"
assert_grep 'NULL reply: rdma proc 0, credits 32, 5024 bytes' "$out/longmsg.tool"

# A call that cannot be expressed (256 segments > 64) fails through its
# callback from the event loop, never inside be_call_submit().
opts=(--max-seg 16 --expect-error "too big for the limits")
run_case toobig normal 32 chunky 2
assert_eq 0 "$tool_rc" "tool status"

# RDMA_MSGP replies (draft-08) are taken; the body starts after the header.
run_case msgp msgp 32 chunky 2
assert_eq 0 "$tool_rc" "tool status"
assert_grep 'NULL reply: rdma proc 2, credits 32, 24 bytes' "$out/msgp.tool"
