#!/bin/bash
# claim: NFSv3 locks stay per-client through rpcrdma-gw: two NLM v4 clients on different addresses (A 127.0.0.3, B 127.0.0.2) whose lock owners carry the SAME svid, owner handle and caller_name lock the same file; straight to the server's lockd the second is DENIED and NLM TEST names the holder; through the gateway (route nlm over TCP) it must be the same, TEST's answer included (the gateway maps each client's svid to one of its own); then client A "reboots" (SM_NOTIFY from A's address to the gateway as nfs-utils' sm-notify sends it, one UDP datagram to the gateway's NSM socket; a retransmission is only answered): A's locks are released on the server, B's lock survives; A locks again and reboots again, this time with SM_NOTIFY over TCP: the same
#
#   NLM4 client A (127.0.0.3) --+
#                               +--tcp--> rpcrdma-gw 127.0.0.1:20497 --nlm, tcp--> lockd :32803
#   NLM4 client B (127.0.0.2) --+          (SM_NOTIFY from A, udp or tcp:   (server-side fcntl
#                                           answered, A's locks released)    checks on the files)
#   baseline: A and B --tcp--> lockd 127.0.0.1:32803 directly
#
# A raw NLM client, not two kernel mounts: one guest has one kernel lockd,
# and the test needs owners that collide on purpose (same svid, same oh,
# same caller_name) from two addresses, which only the address tells apart.
# With workers = 2, A's address picks worker 1 and B's worker 0, where the
# UDP NSM socket is: A's datagram crosses to A's worker.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20497
NLM_PORT=32803
CTL=${BUILD:-build}/rpcrdma-gwctl
out=/tmp/t77
mkdir -p "$out"

bed_nlm_server "$NLM_PORT" statd

gw_start "$PORT" "$out" "gateway.control_socket=$out/control" gateway.log_level=debug \
	nlm.transport=tcp "nlm.port=$NLM_PORT" nsm.transport=tcp

cp "$(dirname "$0")/rpcpeer.py" "$out/rpc.py"
cat >"$out/nlm.py" <<'PY'
import os, socket, struct, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rpc
from rpc import auth_unix, opaque
Peer = rpc.Peer

T, F = struct.pack(">I", 1), struct.pack(">I", 0)
COOKIE = opaque(b"c77")
# Both clients use the same owner: caller_name, oh and svid all equal.
def alock(fh, svid=1):
    return opaque(b"guest") + opaque(fh) + opaque(b"%d@guest" % svid) + struct.pack(">iQQ", svid, 0, 0)
stat_of = rpc.nlm_stat
def lock(p, fh, svid=1):
    end = time.time() + 40
    while True:   # lockd may still be in its grace period
        st, _ = stat_of(p.call(100021, 4, 2, COOKIE + F + T + alock(fh, svid) + F + struct.pack(">i", 1)))
        if st != "DENIED_GRACE_PERIOD" or time.time() > end:
            return st
        time.sleep(1)
def test(p, fh, svid=1):
    st, rest = stat_of(p.call(100021, 4, 1, COOKIE + T + alock(fh, svid)))
    if st == "DENIED":   # nlm4_holder: exclusive, svid, oh, ...
        return "DENIED holder svid %d" % struct.unpack(">i", rest[4:8])[0]
    return st
def unlock(p, fh, svid=1):
    return stat_of(p.call(100021, 4, 4, COOKIE + alock(fh, svid)))[0]
sm_notify = rpc.sm_notify
def sm_notify_udp(src, port, name, state):
    """As sm-notify sends it: one datagram from SRC; the void reply."""
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind((src, 0))
    u.settimeout(5)
    xid = int.from_bytes(os.urandom(4), "big")
    u.sendto(struct.pack(">6I", xid, 0, 2, 100024, 1, 6) + auth_unix() + struct.pack(">II", 0, 0) +
             opaque(name) + struct.pack(">i", state), ("127.0.0.1", port))
    try:
        r = u.recv(512)
    except OSError as e:
        return "no answer (%s)" % e
    finally:
        u.close()
    ok = struct.unpack(">5I", r[:20]) == (xid, 1, 0, 0, 0) and r[20:24] == b"\0" * 4
    return "answered" if ok else "refused"
