# SPDX-License-Identifier: MIT
# This file contains the raw RPC pieces the NLM scenarios (t_77, t_80, t_81,
# t_82) run in the guest (copied to $out/rpc.py, imported by their own
# scripts): XDR helpers, record marking, an RPC client bound to a source
# address, an RPC server over TCP and UDP, a fake rpcbind, a TCP forwarder;
# NLM results, MOUNT + LOOKUP, SM_NOTIFY, the server's own lock probe.
import fcntl, os, socket, struct, threading

def opaque(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)
def get_opaque(d, off):
    n = struct.unpack(">I", d[off:off + 4])[0]
    return d[off + 4:off + 4 + n], off + 4 + n + (-n % 4)

def reply(xid, res):
    return struct.pack(">6I", xid, 1, 0, 0, 0, 0) + res
def parse_call(d):
    """(xid, prog, vers, proc, args) of an RPC call message."""
    xid, mtype, _, prog, vers, proc = struct.unpack(">6I", d[:24])
    _, off = get_opaque(d, 28)        # credential body
    _, off = get_opaque(d, off + 4)   # verifier body
    return xid, prog, vers, proc, d[off:]

def recv_record(s):
    data = b""
    while True:
        h = s.recv(4, socket.MSG_WAITALL)
        if len(h) < 4:
            return None
        n = struct.unpack(">I", h)[0]
        data += s.recv(n & 0x7fffffff, socket.MSG_WAITALL)
        if n & 0x80000000:
            return data
def send_record(s, body):
    s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)

def serve_tcp(addr, port, handle):
    """handle(call message) -> reply message or None; returns the port."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(16)
    def conn(s):
        with s:
            while True:
                d = recv_record(s)
                if d is None:
                    return
                r = handle(d)
                if r is not None:
                    send_record(s, r)
    def loop():
        while True:
            s, _ = ls.accept()
            threading.Thread(target=conn, args=(s,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
    return ls.getsockname()[1]
def serve_udp(addr, port, handle):
    us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    us.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    us.bind((addr, port))
    def loop():
        while True:
            d, peer = us.recvfrom(65536)
            r = handle(d)
            if r is not None:
                us.sendto(r, peer)
    threading.Thread(target=loop, daemon=True).start()

def rpcbind(addr, ports):
    """Port 111 of ADDR (TCP and UDP) names ports[prog] for each program
    in PORTS, nothing for any other: PMAP v2 GETPORT, RPCB v3 GETADDR,
    v4 GETVERSADDR; NULL answered."""
    def handle(d):
        xid, prog, vers, proc, args = parse_call(d)
        if prog != 100000:
            return None
        if proc == 0:
            return reply(xid, b"")
        want = struct.unpack(">I", args[:4])[0]
        port = ports.get(want, 0)
        if vers == 2 and proc == 3:
            return reply(xid, struct.pack(">I", port))
        if (vers, proc) in ((3, 3), (4, 3), (4, 9)):
            ua = ("%s.%d.%d" % (addr, port >> 8, port & 255)).encode() if port else b""
            return reply(xid, opaque(ua))
        return struct.pack(">6I", xid, 1, 0, 0, 0, 3)   # PROC_UNAVAIL
    serve_tcp(addr, 111, handle)
    serve_udp(addr, 111, handle)

def forward(addr, port, to_addr, to_port):
    """TCP ADDR:PORT -> TO_ADDR:TO_PORT, one outgoing connection per client."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(16)
    def pump(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    def loop():
        while True:
            c, _ = ls.accept()
            try:
                u = socket.create_connection((to_addr, to_port), 10)
                u.settimeout(None)
            except OSError:
                c.close()
                continue
            threading.Thread(target=pump, args=(c, u), daemon=True).start()
            threading.Thread(target=pump, args=(u, c), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()

def auth_unix():
    """AUTH_SYS: stamp 0, machine "guest", uid 0, gid 0, no gids."""
    body = struct.pack(">I", 0) + opaque(b"guest") + struct.pack(">III", 0, 0, 0)
    return struct.pack(">II", 1, len(body)) + body

ACCEPT = {0: "SUCCESS", 1: "PROG_UNAVAIL", 2: "PROG_MISMATCH", 3: "PROC_UNAVAIL",
          4: "GARBAGE_ARGS", 5: "SYSTEM_ERR"}
class Peer:
    """One RPC client bound to source address SRC talking to DST:PORT."""
    def __init__(self, src, dst, port):
        self.s = socket.socket()
        self.s.bind((src, 0))
        self.s.settimeout(30)
        self.s.connect((dst, port))
        self.xid = int.from_bytes(os.urandom(3), "big") << 4
    def call_any(self, prog, vers, proc, args):
        """(accept_stat, results) of an accepted reply to this call."""
        self.xid += 1
        body = struct.pack(">6I", self.xid, 0, 2, prog, vers, proc) + auth_unix() + \
            struct.pack(">II", 0, 0) + args
        send_record(self.s, body)
        data = recv_record(self.s)
        assert data is not None, "proc %d: connection closed" % proc
        rxid, mtype, rstat = struct.unpack(">3I", data[:12])
        assert rxid == self.xid and mtype == 1 and rstat == 0, "proc %d: denied" % proc
        off = 20 + struct.unpack(">I", data[16:20])[0]
        return struct.unpack(">I", data[off:off + 4])[0], data[off + 4:]
    def call(self, prog, vers, proc, args):
        """The results of a SUCCESS reply (anything else fails the test)."""
        acc, res = self.call_any(prog, vers, proc, args)
        assert acc == 0, "proc %d: accept_stat %s" % (proc, ACCEPT.get(acc, acc))
        return res

# ---- what the NLM scenarios' own scripts share ----

NLM_STAT = {0: "GRANTED", 1: "DENIED", 2: "DENIED_NOLOCKS", 3: "BLOCKED", 4: "DENIED_GRACE_PERIOD"}
def nlm_stat(body):
    """(name, what follows) of an NLM v4 result: the cookie, then its stat."""
    _, off = get_opaque(body, 0)
    return NLM_STAT.get(struct.unpack(">I", body[off:off + 4])[0], "?"), body[off + 4:]

def fh_of(peer, export, name):
    """The NFSv3 file handle of EXPORT/NAME through PEER: MOUNT MNT, LOOKUP."""
    body = peer.call(100005, 3, 1, opaque(export.encode()))
    assert struct.unpack(">I", body[:4])[0] == 0, "MNT"
    root, _ = get_opaque(body, 4)
    body = peer.call(100003, 3, 3, opaque(root) + opaque(name.encode()))
    assert struct.unpack(">I", body[:4])[0] == 0, "LOOKUP"
    return get_opaque(body, 4)[0]

def sm_notify(peer, name, state):
    """SM_NOTIFY (stat_chge) of NAME, STATE over PEER; its void reply."""
    peer.call(100024, 1, 6, opaque(name) + struct.pack(">i", state))
    return "answered"

def server_try(path):
    """The server side's own view: can a local process lock PATH now?"""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return "locked"
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return "free"
    finally:
        os.close(fd)

def say(k, v):
    """One "key: value" line, the form the shell side checks."""
    print("%s: %s" % (k, v), flush=True)
