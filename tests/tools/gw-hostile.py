#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# This file contains gw-hostile, the hostile neighbour of the gateway for the
# hostile-client scenarios (tests/pkg/check-hostile.sh on the host, the VM
# scenario t_78b): the attacks of a client that tries to starve the others,
# a well-behaved client that measures what is left for it, and a small RPC
# server to stand behind a TCP route.  Loopback addresses only; every
# attacker connection comes from SRC (an address of 127/8 other than the
# good client's), so the per-source limits see one neighbour.
#
#   gw-hostile.py server PORT           RPC server: echoes a call's arguments
#                                       after SUCCESS; NFSv3 READ (proc 6) gets
#                                       `count` bytes of 0x5a; GETATTR 84 bytes
#   gw-hostile.py attack NAME HOST PORT SRC [N]   one attack, then exits:
#     idle N       N connections, one small call each, then idle (held 20 s)
#     frag N       N connections announcing a 1 MiB fragment, then stalling
#     noread N     N connections x 300 NFSv3 READs of 60 KiB, never reading
#                  (of HOSTILE_FILE in the export HOSTILE_EXPORT when both are
#                  set: MOUNT and LOOKUP through the gateway first)
#     replies N    one connection, N REPLY records
#     dupxid N     one connection, N copies of one NULL call (same XID)
#     post MB      admin: POST /metrics with an MB MiB body (PORT: admin port)
#     header MB    admin: GET with an MB MiB header line
#   gw-hostile.py copy HOST PORT MIB    good client: MIB MiB through echo calls
#                                       (512 KiB each, 4 in flight); prints the
#                                       sha256 of what was sent and of what came back
#   gw-hostile.py getattr HOST PORT N   good client: N GETATTR calls one by one;
#                                       prints the median latency in ms
# Each attack prints one line: what it did and how the gateway answered
# (closed, refused, replies seen).  Exit status 0 unless the tool itself
# failed.
import hashlib, os, resource, socket, struct, sys, threading, time

NFS = 100003

def rec(body):
    return struct.pack(">I", 0x80000000 | len(body)) + body

def auth_sys():
    cred = struct.pack(">II", 0, 4) + b"host" + struct.pack(">III", 0, 0, 0)
    return struct.pack(">II", 1, len(cred)) + cred + struct.pack(">II", 0, 0)

def call(xid, proc, args=b"", prog=NFS, vers=3):
    return rec(struct.pack(">6I", xid, 0, 2, prog, vers, proc) + auth_sys() + args)

FH = struct.pack(">I", 8) + b"\x01" * 8

def read_exact(s, n):
    b = bytearray()
    while len(b) < n:
        d = s.recv(n - len(b))
        if not d:
            return None
        b += d
    return bytes(b)

def read_record(s):
    out = b""
    while True:
        m = read_exact(s, 4)
        if m is None:
            return None
        n = struct.unpack(">I", m)[0]
        frag = read_exact(s, n & 0x7fffffff)
        if frag is None:
            return None
        out += frag
        if n & 0x80000000:
            return out

# ---- the server behind the gateway's TCP route ----------------------------
def opaque_end(b, off):
    n = struct.unpack(">I", b[off:off + 4])[0]
    return off + 4 + (n + 3) // 4 * 4

def serve(c):
    while True:
        m = read_record(c)
        if m is None:
            return
        xid, _, _, _, _, proc = struct.unpack(">6I", m[:24])
        args = m[opaque_end(m, opaque_end(m, 28) + 4):] if len(m) >= 32 else b""
        head = struct.pack(">6I", xid, 1, 0, 0, 0, 0)
        if proc == 6 and len(args) >= 8:	# READ3args: fh, offset, count
            count = struct.unpack(">I", args[opaque_end(args, 0) + 8:][:4])[0]
            body = head + struct.pack(">II", 0, 0) + struct.pack(">III", count, 1, count) \
                + b"\x5a" * count + b"\0" * ((4 - count % 4) % 4)
        elif proc == 1:
            body = head + struct.pack(">I", 0) + b"\0" * 84
        else:
            body = head + args
        c.sendall(rec(body))

def server(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()

def string(b):
    return struct.pack(">I", len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)

def file_handle(host, port, export, name):
    """MNT export, LOOKUP name: the file's NFSv3 handle (nfs_fh3, encoded)."""
    s = socket.create_connection((host, port), timeout=30)
    s.sendall(call(0x70000, 1, string(export.encode()), prog=100005))
    m = read_record(s)
    if m is None or struct.unpack(">I", m[24:28])[0] != 0:
        sys.exit("MNT %s failed" % export)
    root = m[28:opaque_end(m, 28)]
    s.sendall(call(0x70001, 3, root + string(name.encode())))
    m = read_record(s)
    if m is None or struct.unpack(">I", m[24:28])[0] != 0:
        sys.exit("LOOKUP %s failed" % name)
    s.close()
    return m[28:opaque_end(m, 28)]

# ---- attacks --------------------------------------------------------------
def conn(host, port, src, timeout=10, rcvbuf=0):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((src, 0))
    s.settimeout(timeout)
    s.connect((host, port))
    return s

def gone(s):
    """The gateway closed or reset s (TCP state CLOSE or CLOSE_WAIT); nothing read."""
    try:
        return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] in (7, 8)
    except OSError:
        return True

def many(host, port, src, n, first, rcvbuf=0):
    socks, refused = [], 0
    for i in range(n):
        try:
            s = conn(host, port, src, 10, rcvbuf)
            if first:
                s.sendall(first(i))
            socks.append(s)
        except OSError:
            refused += 1
    return socks, refused

