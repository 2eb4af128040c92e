#!/bin/bash
# claim: NFSv4.0 delegations work through rpcrdma-gw at an edge the server cannot reach: the gateway rewrites SETCLIENTID's cb_location to its own callback listener (v40_callbacks = relay), the server's CB_NULL and CB_RECALL are relayed to the client's callback service and answered; a read delegation is granted through the gateway and a server-side write open recalls it within 2x + 1 s of the same on a direct v4.0 mount; with v40_callbacks = off no delegation is granted and the write open does not wait; 300 more v4.0 client ids from five addresses are each answered and each one's CB_NULL relayed, with no registration forgotten, and the kernel client's delegation is still recalled
#
#   netns edge: v4.0 client --tcp 127.0.0.1:20476--> rpcrdma-gw --tcp (veth 10.88.0.2)--> nfsd 10.99.0.1
#               callback service 127.0.0.1:P  <-- relay <-- listener 10.88.0.2:L <-- nfsd CB_NULL, CB_RECALL
# The client's own cb_location (127.0.0.1 of the edge namespace) is
# unreachable from the server: without the relay nfsd's CB_NULL probe fails
# and it hands out no delegation (the scenario fails on a gateway that
# passes cb_location through).  The backend leg is TCP: the edge namespace
# has no RDMA device; the relay does not depend on the backend transport.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20476
out=/tmp/t76
mkdir -p "$out"
EDGE=10.88.0.2

bed_nfsd_up
bed_nfs_client_modules
step "edge network namespace: veth $EDGE <-> 10.88.0.1, default route to the server"
ip netns add edge
ip link add e0 type veth peer name e1
ip link set e1 netns edge
ip addr add 10.88.0.1/24 dev e0
ip link set e0 up
ip netns exec edge ip addr add "$EDGE/24" dev e1
ip netns exec edge ip link set e1 up
ip netns exec edge ip link set lo up
ip netns exec edge ip route add default via 10.88.0.1
export GW_ADMIN=$EDGE:9466
start_gw() {	# MODE
	GW_NETNS=edge gw_start "$PORT" "$out" nfs.transport=tcp backend.port=2049 \
		"gateway.admin_listen=$GW_ADMIN" "gateway.v40_callbacks=$1"
}
edge() { nsenter --net=/run/netns/edge "$@"; }

cat >"$out/cb.py" <<'PY'
import os, sys, time
cmd = sys.argv[1]
if cmd == "read":		# PATH FLAG: open for reading, keep open until FLAG exists
    f = open(sys.argv[2], "rb")
    f.read()
    print("open", flush=True)
    while not os.path.exists(sys.argv[3]):
        time.sleep(0.05)
    f.close()
elif cmd == "wopen":		# PATH: open for writing; seconds it took
    t0 = time.time()
    f = open(sys.argv[2], "ab")
    print("%.2f" % (time.time() - t0), flush=True)
    f.close()
PY
# fleet.py N PORT SRC...: N NFSv4.0 clients, each its own nfs_client_id4,
# spread over the source addresses SRC, SETCLIENTID and SETCLIENTID_CONFIRM
# through the gateway (127.0.0.1:PORT), each naming a callback service on
# its own source address that answers CB_NULL; every call must be answered
# NFS4_OK within the socket's 30 s (a hung worker fails it).
cat >"$out/fleet.py" <<'PY'
import os, struct, sys, time
sys.path.insert(0, os.path.dirname(sys.argv[0]))
from rpc import Peer, opaque, parse_call, reply, serve_tcp
n, port, srcs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
cbport = serve_tcp("0.0.0.0", 0, lambda d: reply(parse_call(d)[0], b""))
peers = [Peer(a, "127.0.0.1", port) for a in srcs]
def compound(p, ops):
    res = p.call(100003, 4, 1, opaque(b"") + struct.pack(">II", 0, len(ops)) + b"".join(ops))
    st = struct.unpack(">I", res[:4])[0]
    assert st == 0, "COMPOUND status %d" % st
    return res[16:]          # status, empty tag, count, op: the op's own result
