#!/bin/bash
# claim: NLM SHARE reservations stay per client through rpcrdma-gw: two NLM v4 clients on 127.0.0.2 and 127.0.0.3 with the SAME oh and caller_name; straight to lockd B's conflicting SHARE is DENIED, and through the gateway it must be too; A's UNSHARE leaves B's share in place (a third client's conflicting SHARE stays DENIED); A's SM_NOTIFY releases A's shares only (the third client then gets A's file, not B's); an oh the gateway cannot carry is refused, not forwarded
#
#   NLM4 clients A (127.0.0.2), B (.3), C (.4) --tcp--> rpcrdma-gw 127.0.0.1:20498 --nlm, tcp--> lockd :32803
#   baseline: A and B --tcp--> lockd 127.0.0.1:32803 directly
#
# Shares live in lockd only (no fcntl lock on the server shows them): a
# third client's SHARE is the probe.  Modes (nlm4.x): access R = 1, W = 2;
# deny none = 0, deny write = 2.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20498
NLM_PORT=32803
CTL=${BUILD:-build}/rpcrdma-gwctl
out=/tmp/t82
mkdir -p "$out"

bed_nlm_server "$NLM_PORT"
gw_start "$PORT" "$out" "gateway.control_socket=$out/control" gateway.log_level=debug \
	nlm.transport=tcp "nlm.port=$NLM_PORT" nsm.transport=tcp

cp "$(dirname "$0")/rpcpeer.py" "$out/rpc.py"
cat >"$out/share.py" <<'PY'
import os, socket, struct, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rpc
from rpc import opaque
Peer = rpc.Peer

COOKIE = opaque(b"c82")
OH = b"1@guest"          # every client's owner handle: the same bytes
def stat_of(body):
    return rpc.nlm_stat(body)[0]
def nlm(p, proc, args):
    """NLM v4 PROC's stat, or the accept status's name when not SUCCESS."""
    acc, res = p.call_any(100021, 4, proc, args)
    return stat_of(res) if acc == 0 else rpc.ACCEPT.get(acc, "accept %d" % acc)
def share_args(fh, mode, access, oh):
    return COOKIE + opaque(b"guest") + opaque(fh) + opaque(oh) + struct.pack(">III", mode, access, 0)
def share(p, fh, access, mode, oh=OH):
    end = time.time() + 40
    while True:   # lockd may still be in its grace period
        st = nlm(p, 20, share_args(fh, mode, access, oh))
        if st != "DENIED_GRACE_PERIOD" or time.time() > end:
            return st
        time.sleep(1)
def unshare(p, fh, oh=OH):
    return nlm(p, 21, share_args(fh, 0, 0, oh))
sm_notify = rpc.sm_notify

def fh_of(port, name):
    return rpc.fh_of(Peer("127.0.0.1", "127.0.0.1", port), sys.argv[3], name)

# share.py GWPORT NLMPORT EXPORT STEP: prints one "key: value" line per check.
gw, lockd = int(sys.argv[1]), int(sys.argv[2])
fh = {n: fh_of(gw, n) for n in ("s0", "s1", "s2", "s3")}
R, W, DN, DW = 1, 2, 0, 2
say = rpc.say
if sys.argv[4] == "direct":
    a, b = Peer("127.0.0.2", "127.0.0.1", lockd), Peer("127.0.0.3", "127.0.0.1", lockd)
    say("direct A share s0", share(a, fh["s0"], R, DW))
    say("direct B share s0 write", share(b, fh["s0"], W, DN))
    say("direct A unshare s0", unshare(a, fh["s0"]))
    say("direct B share s0 after", share(b, fh["s0"], W, DN))
    say("direct B unshare s0", unshare(b, fh["s0"]))
