#!/bin/bash
# claim: NFSv3 locking through rpcrdma-gw with a real mount: the server's lockd pinned to TCP 32803 and its rpcbind entries removed, the gateway registers its own port for NLM v1/3/4 in rpcbind (rpcinfo shows it; MOUNT and NSM, held by mountd and statd, are counted as conflicts and left alone), a vers=3 proto=tcp mount through the gateway WITHOUT nolock gets flock and fcntl locks (F_SETLK, uncontended F_SETLKW, F_GETLK, unlock) that go through the gateway (NLM LOCK/UNLOCK/TEST counted by rpcrdma-gwctl stats --json), a second process gets EAGAIN, the locks are real on the server (/proc/locks on the exported tmpfs inode, F_GETLK sees a server-side holder), and after SIGTERM rpcbind no longer lists the gateway's port
#
#   flock/fcntl on /mnt/gw3 (vers=3, locking on)
#     kernel lockd --rpcbind 127.0.0.1:111 (nlockmgr -> 20495, set by the gateway)
#        --tcp--> rpcrdma-gw 127.0.0.1:20495 --nlm route, tcp--> lockd 10.99.0.1:32803 (pinned)
#     NFS --tcp--> gateway --rdma 20049--> nfsd; MOUNT --tcp--> gateway --tcp--> mountd
#
# The VM is one host: the kernel's lockd serves the client and the server,
# and registers itself in the same rpcbind.  With that registration in
# place the client's lockd would find the server's lockd directly (the gap
# t_65 measures), so the test removes it: what is left in rpcbind for NLM is
# the gateway's own registration, as on a client host talking to a gateway
# that is not the server.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20495
NLM_PORT=32803
CTL=${BUILD:-build}/rpcrdma-gwctl
out=/tmp/t68
mkdir -p "$out"

bed_lockd_pin "$NLM_PORT"
bed_nfsd_up
bed_nfs_client_modules

step "the server's lockd on the pinned port"
rpcinfo -p 127.0.0.1 | grep nlockmgr | sed 's/^/  /'
assert_eq 3 "$(rpcinfo -p 127.0.0.1 | grep -cE "^ *100021 +[134] +tcp +$NLM_PORT ")" \
	"nlockmgr v1,3,4 on tcp $NLM_PORT in rpcbind"

step "rpc.statd (lockd asks it to monitor lock holders; mount.nfs wants it for vers=3 locking)"
rpc.statd --no-notify
bed_wait 20 "statd registered with rpcbind" sh -c 'rpcinfo -p 127.0.0.1 | grep -q status'

step "remove the kernel's NLM registrations (co-located test: see the header)"
for v in 1 3 4; do rpcinfo -d 100021 "$v"; done
assert_eq 0 "$(rpcinfo -p 127.0.0.1 | grep -c nlockmgr || true)" "nlockmgr entries left in rpcbind"

gw_start "$PORT" "$out" gateway.rpcbind_register=on "gateway.control_socket=$out/control" \
	gateway.log_level=debug nlm.transport=tcp "nlm.port=$NLM_PORT" nsm.transport=tcp

# stats --json: "counters":{...}; NLM calls by procedure name
ctr() { "$CTL" -s "$out/control" --json stats | python3 -c '
import json, sys
print(json.load(sys.stdin)["counters"][sys.argv[1]])' "$1"; }
nlm_calls() { "$CTL" -s "$out/control" --json stats | python3 -c '
import json, sys
c = {}
for r in json.load(sys.stdin)["calls"]:
    if r["program"] == 100021:
        c[r["procname"]] = c.get(r["procname"], 0) + r["calls"]
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))'; }
nlm_of() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p" | grep . || echo 0; }

step "rpcbind after the gateway registered"
rpcinfo -p 127.0.0.1 | grep -E "nlockmgr|mountd|status| $PORT " | sed 's/^/  /'
assert_eq 3 "$(rpcinfo -p 127.0.0.1 | grep -cE "^ *100021 +[134] +tcp +$PORT ")" \
	"nlockmgr v1,3,4 on tcp $PORT (the gateway) in rpcbind"
grep 'rpcbind' "$out/gw.log" | sed 's/^.*rpcbind: /  gw: rpcbind: /'
assert_eq 3 "$(ctr rpcbind_registered)" "rpcbind_registered (NLM 1, 3, 4)"
assert_eq 5 "$(ctr rpcbind_conflict)" "rpcbind_conflict (MOUNT 1-3 held by mountd, NSM 1 tcp and udp by statd)"
assert_eq 0 "$(ctr rpcbind_register_failed)" "rpcbind_register_failed"

