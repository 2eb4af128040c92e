#!/bin/bash
# claim: locks through rpcrdma-gw: NLM v4 calls sent by a raw client to the gateway's port (route nlm over TCP to the server's lockd, with rpc.statd running) lock, test and unlock a file, and the lock is real on the server (a local fcntl there conflicts both ways); the kernel client with vers=3 and locking on (no nolock) gets fcntl and flock locks that conflict with server-side locks, but its NLM goes to the server's lockd found by rpcbind at the mount address, NOT through the gateway (rpcbind_register is off here; t_68 turns it on and closes the gap): that gap is measured (NLM calls seen by the gateway) and printed; with vers=4.0 and 4.1 (in-protocol LOCK/LOCKT/LOCKU through the gateway over RDMA) fcntl and flock locks conflict with server-side locks both ways and a blocked lock is granted after the server-side holder lets go
#
#   python NLM4 client --tcp--> rpcrdma-gw 127.0.0.1:20495 --tcp (rpcbind)--> lockd + rpc.statd
#   /mnt/gw40, /mnt/gw41 --tcp--> (nfs route) -------------rdma 20049------> nfsd   tmpfs /srv/nfs
#   /mnt/gw3 (vers=3, locking) --tcp--> gateway: NFS, MOUNT               (server-side fcntl
#        kernel lockd ---- rpcbind 127.0.0.1:111 -> lockd directly (bypasses the gateway)  holder)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20495
out=/tmp/t65
mkdir -p "$out"
statd_started=

bed_nfsd_up
bed_nfs_client_modules
step "rpc.statd (the server's lockd asks it to monitor lock holders; mount.nfs wants it for vers=3 locking)"
rpc.statd --no-notify
statd_started=1
bed_wait 20 "statd registered with rpcbind" sh -c 'rpcinfo -p 127.0.0.1 | grep -q status'
bed_wait 20 "nlockmgr registered with rpcbind" sh -c 'rpcinfo -p 127.0.0.1 | grep -q nlockmgr'
: "$statd_started"

gw_start "$PORT" "$out" gateway.log_level=debug nlm.transport=tcp nsm.transport=tcp
nlm_calls() { grep -c 'prog 100021 ' "$out/gw.log" || true; }

cat >"$out/lk.py" <<'PY'
import fcntl, os, socket, struct, sys, time

def hold(path, flag):
    """Lock PATH (whole file, exclusive, blocking), say so, hold until FLAG exists."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.lockf(fd, fcntl.LOCK_EX)
    print("held", flush=True)
    while not os.path.exists(flag):
        time.sleep(0.05)
    fcntl.lockf(fd, fcntl.LOCK_UN)

def try_(path, kind):
    """Exit 0 if a non-blocking lock (fcntl or flock) is granted, 1 on EAGAIN/EWOULDBLOCK."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        (fcntl.lockf if kind == "fcntl" else fcntl.flock)(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        print("%s on %s: %s" % (kind, path, e.strerror))
        sys.exit(1)
    print("%s on %s: granted" % (kind, path))
    (fcntl.lockf if kind == "fcntl" else fcntl.flock)(fd, fcntl.LOCK_UN)

def wait_lock(path):
    """Blocking fcntl lock; print how long it took."""
    fd = os.open(path, os.O_RDWR)
    t0 = time.time()
    fcntl.lockf(fd, fcntl.LOCK_EX)
    print("blocked lock granted after %.1f s" % (time.time() - t0))
    fcntl.lockf(fd, fcntl.LOCK_UN)

# --- a raw NLM v4 client through the gateway ---------------------------------
PORT = None
def opaque(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)
def auth_unix():
    name = b"t65"
    body = struct.pack(">I", 0) + opaque(name) + struct.pack(">III", 0, 0, 0)
    return struct.pack(">II", 1, len(body)) + body
def rpc(s, xid, prog, vers, proc, args):
    body = struct.pack(">6I", xid, 0, 2, prog, vers, proc) + auth_unix() + struct.pack(">II", 0, 0) + args
    s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
    data = b""
    while True:
        hdr = s.recv(4, socket.MSG_WAITALL)
        n = struct.unpack(">I", hdr)[0]
        chunk = b""
        while len(chunk) < (n & 0x7fffffff):
            c = s.recv((n & 0x7fffffff) - len(chunk))
            assert c, "connection closed"
            chunk += c
        data += chunk
        if n & 0x80000000:
            break
    rxid, mtype, rstat = struct.unpack(">3I", data[:12])
    assert rxid == xid and mtype == 1 and rstat == 0, "call %d: denied" % proc
    vlen = struct.unpack(">I", data[16:20])[0]
    off = 20 + vlen
    assert struct.unpack(">I", data[off:off + 4])[0] == 0, "call %d: accept_stat" % proc
    return data[off + 4:]