else:
    a, b, c = (Peer(h, "127.0.0.1", gw) for h in ("127.0.0.2", "127.0.0.3", "127.0.0.4"))
    say("gw A share s1", share(a, fh["s1"], R, DW))
    say("gw B share s1 write", share(b, fh["s1"], W, DN))
    say("gw B share s1 read", share(b, fh["s1"], R, DW))
    say("gw A unshare s1", unshare(a, fh["s1"]))
    say("gw C share s1 write", share(c, fh["s1"], W, DN))
    say("gw A share s2", share(a, fh["s2"], R, DW))
    say("gw B share s3", share(b, fh["s3"], R, DW))
    say("gw A long oh", share(a, fh["s0"], R, DN, b"x" * 1021))
    say("gw A sm_notify", sm_notify(Peer("127.0.0.2", "127.0.0.1", gw), b"127.0.0.2", 3))
    end = time.time() + 5
    while share(c, fh["s2"], W, DN) != "GRANTED" and time.time() < end:
        time.sleep(0.1)
    say("gw C share s2 after A's reboot", share(c, fh["s2"], W, DN))
    say("gw C share s3 after A's reboot", share(c, fh["s3"], W, DN))
    for p, f in ((b, "s1"), (b, "s3"), (c, "s2")):
        unshare(p, fh[f])
    say("gw C share s3 at the end", share(c, fh["s3"], W, DN))
    unshare(c, fh["s3"])
PY
for f in s0 s1 s2 s3; do : >"$BED_EXPORT/$f"; done

# got KEY STEP: the value printed for KEY
got() { sed -n "s/^$1: //p" "$out/$2.txt"; }
run() {
	timeout 120 python3 "$out/share.py" "$PORT" "$NLM_PORT" "$BED_EXPORT" "$1" >"$out/$1.txt" 2>&1 || {
		sed 's/^/  /' "$out/$1.txt"
		bed_fail "share.py $1 failed"
	}
	sed 's/^/  /' "$out/$1.txt"
}

step "baseline: A and B straight to lockd, same oh and caller_name"
run direct
assert_eq GRANTED "$(got 'direct A share s0' direct)" "A's SHARE of s0 (read, deny write)"
assert_eq DENIED "$(got 'direct B share s0 write' direct)" "B's SHARE of s0 for write (lockd: another host)"
assert_eq GRANTED "$(got 'direct B share s0 after' direct)" "B's SHARE of s0 after A's UNSHARE"

step "through the gateway: the same clients, and C on 127.0.0.4"
run gw
assert_eq GRANTED "$(got 'gw A share s1' gw)" "A's SHARE of s1 (read, deny write)"
assert_eq DENIED "$(got 'gw B share s1 write' gw)" "B's SHARE of s1 for write while A denies write"
assert_eq GRANTED "$(got 'gw B share s1 read' gw)" "B's SHARE of s1 (read, deny write)"
assert_eq GRANTED "$(got 'gw A unshare s1' gw)" "A's UNSHARE of s1"
assert_eq DENIED "$(got 'gw C share s1 write' gw)" "C's SHARE of s1 for write after A's UNSHARE (B's share stays)"
assert_eq SYSTEM_ERR "$(got 'gw A long oh' gw)" "A's SHARE with an oh of 1021 bytes (oh' would pass 1024)"
step "client A reboots: SM_NOTIFY from A's address"
assert_eq GRANTED "$(got "gw C share s2 after A's reboot" gw)" "C's SHARE of s2 for write after A's SM_NOTIFY (A's share released)"
assert_eq DENIED "$(got "gw C share s3 after A's reboot" gw)" "C's SHARE of s3 for write after A's SM_NOTIFY (B's share survives)"
assert_eq GRANTED "$(got 'gw C share s3 at the end' gw)" "C's SHARE of s3 after B's UNSHARE"

"$CTL" -s "$out/control" --json stats | python3 -c '
import json, sys
c = json.load(sys.stdin)["counters"]
print("  counters: " + " ".join("%s=%s" % (k, v) for k, v in sorted(c.items()) if k.startswith("nlm_")))
assert c.get("nlm_shares_released") == 1, "nlm_shares_released"
assert c.get("nlm_shares_refused") == 1, "nlm_shares_refused"'
gw_stop
gw_log_clean leak illegal-transition failed-calls