t0 = time.time()
for i in range(n):
    p, a = peers[i % len(peers)], srcs[i % len(srcs)]
    ua = ("%s.%d.%d" % (a, cbport >> 8, cbport & 255)).encode()
    r = compound(p, [struct.pack(">I", 35) + os.urandom(8) + opaque(b"fleet-client-%d" % i) +
                     struct.pack(">I", 0x40000000) + opaque(b"tcp") + opaque(ua) + struct.pack(">I", 1)])
    assert struct.unpack(">I", r[:4])[0] == 0, "SETCLIENTID %d" % i
    compound(p, [struct.pack(">I", 36) + r[4:20]])
print("fleet: %d clients registered in %.1f s" % (n, time.time() - t0), flush=True)
time.sleep(float(os.environ.get("FLEET_LINGER", "0")))
PY
cp "$(dirname "$0")/rpcpeer.py" "$out/rpc.py"
deleg_of() {	# FILE NAME: a delegation on it in nfsd's client states, whose
	# filename is the path from the export's root ("/NAME" here); exact, so
	# the warm-up file's own delegation does not count
	cat /proc/fs/nfsd/clients/*/states 2>/dev/null | grep 'type: deleg' | grep -qF "filename: \"/$1\""
}
deleg_gone() { ! deleg_of "$1"; }
# recall MNT NAME WANT: reader holds NAME open on MNT; WANT=yes: a
# delegation must show up; then a server-side write open: its seconds in rw.
# nfsd gives none while locks are in grace (lockd's and its own, 10 s each
# in the bed: lib.sh), nor on the first OPEN of a v4.0 open owner (not
# confirmed yet: OPEN_CONFIRM): a warm-up open first, and the read open
# again until one comes.
recall() {
	local mnt=$1 f=$2 want=$3 i reader
	echo "data of $f" >"$BED_EXPORT/$f"
	echo warm >"$BED_EXPORT/w-$f"
	sleep 1		# nfsd refuses delegations on files changed very recently
	for ((i = 0; i < 15; i++)); do
		cat "$mnt/w-$f" >/dev/null
		rm -f "$out/close"
		python3 "$out/cb.py" read "$mnt/$f" "$out/close" >"$out/open-$f" &
		reader=$!
		bed_wait 40 "the client's read open of $f" grep -q open "$out/open-$f"
		sleep 3
		if deleg_of "$f" || [ "$want" != yes ]; then break; fi
		touch "$out/close"
		wait "$reader"
	done
	if [ "$want" = yes ]; then
		deleg_of "$f" || bed_fail "no delegation on $f in /proc/fs/nfsd/clients/*/states after $i opens"
		step "a delegation on $f (read open $((i + 1)))"
	elif deleg_of "$f"; then
		bed_fail "a delegation on $f although callbacks are off"
	fi
	rw=$(timeout 60 python3 "$out/cb.py" wopen "$BED_EXPORT/$f")
	[ -n "$rw" ] || bed_fail "the server-side write open of $f failed"
	# DELEGRETURN lets the write open go before nfsd drops the stateid
	# from its states file (t_76 run 2 saw it still listed just after).
	bed_wait 5 "the delegation on $f gone from nfsd's states" deleg_gone "$f"
	touch "$out/close"
	wait "$reader"
}

step "direct v4.0 mount (the reference): delegation and recall without the gateway"
mkdir -p /mnt/d40 /mnt/g40
timeout 60 mount -t nfs -o vers=4.0,proto=tcp "$BED_IP:/" /mnt/d40
# nfsd's grace period (10 s) first: OPENs are refused until it is over.
sleep 11
recall /mnt/d40 direct yes
wd=$rw
step "direct: server-side write open took $wd s"
timeout 60 umount /mnt/d40

