# SPDX-License-Identifier: MIT
# This file contains a Kerberos client that misbehaves on purpose (t_84):
# over one TCP connection it creates an RPCSEC_GSS context with the server
# (RFC 2203 5.2: NULL with gss_proc INIT, a krb5 token from the MIT
# GSS-API library through ctypes, no build dependency), sends good DATA
# calls (NFSv3 NULL, the header's MIC in the verifier, RFC 2203 5.3.1),
# then what the scenario names, and prints one line per step with what the
# server side did: "closed" (the connection was closed), "denied N"
# (MSG_DENIED / AUTH_ERROR with auth_stat N), "accepted N" (MSG_ACCEPTED
# with accept_stat N), or "silent" (no answer within the wait).
#
#   python3 gssbad.py HOST PORT SRC SERVICE STEP...
#     SRC      source address to bind (the gateway keeps hosts apart by it)
#     SERVICE  GSS host-based service name, e.g. nfs@nfsgw.test
#     STEP     good:N    N good DATA calls in turn (each must be answered)
#              stale     a DATA call with a sequence number seen before
#              lowseq    a DATA call below the window (seq 1 after 200+)
#              badproc0  gss_proc 5 on procedure NULL
#              badproc1  gss_proc 5 on procedure GETATTR
#              vers0     RPCSEC_GSS version 0
#              reconnect a new TCP connection (the context stays valid)
# The credential cache is the caller's (KRB5CCNAME).
import ctypes, socket, struct, sys, time

NFS, RPCSEC_GSS = 100003, 6

gss = ctypes.CDLL("libgssapi_krb5.so.2")
OM = ctypes.c_uint32


class Buf(ctypes.Structure):
    _fields_ = [("length", ctypes.c_size_t), ("value", ctypes.c_void_p)]


class Oid(ctypes.Structure):
    _fields_ = [("length", ctypes.c_uint32), ("elements", ctypes.c_void_p)]


HOSTBASED = ctypes.POINTER(Oid).in_dll(gss, "GSS_C_NT_HOSTBASED_SERVICE")


def check(major, what):
    if major & 0xffff0000:
        raise SystemExit("gssbad: %s: GSS major %#x" % (what, major))


def buf_of(b):
    keep = ctypes.create_string_buffer(b, len(b))
    return Buf(len(b), ctypes.cast(keep, ctypes.c_void_p)), keep


def take(buf):
    out = ctypes.string_at(buf.value, buf.length) if buf.length else b""
    gss.gss_release_buffer(ctypes.byref(OM()), ctypes.byref(buf))
    return out


def opaque(b):
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def recv_record(s):
    data = b""
    while True:
        h = s.recv(4, socket.MSG_WAITALL)
        if len(h) < 4:
            return None
        n = struct.unpack(">I", h)[0]
        part = s.recv(n & 0x7fffffff, socket.MSG_WAITALL)
        if len(part) < (n & 0x7fffffff):
            return None
        data += part
        if n & 0x80000000:
            return data