def wait_free(path):
    end = time.time() + 5
    while server_try(path) == "locked" and time.time() < end:
        time.sleep(0.1)
    return server_try(path)

def fh_of(port, name):
    return rpc.fh_of(Peer("127.0.0.1", "127.0.0.1", port), sys.argv[3], name)
server_try = rpc.server_try

# nlm.py GWPORT NLMPORT EXPORT: prints one "key: value" line per check.
gw, lockd = int(sys.argv[1]), int(sys.argv[2])
A, B = "127.0.0.3", "127.0.0.2"   # A: worker 1 of 2, B: worker 0
fh = {n: fh_of(gw, n) for n in ("f0", "f1", "f2")}
exp = sys.argv[3]
say = rpc.say
step = sys.argv[4]
if step == "direct":
    a, b = Peer(A, "127.0.0.1", lockd), Peer(B, "127.0.0.1", lockd)
    say("direct A lock f0", lock(a, fh["f0"]))
    say("direct B lock f0", lock(b, fh["f0"]))
    say("direct B test f0", test(b, fh["f0"]))
    say("direct A unlock f0", unlock(a, fh["f0"]))
    say("direct B lock f0 after", lock(b, fh["f0"]))
    say("direct B unlock f0", unlock(b, fh["f0"]))
elif step == "gw":
    a, b = Peer(A, "127.0.0.1", gw), Peer(B, "127.0.0.1", gw)
    say("gw A lock f1", lock(a, fh["f1"]))
    say("gw B lock f1", lock(b, fh["f1"]))
    say("gw B test f1", test(b, fh["f1"]))
    say("gw A test f1", test(a, fh["f1"]))
    say("gw B lock f2", lock(b, fh["f2"]))
    say("gw A test f2", test(a, fh["f2"]))
    say("server f1", server_try(exp + "/f1"))
    say("server f2", server_try(exp + "/f2"))
    say("gw A sm_notify udp", sm_notify_udp(A, gw, A.encode(), 3))
    say("server f1 after A's reboot", wait_free(exp + "/f1"))
    say("server f2 after A's reboot", server_try(exp + "/f2"))
    say("gw A test f2 after A's reboot", test(a, fh["f2"]))
    say("gw A lock f1 again", lock(a, fh["f1"]))
    say("server f1 locked again", server_try(exp + "/f1"))
    # sm-notify retransmits until answered: the same state again is answered only
    say("gw A sm_notify udp again", sm_notify_udp(A, gw, A.encode(), 3))
    time.sleep(1)
    say("server f1 after the retransmission", server_try(exp + "/f1"))
    say("gw A sm_notify tcp", sm_notify(Peer(A, "127.0.0.1", gw), A.encode(), 5))
    say("server f1 after A's reboot over tcp", wait_free(exp + "/f1"))
    say("server f2 after A's reboot over tcp", server_try(exp + "/f2"))
    say("gw B unlock f2", unlock(b, fh["f2"]))
    say("server f2 at the end", server_try(exp + "/f2"))
PY
for f in f0 f1 f2; do : >"$BED_EXPORT/$f"; done

# got KEY: the value printed for KEY
got() { sed -n "s/^$1: //p" "$out/$2.txt"; }
run() {
	timeout 120 python3 "$out/nlm.py" "$PORT" "$NLM_PORT" "$BED_EXPORT" "$1" >"$out/$1.txt" 2>&1 || {
		sed 's/^/  /' "$out/$1.txt"
		bed_fail "nlm.py $1 failed"
	}
	sed 's/^/  /' "$out/$1.txt"
}