def count_closed(socks, secs):
    """How many of socks the gateway closes within secs (polled, never read)."""
    end = time.time() + secs
    while time.time() < end and not all(gone(s) for s in socks):
        time.sleep(0.2)
    return sum(1 for s in socks if gone(s))

def attack(name, host, port, src, n):
    t0 = time.time()
    if name == "idle":
        socks, refused = many(host, port, src, n, lambda i: call(0x10000 + i, 0))
        closed = count_closed(socks, 20)
        print("idle: %d connections, %d refused or reset at once, %d closed by the gateway "
              "within 20 s" % (n, refused, closed))
    elif name == "frag":
        socks, refused = many(host, port, src, n, lambda i: struct.pack(">I", 1 << 20))
        closed = count_closed(socks, 20)
        print("frag: %d connections announcing 1 MiB, %d refused, %d closed within 20 s"
              % (n, refused, closed))
    elif name == "noread":
        fh = FH
        if os.environ.get("HOSTILE_EXPORT") and os.environ.get("HOSTILE_FILE"):
            fh = file_handle(host, port, os.environ["HOSTILE_EXPORT"], os.environ["HOSTILE_FILE"])
        args = fh + struct.pack(">QI", 0, 60 << 10)
        burst = b"".join(call(0x20000 + i, 6, args) for i in range(300))
        socks, refused = many(host, port, src, n, None, 4096)
        for s in socks:
            try:
                s.settimeout(5)
                s.sendall(burst)
            except OSError:
                pass
        closed = count_closed(socks, 25)
        print("noread: %d connections x 300 READs of 60 KiB, %d refused, %d seen closed within "
              "25 s (a FIN queued behind unread replies is not seen)"
              % (n, refused, closed))
    elif name in ("replies", "dupxid"):
        s = conn(host, port, src, 30)
        one = rec(struct.pack(">6I", 0x30000, 1, 0, 0, 0, 0)) if name == "replies" \
            else call(0x40000, 0)
        sent = 0
        try:
            for _ in range(0, n, 500):
                k = min(500, n - sent)
                s.sendall(one * k)
                sent += k
        except OSError:
            pass
        s.shutdown(socket.SHUT_WR)
        got, closed = 0, False
        while True:
            try:
                m = read_record(s)
            except OSError:
                m = None
            if m is None:
                closed = True
                break
            got += 1
        print("%s: %d records sent, %d replies, %s" % (name, sent, got,
              "closed" if closed else "open"))
    elif name in ("post", "header"):
        s = conn(host, port, src, 30)
        mib = n << 20
        if name == "post":
            head = ("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % mib).encode()
        else:
            head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: "
        sent = 0
        try:
            s.sendall(head)
            chunk = b"a" * (1 << 20)
            while sent < mib:
                s.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        try:
            answer = s.recv(200).split(b"\r\n")[0].decode(errors="replace")
        except OSError:
            answer = ""
        print("%s: %d of %d MiB sent before the gateway stopped it; answer %r" %
              (name, sent >> 20, n, answer or "closed"))
    else:
        sys.exit("unknown attack " + name)
    sys.stderr.write("%s took %.1f s\n" % (name, time.time() - t0))

# ---- the good client ------------------------------------------------------
def copy(host, port, mib):
    s = socket.create_connection((host, port), timeout=60)
    chunk, inflight, total = 512 << 10, 4, mib << 20
    sent_h, got_h = hashlib.sha256(), hashlib.sha256()
    seed = os.urandom(64)
    nsent = nrecv = 0
    ncalls = total // chunk

    def data(i):
        return hashlib.sha512(seed + struct.pack(">I", i)).digest() * (chunk // 64)

    args_head = FH + struct.pack(">QIII", 0, chunk, 2, chunk)
    while nrecv < ncalls:
        while nsent < ncalls and nsent - nrecv < inflight:
            d = data(nsent)
            sent_h.update(d)
            s.sendall(call(0x50000000 + nsent, 7, args_head + d))
            nsent += 1
        m = read_record(s)
        if m is None:
            sys.exit("copy: the gateway closed the good client after %d calls" % nrecv)
        xid = struct.unpack(">I", m[:4])[0]
        if xid != 0x50000000 + nrecv:
            sys.exit("copy: reply %#x out of order" % xid)
        got_h.update(m[24 + len(args_head):])
        nrecv += 1
    print("copy: %d MiB sent sha256 %s" % (mib, sent_h.hexdigest()))
    print("copy: %d MiB back sha256 %s" % (mib, got_h.hexdigest()))

def getattr_loop(host, port, n):
    s = socket.create_connection((host, port), timeout=30)
    lat = []
    for i in range(n):
        t = time.perf_counter()
        s.sendall(call(0x60000000 + i, 1, FH))
        if read_record(s) is None:
            sys.exit("getattr: closed after %d calls" % i)
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    print("getattr: %d calls, median %.3f ms" % (n, lat[n // 2]))

def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    a = sys.argv[1:]
    if a[0] == "server":
        server(int(a[1]))
    elif a[0] == "attack":
        attack(a[1], a[2], int(a[3]), a[4], int(a[5]) if len(a) > 5 else 1)
    elif a[0] == "copy":
        copy(a[1], int(a[2]), int(a[3]))
    elif a[0] == "getattr":
        getattr_loop(a[1], int(a[2]), int(a[3]))
    else:
        sys.exit(__doc__ or "usage: see the header of gw-hostile.py")

main()