class Client:
    def __init__(self, host, port, src, service):
        self.addr, self.src = (host, int(port)), src
        self.ctx = ctypes.c_void_p()
        self.handle, self.seq, self.xid = b"", 0, 0x5a000000
        name_buf, keep = buf_of(service.encode())
        self.name = ctypes.c_void_p()
        check(gss.gss_import_name(ctypes.byref(OM()), ctypes.byref(name_buf), HOSTBASED,
                                  ctypes.byref(self.name)), "import_name")
        del keep
        self.connect()

    def connect(self):
        self.s = socket.socket()
        self.s.bind((self.src, 0))
        self.s.connect(self.addr)
        self.s.settimeout(10)

    def cred(self, proc, seq, vers=1):
        return struct.pack(">4I", vers, proc, seq, 1) + opaque(self.handle)

    def mic(self, data):
        msg, keep = buf_of(data)
        tok = Buf()
        check(gss.gss_get_mic(ctypes.byref(OM()), self.ctx, 0, ctypes.byref(msg),
                              ctypes.byref(tok)), "get_mic")
        del keep
        return take(tok)

    def call(self, nproc, cred, args=b"", verf=None, wait=10):
        """Send one call; the outcome as a word, and the reply."""
        self.xid += 1
        head = struct.pack(">6I", self.xid, 0, 2, NFS, 3, nproc)
        head += struct.pack(">I", RPCSEC_GSS) + opaque(cred)
        verf = struct.pack(">I", 0) + opaque(b"") if verf is None else \
            struct.pack(">I", RPCSEC_GSS) + opaque(self.mic(head))
        body = head + verf + args
        try:
            self.s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
            self.s.settimeout(wait)
            r = recv_record(self.s)
        except socket.timeout:
            return "silent", None
        except OSError:
            return "closed", None
        if r is None:
            return "closed", None
        stat = struct.unpack(">I", r[8:12])[0]
        if stat == 1:
            return "denied %d" % struct.unpack(">I", r[16:20])[0], r
        vlen = struct.unpack(">I", r[16:20])[0]
        off = 20 + vlen + (-vlen % 4)
        return "accepted %d" % struct.unpack(">I", r[off:off + 4])[0], r[off + 4:]

    def init(self):
        """RFC 2203 5.2.2: one INIT round (krb5 needs one without mutual auth).
        nfsd closes the connection of an INIT whose upcall to rpc.svcgssd
        has no answer yet (svcauth_gss.c: SVC_CLOSE): connect again and
        retry, as the kernel client does."""
        out = Buf()
        check(gss.gss_init_sec_context(ctypes.byref(OM()), None, ctypes.byref(self.ctx),
                                       self.name, None, 0, 0, None, None, None,
                                       ctypes.byref(out), None, None), "init_sec_context")
        token = take(out)
        for attempt in range(10):
            what, res = self.call(0, self.cred(1, 0), opaque(token))
            if what == "accepted 0":
                break
            print("gssbad: context creation: %s, again" % what, file=sys.stderr, flush=True)
            time.sleep(1)
            self.s.close()
            self.connect()
        else:
            raise SystemExit("gssbad: context creation: %s" % what)
        hlen = struct.unpack(">I", res[:4])[0]
        self.handle = res[4:4 + hlen]
        off = 4 + hlen + (-hlen % 4)
        major, _, window = struct.unpack(">3I", res[off:off + 12])
        if major != 0:
            raise SystemExit("gssbad: context creation: GSS major %#x" % major)
        return window

    def data(self, seq, nproc=0, proc=0, vers=1, wait=10):
        return self.call(nproc, self.cred(proc, seq, vers), verf=True, wait=wait)[0]


def main(argv):
    host, port, src, service = argv[1:5]
    c = Client(host, port, src, service)
    print("window %d" % c.init(), flush=True)
    for step in argv[5:]:
        if step.startswith("good:"):
            for _ in range(int(step[5:])):
                c.seq += 1
                what = c.data(c.seq)
                if what != "accepted 0":
                    raise SystemExit("gssbad: good call seq %d: %s" % (c.seq, what))
            what = "accepted 0"
        elif step == "stale":
            what = c.data(c.seq, wait=5)
        elif step == "lowseq":
            what = c.data(1, wait=5)
        elif step == "badproc0":
            what = c.data(c.seq + 1, proc=5)
        elif step == "badproc1":
            what = c.data(c.seq + 1, nproc=1, proc=5)
        elif step == "vers0":
            what = c.data(c.seq + 1, vers=0)
        elif step == "reconnect":
            c.s.close()
            c.connect()
            what = "connected"
        else:
            raise SystemExit("gssbad: unknown step %s" % step)
        print("%s: %s" % (step, what), flush=True)


if __name__ == "__main__":
    main(sys.argv)
