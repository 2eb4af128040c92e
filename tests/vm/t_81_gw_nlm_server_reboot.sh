#!/bin/bash
# claim: a server's reboot reaches the NFSv3 lock clients behind rpcrdma-gw: two clients lock through the gateway (held on the server's lockd, which monitors the gateway's address through the server's real rpc.statd); the server's lockd loses its locks and enters grace (SIGKILL, as at a restart) and the server's real sm-notify notifies the gateway over UDP, straight from the server's address to the gateway's NSM socket (no bridge); each client host's statd must get SM_NOTIFY within 5 s with the gateway's address as mon_name and the server's new state; a plain LOCK is then DENIED_GRACE_PERIOD and the clients' reclaim LOCKs through the gateway are GRANTED and held on the server; an SM_NOTIFY a client sends (over TCP or UDP) is not passed to the other client
#
#  netns cli                  root namespace (the server)          netns gwn (the gateway host)
#  host A 10.78.0.3 --+                                            rpcrdma-gw 0.0.0.0:20481
#  host B 10.78.0.2 --+--tcp, routed via 10.78.0.1/10.77.0.1-->      tcp and udp (NSM), 10.77.0.2
#  (each: rpcbind :111,       lockd :32803, nfsd, rpc.statd  <--nlm, tcp from 10.77.0.2--
#   a fake statd) <--SM_NOTIFY, tcp, from 10.77.0.2--------------   (rpcbind 10.77.0.2:111:
#                             sm-notify 10.77.0.1 --udp--------->    NSM udp -> 20481)
#
# The gateway runs in its own namespace, as on its own host: lockd and
# statd see it as 10.77.0.2, and the server's sm-notify, which speaks UDP
# only, asks gwn's rpcbind (a fake one: one guest has one rpcbind per
# namespace) for NSM over udp and sends its datagram from 10.77.0.1, the
# NLM backend's address, to the gateway's UDP NSM socket.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20481
NLM_PORT=32803
CTL=${BUILD:-build}/rpcrdma-gwctl
out=/tmp/t81
mkdir -p "$out"

bed_nlm_server "$NLM_PORT" statd

step "network namespaces cli (10.78.0.2, .3) and gwn (10.77.0.2)"
bed_netns cli 10.78.0.1 10.78.0.2 10.78.0.3
bed_netns gwn 10.77.0.1 10.77.0.2

cp "$(dirname "$0")/rpcpeer.py" "$out/rpc.py"

# gwn: the rpcbind of the gateway's host, as sm-notify asks it (udp).
cat >"$out/gwn.py" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
import rpc
rpc.rpcbind("10.77.0.2", {100024: int(sys.argv[2])})   # NSM: the gateway's port
print("ready", flush=True)
while True:
    time.sleep(3600)
PY
sysctl -qw net.ipv4.ip_forward=1	# cli <-> gwn through the root namespace
step "gwn: rpcbind 10.77.0.2:111 naming the gateway's port for NSM"
ip netns exec gwn python3 "$out/gwn.py" "$out" "$PORT" >"$out/gwn.txt" 2>&1 &
gwn_pid=$!
bed_wait 10 "gwn's rpcbind ready" grep -q ready "$out/gwn.txt"

# The NLM backend is the server's address as the gateway's host reaches
# it: an SM_NOTIFY from there is the server's reboot.
GW_NETNS=gwn gw_start "$PORT" "$out" "gateway.listen=0.0.0.0:$PORT" \
	"gateway.control_socket=$out/control" gateway.log_level=debug nfs.transport=tcp \
	backend.port=2049 backend_lk.address=10.77.0.1 nlm.transport=tcp nlm.backend=lk \
	"nlm.port=$NLM_PORT" nsm.transport=tcp nsm.backend=nfsd nfs.backend=nfsd mount.backend=nfsd
{ grep 'NSM over UDP' "$out/gw.log" || echo 'no "NSM over UDP" in the log'; } | sed 's/^/  /'

cat >"$out/cli.py" <<'PY'
import os, socket, struct, sys, time
sys.path.insert(0, sys.argv[1])
import rpc
from rpc import auth_unix, opaque, get_opaque

Peer = rpc.Peer

