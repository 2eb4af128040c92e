#!/bin/bash
# claim: the gateway contains a hostile RPC-over-RDMA server (tests/peer/rpcrdma-peer): a call it never answers ends at call_timeout with its client closed and its memory windows invalidated (the server's later RDMA Write into the call's write segment is refused by the device), a late reply and replayed replies are dropped as replies for no call with their log lines rate-limited, a server that reports a READ's whole write chunk but writes 100 bytes hands a second connection zeroes after them, never the bytes the first connection's WRITE left in the gateway's buffers (which that first connection does get back, the control), every client gets its answer or a close (never a hang), and the daemon lives on
#
#   python client --tcp--> rpcrdma-gw 127.0.0.1:20478 --rdma--> rpcrdma-peer :20078
#                          call_timeout 1500ms               (one mode per case)
#
#   t_78_gw_hostile_server.sh [CASE...]   cases: silent late replay short (default all)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PEER=${BUILD:-build}/peer/rpcrdma-peer
PORT=20478
PEER_PORT=20078
out=/tmp/t78
mkdir -p "$out"
cases=("$@")
[ "${#cases[@]}" -gt 0 ] || cases=(silent late replay short)

bed_rdma_up

# metric_sum ERE: the sum of the /metrics samples whose name{labels} match.
metric_sum() {
	curl -sf "http://127.0.0.1:9466/metrics" |
		awk -v re="$1" '$1 !~ /^#/ && $1 ~ re { s += $2 } END { printf "%d\n", s }'
}

# metric_is ERE N: that sum is N (for bed_wait).
metric_is() { [ "$(metric_sum "$1")" = "$2" ]; }

# The client: MODE silent (an NFSv3 READ of 64 KiB: a write chunk), late (a
# NULL call) or replay (N pipelined NULL calls).  Prints what it got: each
# reply checked against the calls not yet answered, or "closed after S s"; never waits more
# than 20 s for a byte ("hang" then, and status 1).
cat >"$out/client.py" <<'PY'
import socket, struct, sys, time
mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def rec(body):
    return struct.pack(">I", 0x80000000 | len(body)) + body

def null_call(xid):
    return rec(struct.pack(">10I", xid, 0, 2, 100003, 3, 0, 0, 0, 0, 0))

def read_call(xid, count=65536):
    name = b"t78\0"
    cred = struct.pack(">II", 0, 3) + name + struct.pack(">III", 0, 0, 0)
    args = struct.pack(">I", 8) + b"\x01" * 8 + struct.pack(">QI", 0, count)
    return rec(struct.pack(">6I", xid, 0, 2, 100003, 3, 6) + struct.pack(">II", 1, len(cred))
               + cred + struct.pack(">II", 0, 0) + args)

def read_exact(s, k):
    b = b""
    while len(b) < k:
        try:
            d = s.recv(k - len(b))
        except socket.timeout:
            print("hang: no byte for 20 s")
            sys.exit(1)
        if not d:
            return None
        b += d
    return b

def write_call(xid, data):
    name = b"t78\0"
    cred = struct.pack(">II", 0, 3) + name + struct.pack(">III", 0, 0, 0)
    args = struct.pack(">I", 8) + b"\x01" * 8 + struct.pack(">QIII", 0, len(data), 2, len(data)) + data
    return rec(struct.pack(">6I", xid, 0, 2, 100003, 3, 7) + struct.pack(">II", 1, len(cred))
               + cred + struct.pack(">II", 0, 0) + args)

def one_reply(s, xid):
    m = read_exact(s, 4)
    if m is None:
        print("closed")
        sys.exit(1)
    body = read_exact(s, struct.unpack(">I", m)[0] & 0x7fffffff)
    if body is None or struct.unpack(">I", body[:4])[0] != xid:
        print("bad reply")
        sys.exit(1)
    return body

def read_data(s, xid, count):
    # READ3res after the 24-byte RPC header: status, no attributes, count,
    # eof, data length, data
    s.sendall(read_call(xid, count))
    body = one_reply(s, xid)
    st, follows, cnt, eof, dlen = struct.unpack(">5I", body[24:44])
    if st != 0 or follows != 0 or dlen != count:
        print("READ3res status %d attr %d data length %d" % (st, follows, dlen))
        sys.exit(1)
    data = body[44:44 + dlen]
    return "ab %d secret %d zero %d other %d" % (data.count(0xab), data.count(0x5e), data.count(0),
                                                  len(data) - data.count(0xab) - data.count(0x5e)
                                                  - data.count(0))

