#!/bin/bash
# claim: the kernel NFS client (vers=3 and vers=4.1, proto=tcp) mounts THROUGH rpcrdma-gw, whose NFS and MOUNT routes use the TCP fallback transport to nfsd on 10.99.0.1:2049; a 4 MiB random file goes both ways with its sha256 unchanged and the gateway stops cleanly on SIGTERM
#
#   kernel NFS client                rpcrdma-gw                       kernel nfsd
#   /mnt/gw3  (vers=3)   --tcp-->  127.0.0.1:20490  --tcp 2049------>  tmpfs /srv/nfs
#   /mnt/gw41 (vers=4.1) --tcp-->  (record marking,  --tcp mountd-->  (port from rpcbind)
#                                   XID remapping)        10.99.0.1
#
# This is the TCP FALLBACK of the gateway path, not RPC-over-RDMA: the RDMA
# transport plugs into the same seam (gateway.h, struct gw_transport_ops).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

GW_PORT=20490
out=/tmp/t60
mkdir -p "$out"

bed_nfsd_up
bed_nfs_client_modules

gw_opts=(gateway.log_level=info backend.port="$BED_NFS_PORT" nfs.transport=tcp)
gw_start_checked "$GW_PORT" "$out" "${gw_opts[@]}"
gw_rw_files

gw_rw_check 3 /mnt/gw3
gw_rw_check 4.1 /mnt/gw41

step "SIGTERM: clean shutdown"
gw_stop
sed 's/^/  gw: /' "$out/gw.log" | tail -40
assert_grep 'counter replies = ' "$out/gw.log"
assert_grep 'ready: listening; every NFS route can forward' "$out/gw.log"
assert_grep 'using the TCP fallback\|via tcp' "$out/gw.log"
gw_log_clean
