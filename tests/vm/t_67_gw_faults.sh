#!/bin/bash
# claim: rpcrdma-gw (NFS over RDMA to nfsd) survives faults: nfsd stopped and restarted in the middle of a 32 MiB copy (vers=3 and vers=4.1) -> the copy completes and its sha256 is unchanged on the server; a dd killed -9 while writing through the mount and a raw client killed -9 in the middle of a WRITE record (pipelined WRITEs in flight) -> the gateway stays healthy (a fresh mount copies a file intact; counters: every client closed, no illegal transition, the only failed call is the truncated header); malformed records and garbage RPC (not RPC, truncated header, REPLY message, RPC version 3, unknown program, NFS version 9, bad credential, bad arguments, zero-length and 100-fragment records, stalled record) each get an error reply or their connection closed, while a concurrent good client's calls all succeed
#
#   cp / dd ----> /mnt/gw3, /mnt/gw41 --tcp--\
#   python: raw WRITEs, then kill -9 --tcp---> rpcrdma-gw 127.0.0.1:20498 --rdma 20049--> nfsd
#   python: garbage (one conn each) --tcp---/      record_timeout 2 s          rpc.nfsd 0 .. rpc.nfsd 4
#   python: good client (NULL+GETATTR loop) -/
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20498
out=/tmp/t67
mkdir -p "$out"

bed_nfsd_up
bed_nfs_client_modules
gw_start "$PORT" "$out" gateway.record_timeout=2s gateway.reconnect_interval=200ms
# Keeps $? (the script's status) for bed_on_exit, which reports from it.
show_errors() {
	local rc=$?
	if [ "$rc" != 0 ]; then	# the gateway's view of what failed
		grep -E 'refused|dropped|does not fit|ERROR|SEGV|runtime' "$out/gw.log" | head -20 | sed 's/^/  gw!: /' || true
	fi
	return "$rc"
}
trap 'show_errors; gw_stop; bed_on_exit' EXIT

mount_gw() { gw_mount "$1" "$2" nolock hard; }

head -c $((32 << 20)) /dev/urandom >/tmp/big.bin
sum=$(sha256sum /tmp/big.bin | cut -d' ' -f1)

# --- nfsd restarted mid-copy -------------------------------------------------
for vers in 3 4.1; do
	mnt=/mnt/gw${vers/./}
	mount_gw "$vers" "$mnt"
	step "[$vers] copy 32 MiB; nfsd stopped once 4 MiB arrived, restarted 2 s later"
	rc=0
	# O_DIRECT, 128 KiB per WRITE: the copy is still running when nfsd stops
	timeout 300 dd if=/tmp/big.bin of="$mnt/restart.bin" bs=128k oflag=direct 2>"$out/dd-$vers.txt" &
	cp_pid=$!
	# allocated size: a vers=3 client may set the file size first
	bed_wait 60 "4 MiB on the server" sh -c "[ \$(du -k $BED_EXPORT/restart.bin 2>/dev/null | cut -f1) -ge 4096 ] 2>/dev/null"
	rpc.nfsd 0
	step "[$vers]   nfsd stopped with $(du -k "$BED_EXPORT/restart.bin" | cut -f1) KiB on the server"
	sleep 2
	rpc.nfsd 4
	echo "rdma $BED_RDMA_PORT" >/proc/fs/nfsd/portlist 2>/dev/null || true
	step "[$vers]   nfsd back"
	wait "$cp_pid" || rc=$?
	gw_alive
	sed 's/^/  dd: /' "$out/dd-$vers.txt"
	assert_eq 0 "$rc" "[$vers] dd exit status (an I/O error would fail it)"
	timeout 120 umount "$mnt"
	assert_file_sum "$BED_EXPORT/restart.bin" "$sum"
	rm -f "$BED_EXPORT/restart.bin"
done

cat >"$out/rpc.py" <<'PY'
import os, signal, socket, struct, sys, threading, time