class Host:
    """One client host: rpcbind on ADDR:111 naming its fake statd (NSM,
    TCP), which records each SM_NOTIFY (mon_name, state)."""
    def __init__(self, addr):
        self.addr, self.got = addr, []
        port = rpc.serve_tcp(addr, 0, self.handle)
        rpc.rpcbind(addr, {100024: port})
    def handle(self, d):
        xid, prog, vers, proc, args = rpc.parse_call(d)
        if prog != 100024 or proc not in (0, 6):
            return struct.pack(">6I", xid, 1, 0, 0, 0, 3)
        if proc == 6:
            mon, off = get_opaque(args, 0)
            self.got.append((time.time(), mon.decode(errors="replace"),
                             struct.unpack(">i", args[off:off + 4])[0]))
        return rpc.reply(xid, b"")
    def wait(self, secs):
        end = time.time() + secs
        while not self.got and time.time() < end:
            time.sleep(0.01)
        return self.got[0] if self.got else None

GW = "10.77.0.2"   # the gateway's host
T, F = struct.pack(">I", 1), struct.pack(">I", 0)
COOKIE = opaque(b"c81")
def alock(fh, svid=1):
    return opaque(b"guest") + opaque(fh) + opaque(b"1@guest") + struct.pack(">iQQ", svid, 0, 0)
def stat_of(body):
    return rpc.nlm_stat(body)[0]
def lock_once(p, fh, reclaim=False):   # nlm4_lockargs: cookie block exclusive alock reclaim state
    return stat_of(p.call(100021, 4, 2, COOKIE + F + T + alock(fh) + (T if reclaim else F) +
                          struct.pack(">i", 1)))
def lock(p, fh):
    end = time.time() + 40
    while True:   # lockd may still be in its first grace period
        st = lock_once(p, fh)
        if st != "DENIED_GRACE_PERIOD" or time.time() > end:
            return st
        time.sleep(1)
def unlock(p, fh):
    return stat_of(p.call(100021, 4, 4, COOKIE + alock(fh)))

def fh_of(port, name):
    return rpc.fh_of(Peer("10.78.0.2", GW, port), exp, name)

server_try, say = rpc.server_try, rpc.say
def heard(host, secs):
    g = host.wait(secs)
    return "nothing" if g is None else "mon_name %s state %d" % (g[1], g[2])

# cli.py DIR GWPORT EXPORT MARKER
gw, exp, marker = int(sys.argv[2]), sys.argv[3], sys.argv[4]
A, B = Host("10.78.0.3"), Host("10.78.0.2")
fh = {n: fh_of(gw, n) for n in ("f1", "f2")}
a, b = Peer(A.addr, GW, gw), Peer(B.addr, GW, gw)
say("A lock f1", lock(a, fh["f1"]))
say("B lock f2", lock(b, fh["f2"]))
say("server f1 before", server_try(exp + "/f1"))
say("server f2 before", server_try(exp + "/f2"))
say("ready", "yes")
end = time.time() + 40
while not os.path.exists(marker + ".t0") and time.time() < end:
    time.sleep(0.05)
t0 = float(open(marker + ".t0").read())    # sm-notify's start, this guest's clock
for n, h in (("A", A), ("B", B)):
    g = h.wait(t0 + 5 - time.time())
    say(n + " statd", heard(h, 0))
    if g:
        say(n + " statd seconds", "%.3f" % (g[0] - t0))
while not os.path.exists(marker) and time.time() < end:
    time.sleep(0.05)
say("server f1 after the reboot", server_try(exp + "/f1"))
say("A plain lock f1 in grace", lock_once(a, fh["f1"]))
say("A reclaim f1", lock_once(a, fh["f1"], reclaim=True))
say("B reclaim f2", lock_once(b, fh["f2"], reclaim=True))
say("server f1 reclaimed", server_try(exp + "/f1"))
say("server f2 reclaimed", server_try(exp + "/f2"))
# (no UNLOCK: lockd refuses it during grace; the locks end with the test)
# hostile: A's statd sends the gateway an SM_NOTIFY (A's own reboot),
# over TCP and as sm-notify would, a UDP datagram from A's address
del A.got[:], B.got[:]
a.call(100024, 1, 6, opaque(b"10.78.0.3") + struct.pack(">i", 101))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((A.addr, 0))
u.settimeout(5)
u.sendto(struct.pack(">6I", 0x81810001, 0, 2, 100024, 1, 6) + auth_unix() +
         struct.pack(">II", 0, 0) + opaque(b"10.78.0.3") + struct.pack(">i", 103), (GW, gw))
try:
    r = u.recv(512)
    say("A udp sm_notify", "answered" if struct.unpack(">I", r[:4])[0] == 0x81810001 and
        r[8:12] == b"\0" * 4 and r[20:24] == b"\0" * 4 else "refused")
except OSError as e:
    say("A udp sm_notify", "no answer (%s)" % e)
say("forged B statd", heard(B, 2))
PY
for f in f1 f2; do : >"$BED_EXPORT/$f"; done

