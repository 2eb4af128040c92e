#!/bin/bash
# claim: a blocked NFSv3 lock is granted through rpcrdma-gw: lockd's NLM4 GRANTED_MSG for a BLOCKED lock reaches the gateway (from its NLM backend's address) and the gateway relays it, with the client's ORIGINAL svid, to the NLM callback of the client host that blocked (found through that host's rpcbind) within 1 s, as straight to lockd; the other client (same svid and oh) hears nothing; GRANTED_RES goes back through the gateway and the server holds the lock; a GRANTED_MSG forged by a client is not relayed
#
#  netns cli                         root namespace                      netns gwn
#  host A 10.78.0.3 --+                                                  10.77.0.2:4001 --fwd--> lockd
#  host B 10.78.0.2 --+--tcp--> rpcrdma-gw 0.0.0.0:20480 --nlm, tcp-->   (lockd sees the gateway
#  (each: rpcbind :111,          (route nlm: backend 10.77.0.2:4001)      as 10.77.0.2)
#   NLM callback port) <--relay--  <--tcp 10.77.0.2:4002 --fwd-- lockd's GRANTED_MSG to 10.77.0.2
#                                                                 (rpcbind 10.77.0.2:111: NLM -> 4002)
#  baseline: A and B --tcp--> lockd 10.78.0.1:32803 directly, lockd calls back into cli
#
# One guest has one rpcbind per network namespace and the kernel lockd is
# registered in the root one, so each place lockd calls back (the client
# hosts, the gateway's address) is a namespace of its own with a fake
# rpcbind.  The forwarders in gwn are Python, not socat: socat is not in
# the guest (it shares the host's root file system, which has none).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20480
NLM_PORT=32803
CTL=${BUILD:-build}/rpcrdma-gwctl
out=/tmp/t80
mkdir -p "$out"

bed_nlm_server "$NLM_PORT" statd

step "network namespaces cli (10.78.0.2, .3) and gwn (10.77.0.2)"
bed_netns cli 10.78.0.1 10.78.0.2 10.78.0.3
bed_netns gwn 10.77.0.1 10.77.0.2

cp "$(dirname "$0")/rpcpeer.py" "$out/rpc.py"

# gwn: the gateway's address as lockd sees it.
cat >"$out/gwn.py" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
import rpc
gwport, lockd = int(sys.argv[2]), int(sys.argv[3])
rpc.forward("10.77.0.2", 4001, "10.77.0.1", lockd)    # the gateway's NLM calls
rpc.rpcbind("10.77.0.2", {100021: 4002})                         # lockd asks where NLM is
rpc.forward("10.77.0.2", 4002, "10.77.0.1", gwport)   # lockd's GRANTED_MSG
print("ready", flush=True)
while True:
    time.sleep(3600)
PY
step "gwn: forwarders 10.77.0.2:4001 -> lockd, 10.77.0.2:4002 -> the gateway; rpcbind NLM -> 4002"
ip netns exec gwn python3 "$out/gwn.py" "$out" "$PORT" "$NLM_PORT" >"$out/gwn.txt" 2>&1 &
gwn_pid=$!
bed_wait 10 "gwn's forwarders ready" grep -q ready "$out/gwn.txt"

gw_start "$PORT" "$out" "gateway.listen=0.0.0.0:$PORT" "gateway.control_socket=$out/control" \
	gateway.log_level=debug backend_lk.address=10.77.0.2 nlm.transport=tcp nlm.backend=lk \
	nlm.port=4001 nsm.transport=tcp nsm.backend=nfsd nfs.backend=nfsd mount.backend=nfsd

cat >"$out/nlm.py" <<'PY'
import socket, struct, sys, threading, time
sys.path.insert(0, sys.argv[1])
import rpc
from rpc import opaque, get_opaque

Peer = rpc.Peer