PORT = int(sys.argv[2])
AUTH_NONE = struct.pack(">2I", 0, 0)
def auth_unix():
    name = b"t67"
    body = struct.pack(">II", 0, len(name)) + name + b"\0" * (-len(name) % 4) + struct.pack(">III", 0, 0, 0)
    return struct.pack(">II", 1, len(body)) + body
def opaque(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)
def call(xid, prog, vers, proc, args=b"", cred=None, rpcvers=2):
    return struct.pack(">6I", xid, 0, rpcvers, prog, vers, proc) + (cred or auth_unix()) + AUTH_NONE + args
def rec(body):
    return struct.pack(">I", 0x80000000 | len(body)) + body
def conn():
    s = socket.create_connection(("127.0.0.1", PORT))
    s.settimeout(10)
    return s
def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b
def read_reply(s):
    data = b""
    while True:
        m = struct.unpack(">I", recv_exact(s, 4))[0]
        data += recv_exact(s, m & 0x7fffffff)
        if m & 0x80000000:
            return data
def parse(r):
    """(xid, 'accepted', accept_stat, body) or (xid, 'denied', reject_stat, b'')"""
    xid, mtype, rstat = struct.unpack(">3I", r[:12])
    assert mtype == 1, "not a REPLY"
    if rstat == 1:
        return xid, "denied", struct.unpack(">I", r[12:16])[0], b""
    vlen = struct.unpack(">I", r[16:20])[0]
    off = 20 + vlen + (-vlen % 4)
    return xid, "accepted", struct.unpack(">I", r[off:off + 4])[0], r[off + 4:]
def rpc(s, xid, *a, **k):
    s.sendall(rec(call(xid, *a, **k)))
    r = parse(read_reply(s))
    assert r[0] == xid, "reply xid %#x for call %#x" % (r[0], xid)
    return r
def root_fh(s):
    _, how, st, body = rpc(s, 0x100, 100005, 3, 1, opaque(sys.argv[3].encode()))
    assert how == "accepted" and st == 0 and struct.unpack(">I", body[:4])[0] == 0, "MNT failed"
    n = struct.unpack(">I", body[4:8])[0]
    return body[8:8 + n]
def lookup(s, dirfh, name):
    _, how, st, body = rpc(s, 0x101, 100003, 3, 3, opaque(dirfh) + opaque(name.encode()))
    assert how == "accepted" and st == 0 and struct.unpack(">I", body[:4])[0] == 0, "LOOKUP failed"
    n = struct.unpack(">I", body[4:8])[0]
    return body[8:8 + n]

def good(seconds, flag):
    """NULL and GETATTR calls on one connection until FLAG exists (at most SECONDS)."""
    s = conn()
    fh = root_fh(s)
    end = time.time() + seconds
    n = 0
    while time.time() < end and not os.path.exists(flag):
        _, how, st, _ = rpc(s, 0x2000 + n, 100003, 3, 0)
        assert how == "accepted" and st == 0, "NULL %d: %s %d" % (n, how, st)
        _, how, st, body = rpc(s, 0x3000 + n, 100003, 3, 1, opaque(fh))
        assert how == "accepted" and st == 0 and body[:4] == b"\0\0\0\0", "GETATTR %d" % n
        n += 1
        time.sleep(0.02)
    print("good client: %d NULL + %d GETATTR calls, all answered with success" % (n, n))
    assert n > 0

