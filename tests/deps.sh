#!/bin/sh
# Install every Debian 12 package that building, testing, fuzzing and the VM
# tier need.  Idempotent: does nothing when all are present.
set -eu
PKGS="build-essential pkg-config clang libclang-rt-14-dev
 libibverbs-dev librdmacm-dev libevent-dev libtirpc-dev libssl-dev libsystemd-dev libinih-dev
 libjson-c-dev
 libcmocka-dev
 linux-image-amd64 qemu-system-x86 busybox-static kmod cpio iproute2 procps
 rdma-core ibverbs-providers ibverbs-utils rdmacm-utils
 nfs-kernel-server nfs-common rpcbind libnfs-utils haproxy fio
 debhelper dpkg-dev lintian systemd man-db groff-base"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi
echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: must run as root (apt-get)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