step "mount vers=3 proto=tcp through the gateway, locking on (no nolock, no local_lock)"
gw_mount 3 /mnt/gw3
assert_mount_opt /mnt/gw3 vers=3 proto=tcp "port=$PORT" local_lock=none
grep ' /mnt/gw3 ' /proc/mounts | grep -q nolock && bed_fail "mounted with nolock"
n0=$(nlm_calls)
step "  NLM calls through the gateway before locking: ${n0:-none}"

cat >"$out/lk.py" <<'PY'
import fcntl, os, struct, sys, time
FL = "@hhqqi4x"   # struct flock on x86_64: type, whence, start, len, pid

def flock_struct(kind):
    return struct.pack(FL, kind, os.SEEK_SET, 0, 0, 0)

def setlk(fd, kind, cmd=fcntl.F_SETLK):
    fcntl.fcntl(fd, cmd, flock_struct(kind))

def hold(path, how, flag):
    """Lock PATH exclusively (fcntl F_SETLK or flock), say so, hold until FLAG exists, unlock."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    if how == "fcntl":
        setlk(fd, fcntl.F_WRLCK)
    else:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("held", flush=True)
    while not os.path.exists(flag):
        time.sleep(0.05)
    if how == "fcntl":
        setlk(fd, fcntl.F_UNLCK)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)

def try_(path, how):
    """Exit 0 if a non-blocking exclusive lock is granted (then unlocked), 1 on EAGAIN."""
    fd = os.open(path, os.O_RDWR)
    try:
        if how == "fcntl":
            setlk(fd, fcntl.F_WRLCK)
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        print("  %s on %s: %s" % (how, path, e.strerror))
        sys.exit(1)
    print("  %s on %s: granted" % (how, path))
    if how == "fcntl":
        setlk(fd, fcntl.F_UNLCK)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)

def setlkw(path):
    fd = os.open(path, os.O_RDWR)
    setlk(fd, fcntl.F_WRLCK, fcntl.F_SETLKW)
    print("  F_SETLKW on %s: granted" % path)
    setlk(fd, fcntl.F_UNLCK)

def getlk(path):
    """Print F_UNLCK, or F_WRLCK/F_RDLCK of the conflicting holder."""
    fd = os.open(path, os.O_RDWR)
    r = fcntl.fcntl(fd, fcntl.F_GETLK, flock_struct(fcntl.F_WRLCK))
    t = struct.unpack(FL, r)[0]
    print({fcntl.F_UNLCK: "F_UNLCK", fcntl.F_WRLCK: "F_WRLCK", fcntl.F_RDLCK: "F_RDLCK"}[t])

def srv_locks(path):
    """Locks in /proc/locks on PATH's inode (device and inode of the exported file)."""
    st = os.stat(path)
    want = "%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    print(sum(1 for l in open("/proc/locks") if want in l.split()))

cmd = sys.argv[1]
{"hold": lambda: hold(*sys.argv[2:5]), "try": lambda: try_(*sys.argv[2:4]),
 "setlkw": lambda: setlkw(sys.argv[2]), "getlk": lambda: getlk(sys.argv[2]),
 "srv": lambda: srv_locks(sys.argv[2])}[cmd]()
PY
lk() { timeout 60 python3 "$out/lk.py" "$@"; }
holder=
# hold_lock fcntl|flock FILE: a lock held in the background until release_lock
hold_lock() {
	rm -f "$out/release" "$out/held"
	timeout 120 python3 "$out/lk.py" hold "$2" "$1" "$out/release" >"$out/held" &
	holder=$!
	bed_wait 60 "the $1 lock on $2" grep -q held "$out/held"
}
release_lock() { touch "$out/release"; wait "$holder"; holder=; }
for f in f1 f2 f3; do : >"$BED_EXPORT/$f"; done

