#!/bin/bash
# claim: rping over Soft-RoCE to 10.99.0.1 succeeds: 10 validated 64-byte pings, client and server exit 0
#
#   rping -c ---- rdma_cm / RC QP ----> rping -s
#        \                              /
#         +------ rxe0 on d0 (dummy, 10.99.0.1/24) ------+
#
# Proves the bed itself: Soft-RoCE gives user space working verbs and
# rdma_cm (connect, SEND, RDMA READ/WRITE), which the gateway's backend needs.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

COUNT=10
PORT=7174
out=/tmp/rping
mkdir -p "$out"

bed_rdma_up

step "rping server on $BED_IP:$PORT"
timeout 60 rping -s -a "$BED_IP" -p "$PORT" -C "$COUNT" -S 64 -V -v >"$out/server" 2>&1 &
server=$!
# The server is ready once its rdma_cm id listens.
bed_wait 20 "rping server listening" \
	sh -c "rdma resource show cm_id | grep -q 'state LISTEN.*src-addr $BED_IP:$PORT'"

step "rping client, $COUNT pings"
rc=0
timeout 60 rping -c -a "$BED_IP" -p "$PORT" -C "$COUNT" -S 64 -V -v >"$out/client" 2>&1 || rc=$?
src=0
wait "$server" || src=$?
sed 's/^/  client: /' "$out/client"
sed 's/^/  server: /' "$out/server"

assert_eq 0 "$rc" "rping client exit status"
assert_eq 0 "$src" "rping server exit status"
assert_eq "$COUNT" "$(grep -c '^ping data: rdma-ping-' "$out/client")" "pings the client saw"
assert_eq "$COUNT" "$(grep -c '^server ping data: rdma-ping-' "$out/server")" "pings the server saw"
