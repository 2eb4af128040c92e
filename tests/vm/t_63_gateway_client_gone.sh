#!/bin/bash
# claim: TCP clients that close with calls in flight over the RDMA transport (20 clients x 64 pipelined NFS NULL calls, closed at once) have their calls cancelled without a crash or leak; garbage and oversize records close only their client; afterwards the kernel NFS client still mounts and copies through the same gateway with sha256 unchanged
#
#   python clients --tcp--> rpcrdma-gw 127.0.0.1:20494 --rdma 20049--> nfsd
#   (close before replies,      cancel -> orphan until the backend's
#    garbage, 64 MiB record)    callback; buffers and credits come back)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20494
out=/tmp/t63
mkdir -p "$out"

bed_nfsd_up
bed_nfs_client_modules
gw_start "$PORT" "$out"

step "20 clients x 64 pipelined NULL calls, each closed before its replies"
python3 - "$PORT" <<'PY'
import socket, struct, sys
port = int(sys.argv[1])
for r in range(20):
    s = socket.create_connection(("127.0.0.1", port))
    buf = b""
    for i in range(64):
        body = struct.pack(">10I", (r << 16) | i, 0, 2, 100003, 3, 0, 0, 0, 0, 0)
        buf += struct.pack(">I", 0x80000000 | len(body)) + body
    s.sendall(buf)
    s.close()
# one that waits: every reply must come, with its own XID
s = socket.create_connection(("127.0.0.1", port))
for i in range(64):
    body = struct.pack(">10I", 0xabc00 + i, 0, 2, 100003, 3, 0, 0, 0, 0, 0)
    s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
seen = set()
f = s.makefile("rb")
for i in range(64):
    n = struct.unpack(">I", f.read(4))[0] & 0x7fffffff
    data = f.read(n)
    seen.add(struct.unpack(">I", data[:4])[0])
assert seen == set(0xabc00 + i for i in range(64)), "replies do not match the calls"
print("64 replies with their own XIDs")
PY

step "garbage and an oversize record: each closes its own client"
python3 - "$PORT" <<'PY'
import socket, struct, sys
port = int(sys.argv[1])
for payload in (b"\x80\x00\x00\x08hello wo", struct.pack(">I", 0x80000000 | (64 << 20))):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(payload)
    s.settimeout(10)
    assert s.recv(16) == b"", "the gateway did not close the client"
    s.close()
print("both closed")
PY

gw_alive
step "the kernel NFS client still works through the gateway"
gw_mount 3 /mnt/gw nolock
head -c $((2 << 20)) /dev/urandom >/tmp/c.bin
cp /tmp/c.bin /mnt/gw/c.bin
timeout 60 umount /mnt/gw
assert_same_file /tmp/c.bin "$BED_EXPORT/c.bin"

step "SIGTERM"
gw_stop
grep 'counter' "$out/gw.log" | sed 's/^/  /'
assert_grep 'counter calls_cancelled = ' "$out/gw.log"
assert_grep 'counter client_garbage = 1' "$out/gw.log"
assert_grep 'counter client_record_too_big = 1' "$out/gw.log"
gw_log_clean illegal-transition
