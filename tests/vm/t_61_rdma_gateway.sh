#!/bin/bash
# claim: the kernel NFS client (vers=3, 4.0, 4.1 and 4.2, proto=tcp) mounts THROUGH rpcrdma-gw whose NFS route uses RPC-over-RDMA (backend-rdma, rxe0) to nfsd on 10.99.0.1:20049; a 4 MiB random file goes both ways with its sha256 unchanged, 8 parallel writers of odd sizes too, WRITE data travels in read chunks and READ data in write chunks, most call Sends go unsignaled, and the gateway stops cleanly on SIGTERM
#
#   kernel NFS client                rpcrdma-gw                         kernel nfsd
#   /mnt/gw3  (vers=3)   --tcp-->  127.0.0.1:20490  --rdma 20049 (rxe0)-->  tmpfs /srv/nfs
#   /mnt/gw41 (vers=4.1) --tcp-->  (pool registered,  --tcp mountd------->  (port from rpcbind)
#                                   chunks, XID map)        10.99.0.1
#
# NFS goes over the RDMA transport (gateway/transport_rdma.c over
# backend-rdma/): WRITE data in read chunks from the pool buffers it was
# received into, READ data in write chunks; MOUNT over the TCP transport.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

GW_PORT=20490
out=/tmp/t61
mkdir -p "$out"

bed_nfsd_up
bed_nfs_client_modules

gw_opts=(gateway.log_level=debug backend.port="$BED_NFS_PORT")
gw_start_checked "$GW_PORT" "$out" "${gw_opts[@]}"
gw_rw_files

gw_rw_check 3 /mnt/gw3
# NFSv4.0: SETCLIENTID's callback address rewritten (v40_callbacks = relay).
gw_rw_check 4.0 /mnt/gw40
gw_rw_check 4.1 /mnt/gw41
# NFSv4.2: a TCP client sends READ_PLUS, which is not DDP-eligible: its
# reply needs a reply chunk sized from the count (docs/chunking.md).
gw_rw_check 4.2 /mnt/gw42

# Two mounts at once, the writers alternating: with GW_WORKERS=2 the mounts
# come from two addresses (gw_mount) and so go through both workers at once.
step "8 parallel writers and readers through the gateway (vers=3, two mounts)"
gw_mount 3 /mnt/gwp nolock
gw_mount 3 /mnt/gwq nolock
for i in 1 2 3 4 5 6 7 8; do
	head -c $((i * 524288 + i * 7)) /dev/urandom >"/tmp/p$i.bin"	# odd sizes: pads
done
pids=()
for i in 1 2 3 4 5 6 7 8; do
	m=/mnt/gwp
	[ $((i % 2)) = 1 ] || m=/mnt/gwq
	(cp "/tmp/p$i.bin" "$m/p$i.bin" && cat "$m/server.bin" >/dev/null) &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
gw_alive
sync
timeout 60 umount /mnt/gwp
timeout 60 umount /mnt/gwq
for i in 1 2 3 4 5 6 7 8; do
	assert_same_file "/tmp/p$i.bin" "$BED_EXPORT/p$i.bin"
done
gw_spread_check 100

step "send-queue completions per Send (most call Sends unsignaled)"
sig=$(gw_metric 'rpcrdma_gw_rdma_sends_total{backend="nfsd",completion="signaled"}')
unsig=$(gw_metric 'rpcrdma_gw_rdma_sends_total{backend="nfsd",completion="unsignaled"}')
sqc=$(gw_metric 'rpcrdma_gw_rdma_work_completions_total{backend="nfsd",queue="send"}')
wake=$(gw_metric 'rpcrdma_gw_rdma_cq_wakeups_total{backend="nfsd"}')
awk -v s="$sig" -v u="$unsig" -v c="$sqc" -v w="$wake" 'BEGIN {
	printf "  Sends %d signaled, %d unsignaled; send-queue completions %d (%.3f per Send); CQ wake-ups %d (%.3f per Send)\n",
		s, u, c, c / (s + u), w, w / (s + u) }'
[ "$unsig" -gt "$sig" ] || bed_fail "unsignaled Sends $unsig, signaled $sig"

step "SIGTERM: clean shutdown"
gw_stop
grep -v 'rpcrdma-gw\[debug\]' "$out/gw.log" | sed 's/^/  gw: /' | tail -40
assert_grep 'counter replies = ' "$out/gw.log"
assert_grep 'route nfs: program 100003 -> backend nfsd (10.99.0.1) via rdma' "$out/gw.log"
step "chunks used: WRITE data in read chunks, READ data in write chunks"
assert_grep 'RDMA_MSG, 1 read, 0 write' "$out/gw.log"
assert_grep 'RDMA_MSG, 0 read, 1 write' "$out/gw.log"
grep -c 'RDMA_MSG, 1 read' "$out/gw.log" | sed 's/^/  calls with a read chunk: /'
grep -c '0 read, 1 write' "$out/gw.log" | sed 's/^/  calls with a write chunk: /'
if grep -q 'using the TCP fallback' "$out/gw.log"; then
	bed_fail "the NFS route fell back to TCP"
fi
gw_log_clean