step "baseline: A and B straight to lockd, same svid, oh and caller_name"
run direct
assert_eq GRANTED "$(got 'direct A lock f0' direct)" "A's LOCK on f0"
assert_eq DENIED "$(got 'direct B lock f0' direct)" "B's LOCK on f0 while A holds it (lockd: another host)"
# The holder's svid is whatever lockd reports: Linux 6.1 answered a number
# of its own (187 in one run), not the holder's svid 1; through the gateway
# the answer must be the same.
holder=$(got 'direct B test f0' direct)
case "$holder" in "DENIED holder svid "*) ;; *) bed_fail "B's TEST on f0: $holder" ;; esac
assert_eq GRANTED "$(got 'direct B lock f0 after' direct)" "B's LOCK on f0 after A's UNLOCK"

step "through the gateway: the same two clients"
run gw
assert_eq GRANTED "$(got 'gw A lock f1' gw)" "A's LOCK on f1"
assert_eq DENIED "$(got 'gw B lock f1' gw)" "B's LOCK on f1 while A holds it"
assert_eq "$holder" "$(got 'gw B test f1' gw)" "B's TEST on f1 (as straight to lockd)"
assert_eq GRANTED "$(got 'gw A test f1' gw)" "A's TEST on its own lock"
assert_eq GRANTED "$(got 'gw B lock f2' gw)" "B's LOCK on f2"
assert_eq "$holder" "$(got 'gw A test f2' gw)" "A's TEST on f2 (B holds it)"
assert_eq locked "$(got 'server f1' gw)" "server-side lock attempt on f1 (A's)"
assert_eq locked "$(got 'server f2' gw)" "server-side lock attempt on f2 (B's)"
step "client A reboots: SM_NOTIFY from A's address, a UDP datagram as sm-notify sends it"
assert_eq answered "$(got 'gw A sm_notify udp' gw)" "the gateway's answer to A's SM_NOTIFY over UDP"
assert_eq free "$(got "server f1 after A's reboot" gw)" "f1 on the server after A's SM_NOTIFY (A's lock released)"
assert_eq locked "$(got "server f2 after A's reboot" gw)" "f2 on the server after A's SM_NOTIFY (B's lock survives)"
assert_eq "$holder" "$(got "gw A test f2 after A's reboot" gw)" "A's TEST on f2 after its reboot"
assert_eq GRANTED "$(got 'gw A lock f1 again' gw)" "A's LOCK on f1 after its reboot"
assert_eq locked "$(got 'server f1 locked again' gw)" "f1 on the server, A's again"
assert_eq answered "$(got 'gw A sm_notify udp again' gw)" "the answer to a retransmission (same state)"
assert_eq locked "$(got 'server f1 after the retransmission' gw)" "f1 after the retransmission (not a second reboot)"
step "client A reboots again: SM_NOTIFY over TCP"
assert_eq free "$(got "server f1 after A's reboot over tcp" gw)" "f1 on the server after A's SM_NOTIFY over TCP"
assert_eq locked "$(got "server f2 after A's reboot over tcp" gw)" "f2 on the server after A's SM_NOTIFY over TCP"
assert_eq free "$(got 'server f2 at the end' gw)" "f2 on the server after B's UNLOCK"

"$CTL" -s "$out/control" --json stats | python3 -c '
import json, sys
c = json.load(sys.stdin)["counters"]
print("  counters: " + " ".join("%s=%s" % (k, v) for k, v in sorted(c.items())
                                 if k.startswith(("nlm_", "nsm_"))))
for k, want in (("nlm_client_reboots", 2), ("nsm_udp_notify", 1), ("nsm_udp_duplicate", 1)):
    if c.get(k, 0) != want:
        sys.exit("FAIL: counter %s = %s, expected %d" % (k, c.get(k), want))'
gw_stop
gw_log_clean leak illegal-transition failed-calls