def fh_of(s, export, name):
    body = rpc(s, 1, 100005, 3, 1, opaque(export.encode()))
    assert struct.unpack(">I", body[:4])[0] == 0, "MNT"
    n = struct.unpack(">I", body[4:8])[0]
    root = body[8:8 + n]
    body = rpc(s, 2, 100003, 3, 3, opaque(root) + opaque(name.encode()))
    assert struct.unpack(">I", body[:4])[0] == 0, "LOOKUP"
    n = struct.unpack(">I", body[4:8])[0]
    return body[8:8 + n]
STAT = {0: "GRANTED", 1: "DENIED", 2: "DENIED_NOLOCKS", 3: "BLOCKED", 4: "DENIED_GRACE_PERIOD", 5: "DEADLCK"}
def alock(fh, svid):
    return opaque(b"10.99.0.1") + opaque(fh) + opaque(b"owner-%d" % svid) + struct.pack(">iQQ", svid, 0, 0)
def nlm(s, xid, proc, args):
    body = rpc(s, xid, 100021, 4, proc, args)
    clen = struct.unpack(">I", body[:4])[0]
    off = 4 + clen + (-clen % 4)
    return STAT.get(struct.unpack(">I", body[off:off + 4])[0], "?")

def nlm_script(port, export, name, path, flag, held_flag):
    s = socket.create_connection(("127.0.0.1", int(port)))
    s.settimeout(30)
    fh = fh_of(s, export, name)
    cookie = opaque(b"c65")
    T, F = struct.pack(">I", 1), struct.pack(">I", 0)
    end = time.time() + 40
    xid = 100
    while True:   # lockd may still be in its grace period (a new XID each try: not a retransmission)
        xid += 1
        st = nlm(s, xid, 2, cookie + F + T + alock(fh, 1) + F + struct.pack(">i", 1))
        if st != "DENIED_GRACE_PERIOD" or time.time() > end:
            break
        time.sleep(1)
    print("NLM4_LOCK owner 1 (exclusive, non-blocking): " + st)
    assert st == "GRANTED"
    r = os.system("python3 %s try %s fcntl >/dev/null" % (sys.argv[0], path)) >> 8
    print("server-side fcntl while NLM lock held: " + ("granted (WRONG)" if r == 0 else "conflict"))
    assert r == 1
    st = nlm(s, 11, 1, cookie + T + alock(fh, 2))
    print("NLM4_TEST owner 2: " + st)
    assert st == "DENIED"
    st = nlm(s, 12, 4, cookie + alock(fh, 1))
    print("NLM4_UNLOCK owner 1: " + st)
    assert st == "GRANTED"
    # now the server side holds it: the NLM lock must be denied
    os.system("python3 %s hold %s %s >%s &" % (sys.argv[0], path, flag, held_flag))
    while "held" not in open(held_flag).read() if os.path.exists(held_flag) else True:
        time.sleep(0.05)
    st = nlm(s, 13, 2, cookie + F + T + alock(fh, 3) + F + struct.pack(">i", 1))
    print("NLM4_LOCK owner 3 while the server side holds a lock: " + st)
    assert st == "DENIED"
    open(flag, "w").close()
    time.sleep(0.5)
    st = nlm(s, 14, 2, cookie + F + T + alock(fh, 3) + F + struct.pack(">i", 1))
    print("NLM4_LOCK owner 3 after the server side let go: " + st)
    assert st == "GRANTED"
    assert nlm(s, 15, 4, cookie + alock(fh, 3)) == "GRANTED"

cmd = sys.argv[1]
if cmd == "hold":
    hold(sys.argv[2], sys.argv[3])
elif cmd == "try":
    try_(sys.argv[2], sys.argv[3])
elif cmd == "wait":
    wait_lock(sys.argv[2])
elif cmd == "nlm":
    nlm_script(*sys.argv[2:])
PY

lk() { python3 "$out/lk.py" "$@"; }