step "fcntl F_SETLK by process 1 on f1: granted; real on the server"
hold_lock fcntl /mnt/gw3/f1
rc=$(lk srv "$BED_EXPORT/f1")
assert_eq 1 "$rc" "locks in /proc/locks on the server's f1 inode while process 1 holds it"
step "process 2: F_SETLK (refused by the client kernel), flock (by the server) refused; F_GETLK sees the holder"
rc=0; lk try /mnt/gw3/f1 fcntl || rc=$?
assert_eq 1 "$rc" "process 2 F_SETLK (1 = EAGAIN)"
rc=0; lk try /mnt/gw3/f1 flock || rc=$?
assert_eq 1 "$rc" "process 2 flock LOCK_NB (1 = EWOULDBLOCK)"
assert_eq F_WRLCK "$(lk getlk /mnt/gw3/f1)" "process 2 F_GETLK"
step "process 1 unlocks: gone on the server, process 2 gets it"
release_lock
assert_eq 0 "$(lk srv "$BED_EXPORT/f1")" "locks on the server's f1 inode after the unlock"
rc=0; lk try /mnt/gw3/f1 fcntl || rc=$?
assert_eq 0 "$rc" "process 2 F_SETLK after the unlock"

step "F_SETLKW uncontended; F_GETLK on an unlocked file (asks the server: NLM TEST)"
lk setlkw /mnt/gw3/f1
assert_eq F_UNLCK "$(lk getlk /mnt/gw3/f1)" "F_GETLK with no lock anywhere"

step "F_GETLK while a server-side process holds f2 (no local lock: only NLM TEST can know)"
hold_lock fcntl "$BED_EXPORT/f2"
assert_eq F_WRLCK "$(lk getlk /mnt/gw3/f2)" "client F_GETLK against the server-side holder"
rc=0; lk try /mnt/gw3/f2 fcntl || rc=$?
assert_eq 1 "$rc" "client F_SETLK against the server-side holder"
release_lock

step "flock by process 1 on f3: real on the server, process 2 refused until it is released"
hold_lock flock /mnt/gw3/f3
assert_eq 1 "$(lk srv "$BED_EXPORT/f3")" "locks on the server's f3 inode while the flock is held"
rc=0; lk try /mnt/gw3/f3 flock || rc=$?
assert_eq 1 "$rc" "process 2 flock LOCK_NB while process 1 holds it"
release_lock
rc=0; lk try /mnt/gw3/f3 flock || rc=$?
assert_eq 0 "$rc" "process 2 flock after the release"
assert_eq 0 "$(lk srv "$BED_EXPORT/f3")" "locks on the server's f3 inode at the end"

n1=$(nlm_calls)
step "NLM calls through the gateway (rpcrdma-gwctl --json stats): $n1"
# A conflict between two processes of this client with the same kind of
# lock is refused by the client kernel itself (lockd tests its local locks
# before calling the server: measured 7 LOCK, not 9), so LOCK at least 7:
# f1 process 1, process 2's flock (refused by the SERVER: flock and POSIX
# locks only meet there), process 2 after the unlock, F_SETLKW, f2 (refused
# by the server), f3 process 1 and process 2 after the release.  UNLOCK 5
# (f1 x2, F_SETLKW, f3 x2), TEST 2 (both F_GETLK with no local lock).
lock=$(( $(nlm_of "$n1" lock) - $(nlm_of "$n0" lock) ))
unlock=$(( $(nlm_of "$n1" unlock) - $(nlm_of "$n0" unlock) ))
test_=$(( $(nlm_of "$n1" test) - $(nlm_of "$n0" test) ))
[ "$lock" -ge 7 ] || bed_fail "NLM LOCK through the gateway: $lock, expected >= 7"
[ "$unlock" -ge 5 ] || bed_fail "NLM UNLOCK through the gateway: $unlock, expected >= 5"
[ "$test_" -ge 2 ] || bed_fail "NLM TEST through the gateway: $test_, expected >= 2"

step "umount, SIGTERM: the gateway unregisters what it registered"
timeout 60 umount /mnt/gw3
gw_stop
grep 'rpcbind: unregistered\|counter rpcbind' "$out/gw.log" | sed 's/^.*rpcbind/  gw: rpcbind/'
assert_eq 3 "$(grep -c 'rpcbind: unregistered program 100021' "$out/gw.log")" "NLM entries unregistered"
rpcinfo -p 127.0.0.1 | grep -E "nlockmgr|mountd|status" | sed 's/^/  /'
assert_eq 0 "$(rpcinfo -p 127.0.0.1 | grep -c " $PORT " || true)" "rpcbind entries naming port $PORT"
n=$(rpcinfo -p 127.0.0.1 | grep -cE ' (mountd|status)$' || true)
[ "$n" -ge 4 ] || bed_fail "mountd and statd entries in rpcbind: $n, expected >= 4 (not ours: must stay)"
gw_log_clean leak illegal-transition failed-calls tcp-fallback