if mode in ("victim", "stranger"):
    # victim: a WRITE of n bytes of 0x5e (its "secret") over its connection,
    # then a READ of n on the same connection; stranger: a READ of n on a
    # new connection.  Each prints what the READ data held.
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(20)
    if mode == "victim":
        s.sendall(write_call(0x78100000, b"\x5e" * n))
        one_reply(s, 0x78100000)
    print(mode + " read: " + read_data(s, 0x78100001, n))
    s.close()
    sys.exit(0)

s = socket.create_connection(("127.0.0.1", port))
s.settimeout(20)
t0 = time.time()
xids = [0x78000000 + i for i in range(n)]
s.sendall(b"".join((read_call if mode == "silent" else null_call)(x) for x in xids))
# Replies in any order (RPC promises none; with two RDMA connections
# the gateway's calls alternate and the peer answers each connection on its
# own), but each to a call not answered yet.
got, left = 0, set(xids)
while got < n:
    m = read_exact(s, 4)
    if m is None:
        print("closed after %.1f s, %d of %d replies" % (time.time() - t0, got, n))
        sys.exit(0)
    body = read_exact(s, struct.unpack(">I", m)[0] & 0x7fffffff)
    if body is None or struct.unpack(">I", body[:4])[0] not in left:
        print("bad reply %d" % got)
        sys.exit(1)
    left.discard(struct.unpack(">I", body[:4])[0])
    got += 1
print("%d replies, each to its call, in %.1f s" % (got, time.time() - t0))
PY

# start_case NAME MODE [ENV=VALUE...]: the peer in MODE, then a gateway
# whose NFS route goes to it, with as many workers as GW_WORKERS says
# (lib.sh's gw_conf).  Each worker opens its own RDMA connections (two for
# one worker, one each for several) to the peer, and rpcrdma-peer serves each with its own state, MODE applied per
# connection; its status is the worst of its connections' verdicts.  The
# python clients all connect from 127.0.0.1, so with workers = N they land
# on one worker (gw_worker_pick hashes the source address) and the other
# workers' connections stay idle: victim and stranger of "short" share a
# worker and its buffers.  What is checked here is per connection.
start_case() {
	local name=$1 mode=$2
	shift 2
	mkdir -p "$out/$name"
	step "$name: rpcrdma-peer mode $mode${*:+ ($*)}"
	env PEER_CCP=unavail "$@" timeout 60 "$PEER" "$BED_IP" "$PEER_PORT" "$mode" 32 \
		>"$out/$name/peer.log" 2>&1 &
	peer_pid=$!
	bed_wait 20 "rpcrdma-peer listening" \
		sh -c "rdma resource show cm_id | grep -q 'state LISTEN.*src-addr $BED_IP:$PEER_PORT'"
	gw_start "$PORT" "$out/$name" "backend.rdma_port=$PEER_PORT" nfs.fallback=none \
		gateway.call_timeout=1500ms ${case_gw[@]+"${case_gw[@]}"}
}

# end_case NAME: the gateway still serves /metrics and stops cleanly; the
# peer's status in $peer_rc.
end_case() {
	gw_alive
	metric_sum . >/dev/null		# /metrics still served
	gw_stop
	bed_poll 5 bed_gone "$peer_pid" || true
	kill "$peer_pid" 2>/dev/null || true
	peer_rc=0
	wait "$peer_pid" || peer_rc=$?
	sed 's/^/  peer: /' "$out/$1/peer.log" | tail -8
}

