#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Helpers for tests/pkg/check-notify.sh and check-ops.sh (loopback only):
#   ops-helpers.py ports N             print N free TCP ports on 127.0.0.1
#   ops-helpers.py notify PATH LOG     sd_notify receiver: datagrams on PATH, one per line in LOG
#   ops-helpers.py server PORT         RPC server: answers every call SUCCESS, empty body
#   ops-helpers.py call PORT PROG VERS PROC [N]
#                                      N calls (default 1); prints accept_stat of the last
#                                      reply (0 SUCCESS, 1 PROG_UNAVAIL ...), exit 1 on no reply
import os, socket, struct, sys, threading

def ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket(); s.bind(('127.0.0.1', 0)); socks.append(s)
    print(' '.join(str(s.getsockname()[1]) for s in socks))

def notify(path, log):
    try: os.unlink(path)
    except FileNotFoundError: pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(path)
    with open(log, 'a', buffering=1) as f:
        while True:
            d = s.recv(4096).decode(errors='replace')
            for line in d.split('\n'):
                if line: f.write(line + '\n')

def recv_record(c):
    buf = b''
    while len(buf) < 4:
        d = c.recv(4 - len(buf))
        if not d: return None
        buf += d
    n = struct.unpack('>I', buf)[0] & 0x7fffffff
    rec = b''
    while len(rec) < n:
        d = c.recv(n - len(rec))
        if not d: return None
        rec += d
    return rec

def serve(c):
    while True:
        rec = recv_record(c)
        if rec is None: return
        body = rec[:4] + struct.pack('>IIIII', 1, 0, 0, 0, 0)
        c.sendall(struct.pack('>I', 0x80000000 | len(body)) + body)

def server(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', port)); s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()

def call(port, prog, vers, proc, n=1):
    c = socket.create_connection(('127.0.0.1', port), timeout=15)
    stat = None
    for i in range(n):
        msg = struct.pack('>IIIIIIIIII', 0x1000 + i, 0, 2, prog, vers, proc, 0, 0, 0, 0)
        c.sendall(struct.pack('>I', 0x80000000 | len(msg)) + msg)
        rec = recv_record(c)
        if rec is None or len(rec) < 24: sys.exit(1)
        xid, mtype, rstat = struct.unpack('>III', rec[:12])
        if xid != 0x1000 + i or mtype != 1 or rstat != 0: sys.exit(1)
        stat = struct.unpack('>I', rec[20:24])[0]
    print(stat)

cmd = sys.argv[1]
if cmd == 'ports': ports(int(sys.argv[2]))
elif cmd == 'notify': notify(sys.argv[2], sys.argv[3])
elif cmd == 'server': server(int(sys.argv[2]))
elif cmd == 'call': call(*[int(a) for a in sys.argv[2:]])
else: sys.exit(2)