# T76_RELAY=passthrough leaves cb_location alone, as the gateway did before
# the relay: the delegation is then never granted (the step fails).
start_gw "${T76_RELAY:-relay}"
step "v4.0 mount through the gateway from the edge namespace"
edge timeout 90 mount -t nfs -o "vers=4.0,proto=tcp,port=$PORT" 127.0.0.1:/ /mnt/g40
assert_mount_opt /mnt/g40 "vers=4.0"
bed_wait 10 "SETCLIENTID rewritten by the gateway" grep -q 'SETCLIENTID from .* -> tcp ' "$out/gw.log"
grep -m 2 'SETCLIENTID from' "$out/gw.log" | sed 's/^/  /'
r0=$(gw_metric rpcrdma_gw_cb40_relayed_total)
recall /mnt/g40 relayed yes
wg=$rw
r1=$(gw_metric rpcrdma_gw_cb40_relayed_total)
step "through the gateway: server-side write open took $wg s (direct $wd s); callback replies relayed: $((r1 - r0)) (in all $r1)"
assert_eq 1 "$(awk -v g="$wg" -v d="$wd" 'BEGIN { print (g <= 2 * d + 1) }')" "write open within 2x + 1 s of direct"
assert_eq 1 "$(( r1 - r0 >= 1 && r1 >= 2 ))" "CB_NULL and CB_RECALL replies relayed (cb40_relayed_total)"
for why in unparsed no_client connect timeout full bad; do
	assert_eq 0 "$(gw_metric "rpcrdma_gw_cb40_failed_total{reason=\"$why\"}")" "cb40 failures $why"
done
# A fleet: 300 more NFSv4.0 client ids from five addresses of the edge
# host (the 257th hung the worker for ever): each answered, nfsd's CB_NULL
# probe of each (one connection per client) relayed to its service, no
# registration forgotten, and the kernel client's delegation still recalled.
step "a fleet: 300 more NFSv4.0 client ids through the relay, from 5 addresses"
fleet=()
for i in 3 4 5 6 7; do
	ip netns exec edge ip addr add "10.88.0.$i/24" dev e1
	fleet+=("10.88.0.$i")
done
e0=$(gw_metric 'rpcrdma_gw_cb40_setclientid_total{action="evicted"}')
r0=$(gw_metric rpcrdma_gw_cb40_relayed_total)
FLEET_LINGER=40 edge timeout 300 python3 "$out/fleet.py" 300 "$PORT" "${fleet[@]}" >"$out/fleet.out" 2>&1 &
fleet_pid=$!
bed_wait 200 "the fleet registered" grep -q 'fleet: 300 clients registered' "$out/fleet.out"
cat "$out/fleet.out"
relayed_at_least() { [ "$(gw_metric rpcrdma_gw_cb40_relayed_total)" -ge "$1" ]; }
bed_wait 60 "nfsd's CB_NULL of each fleet client relayed" relayed_at_least $((r0 + 300))
kill "$fleet_pid" 2>/dev/null || true
wait "$fleet_pid" 2>/dev/null || true
e1=$(gw_metric 'rpcrdma_gw_cb40_setclientid_total{action="evicted"}')
step "registrations forgotten: $((e1 - e0)); callback replies relayed: $(( $(gw_metric rpcrdma_gw_cb40_relayed_total) - r0 ))"
assert_eq "$e0" "$e1" "no registration forgotten (cb40 evicted)"
for why in full peer; do
	assert_eq 0 "$(gw_metric "rpcrdma_gw_cb40_failed_total{reason=\"$why\"}")" "cb40 failures $why"
done
python3 -c "import urllib.request as u; u.urlopen('http://$GW_ADMIN/healthz', timeout=10)" ||
	bed_fail "/healthz after the fleet"
recall /mnt/g40 after-fleet yes
step "after the fleet: the kernel client's delegation recalled in $rw s"
timeout 60 umount /mnt/g40
grep -m 12 -E 'v4.0 callback|SETCLIENTID|clientid' "$out/gw.log" | sed 's/^/  /'
gw_stop

step "v40_callbacks = off: no delegation, no wait"
start_gw off
edge timeout 90 mount -t nfs -o "vers=4.0,proto=tcp,port=$PORT" 127.0.0.1:/ /mnt/g40
recall /mnt/g40 cleared no
wo=$rw
step "callbacks off: server-side write open took $wo s"
assert_eq 1 "$(awk -v w="$wo" 'BEGIN { print (w < 2) }')" "write open within 2 s (no delegation to recall)"
# (the client may send SETCLIENTID more than once: each is cleared)
assert_eq 1 "$(( $(gw_metric 'rpcrdma_gw_cb40_setclientid_total{action="cleared"}') >= 1 ))" "SETCLIENTID cb_location cleared"
timeout 60 umount /mnt/g40
