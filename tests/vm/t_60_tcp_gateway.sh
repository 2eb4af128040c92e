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

GW=${BUILD:-build}/rpcrdma-gw
GW_PORT=20490
out=/tmp/t60
mkdir -p "$out"

bed_nfsd_up
bed_nfs_client_modules

gw_opts=(gateway.log_level=info backend.port="$BED_NFS_PORT" nfs.transport=tcp)
gw_conf "$GW_PORT" "$out" "${gw_opts[@]}"
step "rpcrdma-gw --check-config"
assert_eq "configuration OK" "$("$GW" --check-config "$out/gw.conf")" "check-config output"

gw_start "$GW_PORT" "$out" "${gw_opts[@]}"
bed_wait 10 "the gateway listening" sh -c "ss -ltn | grep -q ':$GW_PORT '"

step "write $((4)) MiB of random data on the server's tmpfs"
head -c $((4 << 20)) /dev/urandom >"$BED_EXPORT/server.bin"
sum=$(sha256sum "$BED_EXPORT/server.bin" | cut -d' ' -f1)
head -c $((4 << 20)) /dev/urandom >/tmp/client.bin

check_version() {
	local vers=$1 mnt=$2
	gw_mount "$vers" "$mnt" nolock
	grep " $mnt " /proc/mounts | sed 's/^/  /'
	assert_mount_opt "$mnt" "vers=$vers" proto=tcp "port=$GW_PORT"

	step "read through the gateway (vers=$vers)"
	assert_file_sum "$mnt/server.bin" "$sum"

	step "write through the gateway (vers=$vers), compare on the server side"
	cp /tmp/client.bin "$mnt/client-v$vers.bin"
	sync
	timeout 60 umount "$mnt"
	assert_same_file /tmp/client.bin "$BED_EXPORT/client-v$vers.bin"
}

check_version 3 /mnt/gw3
check_version 4.1 /mnt/gw41

step "SIGTERM: clean shutdown"
gw_stop
sed 's/^/  gw: /' "$out/gw.log" | tail -40
assert_grep 'counter replies = ' "$out/gw.log"
assert_grep 'ready: listening; every NFS route can forward' "$out/gw.log"
assert_grep 'using the TCP fallback\|via tcp' "$out/gw.log"
gw_log_clean
