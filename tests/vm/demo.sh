#!/bin/bash
# claim: demo: the Soft-RoCE bed serves NFS over RDMA to the kernel client with an unchanged checksum; the gateway step follows once the gateway path lands
#
#   TCP NFS client --tcp--> rpcrdma-gw --RPC-over-RDMA--> kernel nfsd   (demo_gateway: not yet)
#   kernel NFS client ------proto=rdma port 20049-------> kernel nfsd   (demo_kernel_rdma)
#                 all in one guest: rxe0 on d0 (dummy), 10.99.0.1
#
# `make demo` runs this on the host (BUILD=... tests/vm/demo.sh); it boots the
# VM tier's guest with tests/vm/run-vm.sh and runs itself inside.  Exit status
# 0 means every step that is available passed.
set -u

if [ "${VM_GUEST:-}" != 1 ]; then
	cd "$(dirname "$0")/../.." || exit 1
	export BUILD=${BUILD:-build}
	why=$(tests/vm/run-vm.sh --probe) || {
		echo "demo: the VM tier cannot run here: $why (run 'make deps' as root)" >&2
		exit 1
	}
	echo "demo: booting the test guest (qemu TCG, ~5 s), then the bed (~10 s) ..."
	exec tests/vm/run-vm.sh tests/vm/demo.sh
fi

# --- inside the guest ---------------------------------------------------------
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

SIZE_MIB=8

banner() {
	echo
	echo "=== $* ==="
}

demo_bed() {
	banner "1. The bed: Soft-RoCE + kernel nfsd"
	bed_nfsd_up
	bed_nfs_client_modules
	rdma link show "$BED_RDMA_DEV/1"
	echo "nfsd listens on: $(sort -u /proc/fs/nfsd/portlist | tr "\n" " ")"
}

demo_kernel_rdma() {
	local mnt=/mnt/demo sum
	banner "2. Reference path: kernel NFS client over RDMA (no gateway)"
	head -c "$((SIZE_MIB << 20))" /dev/urandom >"$BED_EXPORT/demo.bin"
	sum=$(sha256sum "$BED_EXPORT/demo.bin" | cut -d' ' -f1)
	echo "server file: $BED_EXPORT/demo.bin, $SIZE_MIB MiB, sha256 $sum"
	mkdir -p "$mnt"
	timeout 60 mount -t nfs -o "vers=4.1,proto=rdma,port=$BED_RDMA_PORT" "$BED_IP:/" "$mnt"
	echo "mounted: $(grep " $mnt " /proc/mounts)"
	assert_mount_opt "$mnt" proto=rdma "port=$BED_RDMA_PORT"
	step "reading $mnt/demo.bin over RDMA"
	assert_file_sum "$mnt/demo.bin" "$sum"
	echo "client read:  sha256 $sum  (equal)"
	timeout 60 umount "$mnt"
}

# ----------------------------------------------------------------------------
# GATEWAY SECTION.  When the gateway path lands, this function starts
# "$BUILD/rpcrdma-gw" in the guest (upstream: rdma $BED_IP:$BED_RDMA_PORT;
# listening on TCP on $BED_IP), mounts it with the kernel client over plain
# TCP (vers=3 and vers=4.1), checks a file's sha256 both ways like
# demo_kernel_rdma, and stops the daemon.  It returns non-zero on any failure.
# ----------------------------------------------------------------------------
demo_gateway() {
	banner "3. Gateway path: TCP NFS client -> rpcrdma-gw -> nfsd over RDMA"
	if [ -x "$BUILD/rpcrdma-gw" ]; then
		echo "daemon built: $BUILD/rpcrdma-gw"
	else
		echo "daemon not built ($BUILD/rpcrdma-gw missing; 'make' builds it)"
	fi
	echo "NOT YET AVAILABLE: the gateway daemon is not wired end-to-end yet"
	echo "(the gateway path issue is open); this step is skipped, not failed."
	return 0
}

demo_bed
demo_kernel_rdma
demo_gateway
banner "Demo done: bed and kernel NFS/RDMA path OK; gateway step not yet available"