for c in "${cases[@]}"; do
	case "$c" in
	silent)
		# Never answered: closed at call_timeout; 4 s after the call the
		# peer writes into its write segment, by then invalidated.
		start_case silent silent PEER_PROBE_MS=4000
		python3 "$out/client.py" silent "$PORT" 1 | tee "$out/silent/client.txt"
		assert_grep '^closed after' "$out/silent/client.txt"
		bed_wait 20 "the peer's probe" grep -q 'probe ' "$out/silent/peer.log"
		assert_eq 1 "$(metric_sum '^rpcrdma_gw_call_timeouts_total')" "call_timeouts_total"
		assert_grep 'call cancelled, client connection closed' "$out/silent/gw.log"
		end_case silent
		assert_grep 'probe refused' "$out/silent/peer.log"
		assert_eq 0 "$peer_rc" "peer verdict (0 = the late write was refused)"
		;;
	late)
		# Answered after 4 s, call_timeout 1.5 s: the client is closed
		# first, the reply dropped when it comes.
		start_case late late PEER_LATE_MS=4000
		python3 "$out/client.py" late "$PORT" 1 | tee "$out/late/client.txt"
		assert_grep '^closed after' "$out/late/client.txt"
		assert_eq 1 "$(metric_sum '^rpcrdma_gw_call_timeouts_total')" "call_timeouts_total"
		bed_wait 20 "the late reply dropped as for no call" metric_is \
			'^rpcrdma_gw_rdma_dropped_replies_total.*unknown_xid' 1
		assert_grep 'no such call' "$out/late/gw.log"
		end_case late
		;;
	replay)
		# 300 replies, each sent twice: 300 answers, 300 drops, and the
		# backend's "no such call" lines held by the per-server rate limit.
		start_case replay replay
		python3 "$out/client.py" replay "$PORT" 300 | tee "$out/replay/client.txt"
		assert_grep '^300 replies, each to its call' "$out/replay/client.txt"
		bed_wait 30 "300 replayed replies dropped" metric_is \
			'^rpcrdma_gw_rdma_dropped_replies_total.*unknown_xid' 300
		lines=$(grep -c 'no such call' "$out/replay/gw.log" || true)
		suppressed=$(metric_sum '^rpcrdma_gw_log_suppressed_total')
		step "replay: $lines 'no such call' lines logged, $suppressed lines suppressed"
		[ "$lines" -lt 150 ] || bed_fail "replay: $lines 'no such call' lines for 300 replays (no rate limit)"
		[ "$suppressed" -gt 0 ] || bed_fail "replay: nothing suppressed"
		assert_eq 0 "$(metric_sum '^rpcrdma_gw_call_timeouts_total')" "no call timed out"
		end_case replay
		;;
	short)
		# Reports a READ's whole write chunk but writes 100 bytes: the
		# rest is what the gateway's buffers held.  A connection may get
		# its own earlier bytes back (the control: they do come through),
		# another connection only zeroes, never those bytes.
		# A small pool: the victim's READ target finds the buffers its
		# WRITE came in (a run's placement looks at a bounded number of
		# free runs from the top, gateway/pool.c), so its own bytes can
		# come back.
		case_gw=(gateway.buffers=32 gateway.max_record=262144)
		start_case short short
		case_gw=()
		python3 "$out/client.py" victim "$PORT" 196608 | tee "$out/short/victim.txt"
		s1=$(metric_sum '^rpcrdma_gw_scrubbed_bytes_total')
		python3 "$out/client.py" stranger "$PORT" 196608 | tee "$out/short/stranger.txt"
		s2=$(metric_sum '^rpcrdma_gw_scrubbed_bytes_total')
		assert_grep '^victim read: ab 100 ' "$out/short/victim.txt"
		grep -Eq '^victim read: .* secret [1-9]' "$out/short/victim.txt" ||
			bed_fail "short: control failed: the victim's own bytes did not come through, so the stranger's check proves nothing"
		assert_grep '^stranger read: ab 100 secret 0 zero 196508 other 0$' "$out/short/stranger.txt"
		step "short: target bytes zeroed: $s1 for the victim, $((s2 - s1)) for the stranger"
		# The stranger's targets are buffers never written while the
		# pool has such a run (nothing to zero), else someone's, zeroed
		# whole; never part of them (tests/unit/test_gw_pool.c t09 takes
		# the second way on purpose).
		[ $((s2 - s1)) -eq 0 ] || [ $((s2 - s1)) -ge 196608 ] ||
			bed_fail "short: the stranger's 192 KiB of targets zeroed only $((s2 - s1)) B"
		end_case short
		;;
	*) bed_fail "unknown case $c" ;;
	esac
done