class Host:
    """One NLM client host: rpcbind on ADDR:111 naming its NLM callback
    service, which records each GRANTED (5) and GRANTED_MSG (10)."""
    def __init__(self, addr):
        self.addr, self.got = addr, []
        port = rpc.serve_tcp(addr, 0, self.handle)
        rpc.rpcbind(addr, {100021: port})
    def handle(self, d):
        xid, prog, vers, proc, args = rpc.parse_call(d)
        if prog != 100021 or proc not in (0, 5, 10):
            return struct.pack(">6I", xid, 1, 0, 0, 0, 3)
        if proc == 0:
            return rpc.reply(xid, b"")
        cookie, off = get_opaque(args, 0)
        off += 4                            # exclusive
        _, off = get_opaque(args, off)      # caller_name
        _, off = get_opaque(args, off)      # fh
        oh, off = get_opaque(args, off)
        svid = struct.unpack(">i", args[off:off + 4])[0]
        self.got.append((time.time(), proc, svid, oh, cookie))
        return rpc.reply(xid, opaque(cookie) + struct.pack(">I", 0) if proc == 5 else b"")
    def wait(self, secs):
        end = time.time() + secs
        while not self.got and time.time() < end:
            time.sleep(0.01)
        return self.got[0] if self.got else None

T, F = struct.pack(">I", 1), struct.pack(">I", 0)
COOKIE = opaque(b"c80")
# Both clients use the same owner: caller_name, oh and svid all equal.
def alock(fh, svid=1):
    return opaque(b"guest") + opaque(fh) + opaque(b"1@guest") + struct.pack(">iQQ", svid, 0, 0)
def stat_of(body):
    return rpc.nlm_stat(body)[0]
def lock(p, fh, block=False):
    end = time.time() + 40
    while True:   # lockd may still be in its grace period
        st = stat_of(p.call(100021, 4, 2, COOKIE + (T if block else F) + T + alock(fh) + F +
                            struct.pack(">i", 1)))
        if st != "DENIED_GRACE_PERIOD" or time.time() > end:
            return st
        time.sleep(1)
def unlock(p, fh):
    return stat_of(p.call(100021, 4, 4, COOKIE + alock(fh)))

def fh_of(port, name):
    return rpc.fh_of(Peer("10.78.0.2", "10.78.0.1", port), sys.argv[4], name)
server_try, say = rpc.server_try, rpc.say
def seen(host, secs):
    g = host.wait(secs)
    if g is None:
        return "nothing"
    return "proc %d svid %d oh %r" % (g[1], g[2], g[3].decode(errors="replace"))

def grant(label, port, f):
    """A locks F, B's blocking LOCK is BLOCKED, A unlocks: B's callback
    must hear GRANTED(_MSG); B answers GRANTED_RES to PORT."""
    a, b = Peer(A.addr, "10.78.0.1", port), Peer(B.addr, "10.78.0.1", port)
    say(label + " A lock", lock(a, fh[f]))
    say(label + " B blocking lock", lock(b, fh[f], block=True))
    say(label + " A unlock", unlock(a, fh[f]))
    t0 = time.time()
    g = B.wait(5)
    say(label + " B callback", seen(B, 0))
    say(label + " B callback within 1 s", "yes" if g and g[0] - t0 <= 1.0 else "no")
    if g:
        say(label + " B callback seconds", "%.3f" % (g[0] - t0))
        if g[1] == 10:   # GRANTED_RES (nlm4_res): lockd matches its cookie
            b.call(100021, 4, 15, opaque(g[4]) + struct.pack(">I", 0))
        end = time.time() + 3
        while server_try(exp + "/" + f) == "free" and time.time() < end:
            time.sleep(0.05)
    say(label + " A callback", seen(A, 0.2))
    say(label + " server " + f, server_try(exp + "/" + f))
    say(label + " B unlock", unlock(b, fh[f]))
    say(label + " server " + f + " at the end", server_try(exp + "/" + f))
    del B.got[:], A.got[:]