def killwrite():
    """Pipelined WRITEs of 256 KiB in flight, then half of a 1 MiB WRITE record, then SIGKILL."""
    s = conn()
    fh = lookup(s, root_fh(s), "kw.bin")
    data = os.urandom(262144)
    for i in range(16):
        s.sendall(rec(call(0x500 + i, 100003, 3, 7, opaque(fh) + struct.pack(">QII", i * 262144, 262144, 0) + opaque(data))))
    big = call(0x600, 100003, 3, 7, opaque(fh) + struct.pack(">QII", 0, 1 << 20, 2) + opaque(os.urandom(1 << 20)))
    s.sendall(struct.pack(">I", 0x80000000 | len(big)) + big[:len(big) // 2])
    print("killwrite: 16 WRITEs sent, half a 1 MiB WRITE record sent; kill -9 now", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

def outcome(s, xid):
    """'closed', 'silent' (nothing within 3 s) or the parsed reply."""
    s.settimeout(3)
    try:
        r = parse(read_reply(s))
        return r if r[0] == xid else ("wrong xid %#x" % r[0])
    except (EOFError, ConnectionResetError):
        return "closed"
    except socket.timeout:
        return "silent"

def garbage():
    fh = root_fh(conn())
    cases = [
        # name, bytes, acceptable outcomes
        ("not RPC", b"\x80\x00\x00\x08hello wo", {"closed"}),
        ("truncated call header", rec(struct.pack(">3I", 0x700, 0, 2)), {"closed"}),
        ("64 KiB record of random bytes", struct.pack(">I", 0x80000000 | 65536) + os.urandom(65536), {"closed"}),
        ("oversize record mark", struct.pack(">I", 0x80000000 | (512 << 20)), {"closed"}),
        ("zero-length last fragment", struct.pack(">I", 0x80000000), {"closed"}),
        ("100 fragments", b"".join(struct.pack(">I", 4) + b"abcd" for _ in range(100)) + rec(b"efgh"), {"closed"}),
        ("stalled record (record_timeout)", struct.pack(">I", 0x80000000 | 4096) + b"x" * 100, {"closed"}),
        ("credential length 2^31", struct.pack(">6I", 0x701, 0, 2, 100003, 3, 0) + struct.pack(">II", 1, 0x80000000), None),
    ]
    ok = True
    for name, payload, want in cases:
        s = conn()
        if name == "credential length 2^31":
            payload = rec(payload)
        t0 = time.time()
        s.sendall(payload)
        # the stalled record may only be closed after record_timeout (2 s)
        got = outcome(s, 0x701)
        if got == "silent" and name.startswith("stalled"):
            s.settimeout(5)
            try:
                got = "closed" if s.recv(1) == b"" else "data"
            except socket.timeout:
                got = "silent"
        if want is None:
            good_ = got == "closed" or (isinstance(got, tuple) and got[1] == "denied")
        else:
            good_ = got in want
        print("  %-34s -> %s (%.1f s)%s" % (name, got, time.time() - t0, "" if good_ else "   <-- WRONG"))
        ok &= good_
        s.close()
    # well-formed records the gateway or the server must answer with an error
    replies = [
        ("RPC version 3", call(0x710, 100003, 3, 0, rpcvers=3), ("denied", 0)),       # RPC_MISMATCH
        ("unknown program 123456", call(0x711, 123456, 1, 0), ("accepted", 1)),        # PROG_UNAVAIL
        ("NFS version 9", call(0x712, 100003, 9, 0), ("accepted", 2)),                  # PROG_MISMATCH
        ("NFSv3 procedure 99", call(0x713, 100003, 3, 99), ("accepted", 3)),            # PROC_UNAVAIL
        ("GETATTR with 3 bytes of args", call(0x714, 100003, 3, 1, b"abc"), ("accepted", 4)),  # GARBAGE_ARGS
        ("GETATTR fh of 200 bytes", call(0x715, 100003, 3, 1, opaque(b"z" * 200)), ("accepted", 4)),
    ]
    s = conn()
    for name, body, want in replies:
        xid = struct.unpack(">I", body[:4])[0]
        s.sendall(rec(body))
        got = outcome(s, xid)
        good_ = got == "closed" or (isinstance(got, tuple) and got[1:3] == want)
        print("  %-34s -> %s%s" % (name, got if not isinstance(got, tuple) else got[1:3], "" if good_ else "   <-- WRONG, want %s" % (want,)))
        ok &= good_
        if got == "closed":
            s = conn()
    # a REPLY message from a client is dropped; the connection keeps working
    s = conn()
    s.sendall(rec(struct.pack(">3I", 0x720, 1, 0)))
    got = outcome(s, 0x720)
    _, how, st, _ = rpc(s, 0x721, 100003, 3, 0)
    print("  %-34s -> %s, then NULL on the same connection: %s %d" % ("REPLY message from a client", got, how, st))
    ok &= got in ("silent", "closed") and how == "accepted" and st == 0
    # the same connection still answers after all the error replies
    _, how, st, body = rpc(conn(), 0x730, 100003, 3, 1, opaque(fh))
    ok &= how == "accepted" and st == 0
    print("garbage: all as expected" if ok else "garbage: UNEXPECTED OUTCOMES")
    sys.exit(0 if ok else 1)

{"good": lambda: good(float(sys.argv[4]), sys.argv[5]), "killwrite": killwrite, "garbage": garbage}[sys.argv[1]]()
PY

# --- clients killed in the middle of writes ----------------------------------
mount_gw 3 /mnt/gwk
step "dd writing through the mount, killed -9 after 4 MiB"
dd if=/dev/zero of=/mnt/gwk/dd.bin bs=1M count=256 2>/dev/null &
dd_pid=$!
bed_wait 60 "4 MiB on the server" sh -c "[ \$(du -k $BED_EXPORT/dd.bin 2>/dev/null | cut -f1) -ge 4096 ] 2>/dev/null"
kill -9 "$dd_pid"
wait "$dd_pid" 2>/dev/null || true
timeout 120 umount /mnt/gwk

step "raw client: 16 pipelined WRITEs and half a WRITE record, then kill -9"
: >"$BED_EXPORT/kw.bin"
rc=0
timeout 60 python3 "$out/rpc.py" killwrite "$PORT" "$BED_EXPORT" || rc=$?
assert_eq 137 "$rc" "killwrite exit status (SIGKILL)"

# --- garbage next to a good client ------------------------------------------
step "garbage clients while a good client calls NULL and GETATTR"
timeout 120 python3 "$out/rpc.py" good "$PORT" "$BED_EXPORT" 100 "$out/stop" >"$out/good.txt" 2>&1 &
good_pid=$!
sleep 1
rc=0
timeout 100 python3 "$out/rpc.py" garbage "$PORT" "$BED_EXPORT" || rc=$?
touch "$out/stop"
grc=0
wait "$good_pid" || grc=$?
sed 's/^/  /' "$out/good.txt"
assert_eq 0 "$rc" "garbage outcomes"
assert_eq 0 "$grc" "good client exit status"

step "the gateway still serves: a fresh mount copies 4 MiB intact"
mount_gw 4.1 /mnt/gwf
head -c $((4 << 20)) /tmp/big.bin >/tmp/small.bin
cp /tmp/small.bin /mnt/gwf/fresh.bin
timeout 60 umount /mnt/gwf
assert_same_file /tmp/small.bin "$BED_EXPORT/fresh.bin"

step "SIGTERM; counters"
gw_stop
grep 'counter' "$out/gw.log" | sed 's/^/  /'
ctr() { sed -n "s/.*counter $1 = //p" "$out/gw.log" | tail -1; }
assert_eq "$(ctr clients_accepted)" "$(ctr clients_closed)" "clients_closed = clients_accepted"
assert_grep 'counter client_garbage = ' "$out/gw.log"
assert_grep 'counter client_record_timeout = 1' "$out/gw.log"
assert_grep 'counter client_record_too_big = 1' "$out/gw.log"
grep -E 'counter (calls_cancelled|client_garbage|client_io_error) ' "$out/gw.log" | sed 's/^/  seen: /' || true
# the truncated call header is the one call finalized as failed
assert_eq 1 "$(ctr calls_failed)" "calls_failed (the truncated call header only)"
gw_log_clean illegal-transition tcp-fallback
