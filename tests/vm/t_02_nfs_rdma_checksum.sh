#!/bin/bash
# claim: the kernel NFS client moves a 4 MiB random file over proto=rdma port 20049 (NFSv4.1 and NFSv3) both ways with its sha256 unchanged, and /proc/mounts shows proto=rdma
#
#   kernel NFS client                          kernel nfsd
#   /mnt/v41 (vers=4.1) --+                +-- rdma 20049 --> tmpfs /srv/nfs
#   /mnt/v3  (vers=3)   --+-- rxe0 / d0 ---+   (tcp 2049 for MOUNT/rpcbind)
#                            10.99.0.1
#
# Proves the reference peer of the gateway: the kernel's own NFS/RDMA path
# works on this bed (reads use write chunks, writes use read chunks), so a
# failure in a gateway scenario is the gateway's.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

SIZE_MIB=4

bed_nfsd_up
bed_nfs_client_modules

step "write $SIZE_MIB MiB of random data on the server's tmpfs"
head -c "$((SIZE_MIB << 20))" /dev/urandom >"$BED_EXPORT/server.bin"
sum=$(sha256sum "$BED_EXPORT/server.bin" | cut -d' ' -f1)
head -c "$((SIZE_MIB << 20))" /dev/urandom >/tmp/client.bin

check_version() {
	local vers=$1 mnt=$2 src=$3
	mkdir -p "$mnt"
	step "mount vers=$vers proto=rdma port=$BED_RDMA_PORT $BED_IP:$src on $mnt"
	# nolock: no rpc.statd in the bed; locking is not the claim.
	timeout 60 mount -t nfs -o "vers=$vers,proto=rdma,port=$BED_RDMA_PORT,nolock" \
		"$BED_IP:$src" "$mnt"
	grep " $mnt " /proc/mounts | sed 's/^/  /'
	assert_mount_opt "$mnt" "vers=$vers" proto=rdma "port=$BED_RDMA_PORT"

	step "read back over RDMA (vers=$vers)"
	assert_file_sum "$mnt/server.bin" "$sum"

	step "write over RDMA (vers=$vers), compare on the server side"
	cp /tmp/client.bin "$mnt/client-v$vers.bin"
	timeout 60 umount "$mnt"
	assert_same_file /tmp/client.bin "$BED_EXPORT/client-v$vers.bin"
}

check_version 4.1 /mnt/v41 /
check_version 3 /mnt/v3 "$BED_EXPORT"