# server_holds FILE: a server-side fcntl lock on FILE until $out/release exists
server_holds() {
	rm -f "$out/release" "$out/held"
	lk hold "$1" "$out/release" >"$out/held" &
	holder=$!
	bed_wait 10 "the server-side lock" grep -q held "$out/held"
}
server_releases() { touch "$out/release"; wait "$holder"; }

check_locks() {
	local vers=$1 mnt=$2 f=$1.lk rc
	: >"$BED_EXPORT/$f"
	step "[$vers] client fcntl and flock while the server side holds the file: both refused"
	server_holds "$BED_EXPORT/$f"
	rc=0; lk try "$mnt/$f" fcntl || rc=$?
	assert_eq 1 "$rc" "[$vers] client fcntl lock while the server holds one (1 = EAGAIN)"
	rc=0; lk try "$mnt/$f" flock || rc=$?
	assert_eq 1 "$rc" "[$vers] client flock while the server holds a lock (1 = EWOULDBLOCK)"
	step "[$vers] a blocked client lock is granted once the server side lets go"
	timeout 90 python3 "$out/lk.py" wait "$mnt/$f" >"$out/wait-$vers.txt" &
	local waiter=$!
	sleep 1
	server_releases
	rc=0; wait "$waiter" || rc=$?
	assert_eq 0 "$rc" "[$vers] blocked lock granted"
	sed 's/^/  /' "$out/wait-$vers.txt"
	step "[$vers] client holds a lock: the server side is refused"
	rm -f "$out/cflag" "$out/cheld"
	lk hold "$mnt/$f" "$out/cflag" >"$out/cheld" &
	local ch=$!
	bed_wait 20 "the client's lock" grep -q held "$out/cheld"
	rc=0; lk try "$BED_EXPORT/$f" fcntl || rc=$?
	assert_eq 1 "$rc" "[$vers] server-side fcntl while the client holds the lock"
	touch "$out/cflag"
	wait "$ch"
	rc=0; lk try "$BED_EXPORT/$f" fcntl || rc=$?
	assert_eq 0 "$rc" "[$vers] server-side fcntl after the client unlocked"
}

# A blocked vers=4.1 lock is woken by CB_NOTIFY_LOCK, relayed over the
# backchannel (t_69 times it); without the relay the client polled again
# only after ~30 s (measured 31.8 s; vers=4.0 and vers=3 about 1 s).
for vers in 4.0 4.1; do
	mnt=/mnt/gw${vers/./}
	step "[$vers] mount through the gateway (locks in the protocol)"
	gw_mount "$vers" "$mnt"
	assert_mount_opt "$mnt" "vers=$vers" local_lock=none
	check_locks "$vers" "$mnt"
	timeout 60 umount "$mnt"
done

step "[3] mount through the gateway with locking on (no nolock)"
gw_mount 3 /mnt/gw3
assert_mount_opt /mnt/gw3 vers=3 local_lock=none
n0=$(nlm_calls)
check_locks 3 /mnt/gw3
timeout 60 umount /mnt/gw3
n1=$(nlm_calls)
step "[3] GAP: the kernel client's NLM calls seen by the gateway: $((n1 - n0)) (lockd asks rpcbind at 127.0.0.1:111, which names the server's lockd; rpcbind_register is off here: t_68 closes the gap)"

# Last: lockd's grace period (which answers DENIED_GRACE_PERIOD, retried
# below) is over by now.
step "raw NLM v4 through the gateway: LOCK, TEST, UNLOCK against server-side fcntl locks"
: >"$BED_EXPORT/nlm.lk"
rm -f "$out/nlm.flag"
n0=$(nlm_calls)
timeout 90 python3 "$out/lk.py" nlm "$PORT" "$BED_EXPORT" nlm.lk "$BED_EXPORT/nlm.lk" "$out/nlm.flag" "$out/nlm.held" 2>&1 | sed 's/^/  /'
assert_eq 0 "${PIPESTATUS[0]}" "NLM script exit status"
n1=$(nlm_calls)
step "  the gateway routed $((n1 - n0)) NLM calls"
[ $((n1 - n0)) -ge 6 ] || bed_fail "expected at least 6 NLM calls through the gateway, saw $((n1 - n0))"

step "SIGTERM"
gw_stop
grep 'counter' "$out/gw.log" | sed 's/^/  /'
gw_log_clean illegal-transition failed-calls tcp-fallback