# nlm.py DIR GWPORT NLMPORT EXPORT STEP: one "key: value" line per check.
gw, lockd, exp, step = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
A, B = Host("10.78.0.3"), Host("10.78.0.2")
fh = {n: fh_of(gw, n) for n in ("f0", "f1", "f2")}
if step == "direct":
    grant("direct", lockd, "f0")
elif step == "gw":
    grant("gw", gw, "f1")
elif step == "forged":
    a, b = Peer(A.addr, "10.78.0.1", gw), Peer(B.addr, "10.78.0.1", gw)
    say("forged A lock f2", lock(a, fh["f2"]))
    # A's svid as B cannot know it: the raw one and the mapped one of the
    # first slots, (slot + 1) << 22 | svid.
    for svid in [1] + [(s + 1) << 22 | 1 for s in range(4)]:
        try:   # whatever the answer, or none: only A's callback counts
            b.call_any(100021, 4, 10, opaque(b"forged") + T + alock(fh["f2"], svid))
        except (AssertionError, OSError):
            b = Peer(B.addr, "10.78.0.1", gw)
    say("forged A callback", seen(A, 2))
    say("forged A unlock f2", unlock(a, fh["f2"]))
PY
for f in f0 f1 f2; do : >"$BED_EXPORT/$f"; done

# got KEY: the value printed for KEY
got() { sed -n "s/^$1: //p" "$out/$2.txt"; }
run() {
	timeout 60 ip netns exec cli python3 "$out/nlm.py" "$out" "$PORT" "$NLM_PORT" "$BED_EXPORT" "$1" \
		>"$out/$1.txt" 2>&1 || {
		sed 's/^/  /' "$out/$1.txt"
		bed_fail "nlm.py $1 failed"
	}
	sed 's/^/  /' "$out/$1.txt"
}
check_grant() {	# STEP FILE
	assert_eq GRANTED "$(got "$1 A lock" "$1")" "A's LOCK on $2"
	assert_eq BLOCKED "$(got "$1 B blocking lock" "$1")" "B's blocking LOCK on $2 while A holds it"
	assert_eq GRANTED "$(got "$1 A unlock" "$1")" "A's UNLOCK of $2"
	assert_eq "proc 10 svid 1 oh '1@guest'" "$(got "$1 B callback" "$1")" \
		"what B's NLM callback heard (GRANTED_MSG with B's own svid and oh)"
	assert_eq yes "$(got "$1 B callback within 1 s" "$1")" "B's grant within 1 s of A's UNLOCK"
	assert_eq nothing "$(got "$1 A callback" "$1")" "what A's NLM callback heard"
	assert_eq locked "$(got "$1 server $2" "$1")" "server-side lock attempt on $2 (B's after GRANTED_RES)"
	assert_eq GRANTED "$(got "$1 B unlock" "$1")" "B's UNLOCK of $2"
	assert_eq free "$(got "$1 server $2 at the end" "$1")" "$2 on the server after B's UNLOCK"
}

step "baseline: A and B straight to lockd, lockd calls B back"
run direct
check_grant direct f0

step "through the gateway: B's grant relayed to B"
run gw
check_grant gw f1

step "hostile: B forges a GRANTED_MSG for A's lock through the gateway"
run forged
assert_eq GRANTED "$(got 'forged A lock f2' forged)" "A's LOCK on f2"
assert_eq nothing "$(got 'forged A callback' forged)" "what A's NLM callback heard within 2 s"
assert_eq GRANTED "$(got 'forged A unlock f2' forged)" "A's UNLOCK of f2"

"$CTL" -s "$out/control" --json stats | python3 -c '
import json, sys
c = json.load(sys.stdin)["counters"]
print("  counters: " + " ".join("%s=%s" % (k, v) for k, v in sorted(c.items()) if k.startswith("nlm_")))
for k in ("nlm_grant_relayed", "nlm_grant_refused"):
    if c.get(k, 0) < 1:
        sys.exit("FAIL: counter %s = %s, expected >= 1" % (k, c.get(k)))'
kill "$gwn_pid"
gw_stop
gw_log_clean leak illegal-transition failed-calls