got() { sed -n "s/^$1: //p" "$out/cli.txt"; }
step "A locks f1, B locks f2 through the gateway"
ip netns exec cli timeout 120 python3 "$out/cli.py" "$out" "$PORT" "$BED_EXPORT" "$out/rebooted" \
	>"$out/cli.txt" 2>&1 &
cli_pid=$!
bed_wait 60 "the clients' locks" grep -q '^ready: ' "$out/cli.txt"
sed 's/^/  /' "$out/cli.txt"
assert_eq GRANTED "$(got 'A lock f1')" "A's LOCK on f1 through the gateway"
assert_eq GRANTED "$(got 'B lock f2')" "B's LOCK on f2 through the gateway"
assert_eq locked "$(got 'server f1 before')" "f1 on the server"
ls /var/lib/nfs/sm
[ -e /var/lib/nfs/sm/10.77.0.2 ] || bed_fail "the server's statd does not monitor the gateway (10.77.0.2)"

step "the server reboots its lock state: lockd SIGKILL (locks dropped, grace), then sm-notify -f"
sysctl -qw fs.nfs.nlm_grace_period=20
kill -KILL "$(pgrep -x lockd)"
# lockd sleeps in TASK_IDLE and sees the signal only when it next wakes:
# a NULL call wakes it, and it drops its locks before the next one.
for _ in 1 2; do rpcinfo -t 127.0.0.1 100021 4 >/dev/null 2>&1 || true; done
bed_wait 10 "lockd dropped its locks" python3 -c '
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)' "$BED_EXPORT/f1"
python3 -c 'import time; print(time.time())' >"$out/t0.tmp"
mv "$out/t0.tmp" "$out/rebooted.t0"	# whole, for cli.py to read
timeout 20 sm-notify -d -f >"$out/sm-notify.txt" 2>&1 || true
: >"$out/rebooted"
wait "$cli_pid" || { sed 's/^/  /' "$out/cli.txt"; bed_fail "cli.py failed"; }
sed 's/^/  /' "$out/sm-notify.txt" "$out/cli.txt" | grep -v '^  ready'
grep -E 'SM_NOTIFY|reboot' "$out/gw.log" | sed 's/^/  gw: /' | head -20
# sm-notify sends the state it leaves in the state file (nsm.x: state)
state=$(od -An -td4 /var/lib/nfs/state | tr -d ' ')
[ -n "$state" ] || bed_fail "no state in /var/lib/nfs/state"
assert_eq free "$(got 'server f1 after the reboot')" "f1 on the server after lockd dropped its locks"
assert_eq "mon_name 10.77.0.2 state $state" "$(got 'A statd')" "what A's statd heard (the gateway's address, the server's new state)"
assert_eq "mon_name 10.77.0.2 state $state" "$(got 'B statd')" "what B's statd heard"
assert_eq DENIED_GRACE_PERIOD "$(got 'A plain lock f1 in grace')" "A's plain LOCK during the server's grace"
assert_eq GRANTED "$(got 'A reclaim f1')" "A's reclaim LOCK through the gateway"
assert_eq GRANTED "$(got 'B reclaim f2')" "B's reclaim LOCK through the gateway"
assert_eq locked "$(got 'server f1 reclaimed')" "f1 on the server after A's reclaim"
assert_eq locked "$(got 'server f2 reclaimed')" "f2 on the server after B's reclaim"
for h in A B; do
	s=$(got "$h statd seconds")
	awk -v s="$s" 'BEGIN { exit !(s != "" && s <= 5) }' ||
		bed_fail "$h's statd heard the reboot $s s after sm-notify started (limit 5 s)"
done
assert_eq answered "$(got 'A udp sm_notify')" "the gateway's answer to A's own SM_NOTIFY over UDP"
assert_eq nothing "$(got 'forged B statd')" "what B's statd heard of A's own SM_NOTIFY (tcp, udp)"

"$CTL" -s "$out/control" --json stats | python3 -c '
import json, sys
c = json.load(sys.stdin)["counters"]
print("  counters: " + " ".join("%s=%s" % (k, v) for k, v in sorted(c.items()) if k.startswith(("nlm_", "nsm_"))))
for k, want in (("nlm_server_reboots", 1), ("nlm_notify_relayed", 2), ("nlm_client_reboots", 2),
                ("nsm_udp_notify", 2)):
    if c.get(k, 0) != want:
        sys.exit("FAIL: counter %s = %s, expected %d" % (k, c.get(k), want))'
kill "$gwn_pid"
gw_stop
gw_log_clean leak illegal-transition failed-calls
