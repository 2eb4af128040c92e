#!/bin/bash
# SPDX-License-Identifier: MIT
#
# This file contains the VM tier runner: it boots Debian's own kernel under
# qemu (TCG, no KVM needed) with this machine's root file system shared
# read-only over 9p plus a tmpfs overlay, runs one scenario script inside and
# hands its output and exit status back.
#
#   tests/vm/run-vm.sh --probe          exit 0 if the tier can run here, else
#                                       print why and exit 1
#   tests/vm/run-vm.sh SCRIPT [ARGS]    run SCRIPT in a fresh guest; exit with
#                                       its status, its output on stdout
#
# Normal operation: a small initramfs (busybox-static as /init plus the
# virtio, 9p and overlay modules of the guest kernel, cached under
# $BUILD/vm/) mounts the host root, lays a tmpfs overlay over it and
# switch_roots into it; then the stage-2 script that this runner writes into a
# second, writable 9p share (the "run folder") mounts the pseudo file systems,
# cds to the repo (same absolute path as on the host), runs SCRIPT with BUILD
# passed through, writes SCRIPT's exit status into the run folder and powers
# the guest off.  SCRIPT's output is written to the run folder (streamed to
# our stdout while the guest runs) and to the guest serial console.
#
# Failure: only a status file written by stage 2 counts as a result.  A guest
# kernel panic (panic=-1 with -no-reboot ends qemu), an initramfs that cannot
# mount the root, a script killed by the guest's own soft deadline or a guest
# that the hard timeout (VM_TIMEOUT, default 600 s) kills all end without a
# status of 0, so the runner fails and prints the serial log's path and tail.
#
# Environment:
#   BUILD       build folder relative to the repo root (default build)
#   VM_TIMEOUT  hard timeout in seconds for the whole guest (default 600;
#               3600 with VM_SHELL=1)
#   VM_BOOT_TIMEOUT  seconds for the guest kernel to reach stage 2 (default
#               120; it takes 3-10 s): past it the boot counts as hung, qemu
#               is killed and the guest boots again, VM_BOOT_RETRIES times
#               (default 1), each said on stderr ("boot hung"); so does a
#               guest that ends before stage 2 ("boot failed": a kernel
#               panic in early boot, before any scenario ran)
#   VM_KERNEL   kernel to boot: a series (6.1, 6.12: the newest
#               vmlinuz-SERIES.* in /boot or in tests/vm/kernels/, where
#               `make deps` unpacks 6.12) or a path ROOT/boot/vmlinuz-VERSION
#               with its modules in ROOT/lib/modules/VERSION (else in
#               /lib/modules/VERSION); default: the newest /boot/vmlinuz-*
#               whose /lib/modules tree exists.  A module tree outside
#               /lib/modules is bind-mounted there in the guest.
#   VM_KERNEL_CACHE  where unpacked kernels live (default tests/vm/kernels)
#   VM_PVH=0    boot the bzImage, not the extracted vmlinux (PVH entry)
#   VM_ACCEL    qemu accelerator (default tcg; "kvm" where KVM works)
#   VM_MEM, VM_SMP  guest memory in MiB (2048) and CPUs (2)
#   VM_APPEND   more guest kernel parameters (e.g. nohz_full=1 for exact
#               user/system times of tasks on CPU 1)
#   VM_QEMU_ARGS  more qemu arguments, split at spaces
#   VM_KEEP=1   keep the run folder (stage-2 script, output, status)
#   VM_SHELL=1  after SCRIPT, open a root shell on the serial console instead
#               of powering off (interactive; serial console on the terminal)
#
# A SCRIPT with the line "# vm-numa: 2" gets a guest of two NUMA nodes (a
# vCPU and half the memory each) and a virtio NIC (eth0, user networking,
# nothing routed) behind a PCI expander bridge on node 1, for scenarios of
# NUMA placement.
set -u

ME=$(basename "$0")
REPO=$(cd "$(dirname "$0")/../.." && pwd -P)
KCACHE=${VM_KERNEL_CACHE:-$REPO/tests/vm/kernels}
case "$KCACHE" in /*) ;; *) KCACHE=$REPO/$KCACHE ;; esac

die() { echo "$ME: $*" >&2; exit 1; }

# --- kernel and tool discovery -------------------------------------------

# Prints the kernel image to boot: VM_KERNEL as a path, else the newest
# vmlinuz-VM_KERNEL.* (a series such as 6.12) in /boot or the kernel cache,
# else the newest /boot/vmlinuz-*; only images whose module tree is there.
find_kernel() {
	local k v
	local -a cands
	case "${VM_KERNEL:-}" in
	'') cands=(/boot/vmlinuz-*) ;;
	*/*) echo "$VM_KERNEL"; return ;;
	*) cands=(/boot/vmlinuz-"$VM_KERNEL".* "$KCACHE"/*/boot/vmlinuz-"$VM_KERNEL".*) ;;
	esac
	for k in "${cands[@]}"; do
		[ -e "$k" ] || continue
		v=${k##*/vmlinuz-}
		[ -e "$(kernel_root "$k")/lib/modules/$v/modules.dep" ] || continue
		echo "$v $k"
	done | sort -V | tail -1 | cut -d' ' -f2-
}

# The root of a kernel's module tree: ROOT for ROOT/boot/vmlinuz-V when
# ROOT/lib/modules/V exists, else "" (the host's /lib/modules).
kernel_root() {
	local root=${1%/boot/vmlinuz-*} v=${1##*/vmlinuz-}
	if [ "$root" != "$1" ] && [ -n "$root" ] && [ -d "$root/lib/modules/$v" ]; then
		echo "$root"
	fi
}

find_busybox() {
	local b
	for b in /bin/busybox /usr/bin/busybox; do
		[ -x "$b" ] || continue
		# A dynamically linked busybox cannot be /init without its libc.
		if ldd "$b" >/dev/null 2>&1; then
			continue
		fi
		echo "$b"
		return
	done
}

# Checks everything the tier needs; on failure prints the reason and
# returns 1.  Sets KERNEL, KVER, KROOT (the module tree's root, "" for the
# host's) and BUSYBOX.
probe() {
	local t
	for t in qemu-system-x86_64 modprobe cpio timeout; do
		command -v "$t" >/dev/null 2>&1 || { echo "$t not found (make deps)"; return 1; }
	done
	KERNEL=$(find_kernel)
	if [ -z "$KERNEL" ]; then
		case "${VM_KERNEL:-}" in
		'') echo "no /boot/vmlinuz-* with a matching /lib/modules tree (package linux-image-amd64)" ;;
		6.1) echo "no kernel 6.1 (VM_KERNEL=6.1): /boot/vmlinuz-6.1.* with its /lib/modules tree (package linux-image-amd64)" ;;
		*) echo "no kernel $VM_KERNEL (VM_KERNEL=$VM_KERNEL) in /boot or $KCACHE (make deps fetches 6.12)" ;;
		esac
		return 1
	fi
	[ -e "$KERNEL" ] || { echo "no kernel image $KERNEL"; return 1; }
	[ -r "$KERNEL" ] || { echo "$KERNEL is not readable (run as root)"; return 1; }
	KVER=${KERNEL##*/vmlinuz-}
	KROOT=$(kernel_root "$KERNEL")
	[ -e "$KROOT/lib/modules/$KVER/modules.dep" ] || {
		echo "no module tree $KROOT/lib/modules/$KVER for $KERNEL"
		return 1
	}
	BUSYBOX=$(find_busybox)
	[ -n "$BUSYBOX" ] || { echo "no statically linked busybox (package busybox-static)"; return 1; }
	return 0
}

# --- the initramfs ----------------------------------------------------------

# /init of the initramfs: busybox sh.  Mounts the host root read-only with a
# tmpfs overlay, mounts the run folder at /run/vm and switch_roots into
# stage 2.  Anything going wrong powers the guest off without a status.
# shellcheck disable=SC2016 # expanded in the guest, not here
INIT_SCRIPT='#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
die() {
	echo "vm-init: $*" >/dev/console
	echo o >/proc/sysrq-trigger
	sleep 5
	poweroff -f
}
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r m; do
	insmod "/lib/vm-modules/$m" || die "insmod $m failed"
done </lib/vm-modules/order
# The 9p channels appear once virtio-pci has probed; wait for both tags.
i=0
until cat /sys/bus/virtio/drivers/9pnet_virtio/*/mount_tag 2>/dev/null | grep -q vmrun; do
	i=$((i + 1))
	[ $i -le 200 ] || die "no 9p channel (virtio) after 20 s"
	usleep 100000
done
mkdir -p /lower /rw /newroot
# cache=loose: the root is read-only and the guest lives for one test.
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose host /lower ||
	die "cannot mount the host root (9p tag host)"
mount -t tmpfs -o mode=0755 tmpfs /rw || die "tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	die "cannot mount the overlay"
# A fresh /run: the host one holds stale pid files and sockets.
mount -t tmpfs -o mode=0755 tmpfs /newroot/run || die "tmpfs /run"
mkdir -p /newroot/run/vm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 vmrun /newroot/run/vm ||
	die "cannot mount the run folder (9p tag vmrun)"
[ -r /newroot/run/vm/stage2.sh ] || die "no stage2.sh in the run folder"
cat /proc/cmdline >/newroot/run/vm-cmdline
mount --move /dev /newroot/dev
mount --move /sys /newroot/sys
mount --move /proc /newroot/proc
exec switch_root /newroot /bin/bash /run/vm/stage2.sh
die "switch_root failed"
'

# Builds $BUILD/vm/initramfs-$KVER.cpio unless the cached one was made from
# the same kernel, modules, busybox and /init.
build_initramfs() {
	local dir key stamp mods m tmp n
	INITRD=$BUILD/vm/initramfs-$KVER.cpio
	stamp=$INITRD.key
	# Dependency order, each module once, for the kernel we boot (which
	# need not be the one the host runs).  --show-depends reads one module
	# name only, hence the loop.
	# virtio_rng: the guest's crng is seeded at once (6.1's nfsd otherwise
	# waits about 4 s for entropy at its start, each boot).
	mods=$(for m in virtio_pci 9pnet_virtio 9p overlay virtio_rng; do
		modprobe ${KROOT:+-d "$KROOT"} -S "$KVER" --show-depends "$m" || exit 1
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }') ||
		die "modprobe --show-depends failed for $KVER"
	key=$(
		{
			# shellcheck disable=SC2086 # one path per word
			stat -L -c '%n %s %Y' "$KERNEL" "$BUSYBOX" $mods
			printf '%s' "$INIT_SCRIPT"
		} | sha256sum | cut -d' ' -f1
	)
	if [ -s "$INITRD" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
		return 0
	fi
	echo "$ME: building initramfs for $KVER" >&2
	mkdir -p "$BUILD/vm"
	tmp=$(mktemp -d "$BUILD/vm/initramfs.XXXXXX") || die "mktemp"
	dir=$tmp/root
	mkdir -p "$dir/bin" "$dir/lib/vm-modules" "$dir/proc" "$dir/sys" "$dir/dev"
	cp "$BUSYBOX" "$dir/bin/busybox" || die "cp busybox"
	printf '%s' "$INIT_SCRIPT" >"$dir/init"
	chmod 0755 "$dir/init"
	n=0
	for m in $mods; do
		n=$((n + 1))
		# busybox insmod takes plain .ko files; 6.12 ships .ko.xz.
		case "$m" in
		*.ko.xz) xz -dc "$m" >"$dir/lib/vm-modules/$(basename "$m" .xz)" || die "xz -d $m" ;;
		*.ko.zst) zstd -qdc "$m" >"$dir/lib/vm-modules/$(basename "$m" .zst)" || die "zstd -d $m" ;;
		*) cp "$m" "$dir/lib/vm-modules/" || die "cp $m" ;;
		esac
		basename "$m" | sed 's/\.\(xz\|zst\)$//' >>"$dir/lib/vm-modules/order"
	done
	[ "$n" -gt 0 ] || die "no modules found for $KVER"
	(cd "$dir" && find . -print0 | cpio --null -o -H newc --quiet) >"$tmp/initramfs.cpio" ||
		die "cpio failed"
	mv -f "$tmp/initramfs.cpio" "$INITRD"
	echo "$key" >"$stamp"
	rm -rf "$tmp"
}

# The kernel's payload decompressed to stdout: XZ (Debian's 6.1) or zstd
# (Debian's 6.12); the first magic in the bzImage starts it.
kernel_payload() {
	local off
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$KERNEL" 2>/dev/null | head -1 | cut -d: -f1)
	if [ -n "$off" ]; then
		tail -c +"$((off + 1))" "$KERNEL" | xz -dcq --single-stream
		return
	fi
	off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$KERNEL" 2>/dev/null | head -1 | cut -d: -f1)
	[ -n "$off" ] || return 1
	# zstd fails on the bytes after its frame; elf_whole judges the output.
	tail -c +"$((off + 1))" "$KERNEL" | zstd -dcq 2>/dev/null
	return 0
}

# True when every program header of ELF FILE lies inside the file.
elf_whole() {
	local end
	end=$(readelf -lW "$1" 2>/dev/null | awk '$2 ~ /^0x/ && $5 ~ /^0x/ { print $2, $5 }' |
		while read -r o n; do echo $((o + n)); done | sort -n | tail -1)
	[ -n "$end" ] && [ "$end" -le "$(stat -c %s "$1")" ]
}

# Sets BOOT_IMAGE.  Under TCG, decompressing the bzImage and its real-mode
# start cost about 2.5 s a boot; qemu starts an uncompressed vmlinux with a
# PVH entry note directly.  So the ELF is extracted once and cached;
# anything unexpected falls back to the bzImage.  VM_PVH=0 forces the
# bzImage.
prepare_boot_image() {
	local elf=$BUILD/vm/vmlinux-$KVER key tmp
	BOOT_IMAGE=$KERNEL
	[ "${VM_PVH:-1}" = 1 ] || return 0
	key="$(stat -L -c '%n %s %Y' "$KERNEL") xz,zstd" # (the formats kernel_payload knows)
	if [ "$(cat "$elf.key" 2>/dev/null)" != "$key" ]; then
		tmp=$(mktemp "$BUILD/vm/vmlinux.XXXXXX") || die "mktemp"
		if kernel_payload >"$tmp" 2>/dev/null && elf_whole "$tmp" &&
			readelf -n "$tmp" 2>/dev/null | grep -q 'Xen.*0x00000012'; then
			chmod 0644 "$tmp"
			mv -f "$tmp" "$elf" # atomic: a guest booting right now keeps its file
		else
			echo "$ME: no PVH vmlinux in $KERNEL; booting the bzImage" >&2
			rm -f "$tmp" "$elf"
		fi
		echo "$key" >"$elf.key" # also remembers a failure
	fi
	[ -s "$elf" ] && BOOT_IMAGE=$elf
	return 0
}

# --- stage 2, runs as PID 1 in the guest ------------------------------------

# Writes the stage-2 script for SCRIPT ARGS into the run folder.
write_stage2() {
	local out=$1 deadline=$2 shell=$3
	shift 3
	{
		echo '#!/bin/bash'
		echo "# Stage 2 of the VM tier, written by $ME for one run."
		printf 'SCRIPT=%q\nREPO=%q\nBUILD=%q\nDEADLINE=%q\nVM_SHELL=%q\nKVER=%q\nKROOT=%q\n' \
			"$1" "$REPO" "$BUILD" "$deadline" "$shell" "$KVER" "$KROOT"
		printf 'GW_WORKERS=%q\n' "${GW_WORKERS:-}"	# lib.sh gw_conf: workers =
		shift
		printf 'ARGS=('
		[ "$#" = 0 ] || printf ' %q' "$@"	# (printf with no arguments would give '')
		printf ' )\n'
		cat <<'EOF'
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
# Processes started by PAM-less tools expect these.
ln -sf /proc/self/fd /dev/fd 2>/dev/null
mkdir -p /run/lock /var/tmp
hostname rpcrdma-gw-vm
# A kernel unpacked outside /lib/modules (VM_KERNEL=6.12): modprobe looks
# for its modules under /lib/modules/$(uname -r).
if [ -n "$KROOT" ]; then
	mkdir -p "/lib/modules/$KVER" &&
		mount --bind "$KROOT/lib/modules/$KVER" "/lib/modules/$KVER" ||
		echo "vm: cannot bind $KROOT/lib/modules/$KVER" >/dev/console
fi
ip link set lo up
ulimit -l unlimited
echo "vm: stage 2 up after $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r)" >/dev/console
cd "$REPO" || { echo "vm: no $REPO in the guest" >/dev/console; echo o >/proc/sysrq-trigger; }
export BUILD VM_GUEST=1 VM_DEADLINE=$DEADLINE GW_WORKERS
run() {
	if [ -x "$SCRIPT" ]; then
		timeout -k 5 "$DEADLINE" "$SCRIPT" "${ARGS[@]}"
	else
		timeout -k 5 "$DEADLINE" bash "$SCRIPT" "${ARGS[@]}"
	fi
}
run </dev/null 2>&1 | tee -a /run/vm/output >/dev/console
rc=${PIPESTATUS[0]}
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "vm: $SCRIPT exceeded the guest deadline of $DEADLINE s; processes:" >/dev/console
	ps -eo pid,ppid,stat,etime,args 2>&1 | awk '$1 != 2 && $2 != 2' >/dev/console
fi
echo "vm: $SCRIPT exited $rc after $(cut -d' ' -f1 /proc/uptime) s uptime" >/dev/console
echo "$rc" >/run/vm/status.tmp && mv /run/vm/status.tmp /run/vm/status
sync
if [ "$VM_SHELL" = 1 ]; then
	echo "vm: VM_SHELL=1: root shell; 'echo o > /proc/sysrq-trigger' powers off" >/dev/console
	setsid -c bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
fi
echo o >/proc/sysrq-trigger
sleep 10
EOF
	} >"$out/stage2.sh"
}

# --- main ---------------------------------------------------------------------

[ $# -ge 1 ] || die "usage: $ME --probe | SCRIPT [ARGS...]"

if [ "$1" = --probe ]; then
	why=$(probe) || { echo "$why"; exit 1; }
	exit 0
fi

# The script is named relative to the caller's cwd; the guest sees the same
# absolute path through the read-only root.
[ -f "$1" ] || die "no such script: $1"
SCRIPT=$(realpath "$1")
shift
cd "$REPO" || die "cd $REPO"
BUILD=${BUILD:-build}
if [ "${VM_SHELL:-0}" = 1 ]; then
	VM_TIMEOUT=${VM_TIMEOUT:-3600} # an interactive session gets an hour
else
	VM_TIMEOUT=${VM_TIMEOUT:-600}
fi
case "$VM_TIMEOUT" in '' | *[!0-9]*) die "VM_TIMEOUT must be seconds" ;; esac
VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-120}
VM_BOOT_RETRIES=${VM_BOOT_RETRIES:-1}
case "$VM_BOOT_TIMEOUT$VM_BOOT_RETRIES" in *[!0-9]*) die "VM_BOOT_TIMEOUT and VM_BOOT_RETRIES must be numbers" ;; esac

why=$(probe) || die "VM tier cannot run: $why"
probe >/dev/null # again, in this shell, to set KERNEL KVER BUSYBOX
build_initramfs
prepare_boot_image

# NAME[@KERNEL][@wWORKERS], as tests/check.sh names the run.
name=$(basename "$SCRIPT" .sh)
case "${VM_KERNEL:-}" in '' | */*) ;; *) name=$name@$VM_KERNEL ;; esac
name=$name${GW_WORKERS:+@w$GW_WORKERS}
mkdir -p "$BUILD/vm-logs" "$BUILD/vm" || die "mkdir $BUILD"
LOG=$BUILD/vm-logs/$name.serial.log
RUN=$(mktemp -d "$BUILD/vm/run-$name.XXXXXX") || die "mktemp"
RUN=$(realpath "$RUN")
: >"$RUN/output"
# The guest's own deadline leaves time to report before the hard timeout.
deadline=$((VM_TIMEOUT > 60 ? VM_TIMEOUT - 30 : VM_TIMEOUT * 3 / 4))
write_stage2 "$RUN" "$deadline" "${VM_SHELL:-0}" "$SCRIPT" "$@"

monitor=none
[ -z "${VM_MONITOR:-}" ] || monitor=unix:$VM_MONITOR,server,nowait
# shellcheck disable=SC2054 # the commas belong to qemu options
qemu=(qemu-system-x86_64 -accel "${VM_ACCEL:-tcg}" -m "${VM_MEM:-2048}" -smp "${VM_SMP:-2}"
	-nic none -no-reboot -display none -monitor "$monitor" -device virtio-rng-pci
	-kernel "$BOOT_IMAGE" -initrd "$INITRD"
	-append "console=ttyS0 panic=-1 oops=panic${VM_APPEND:+ $VM_APPEND}"
	-virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap
	-virtfs "local,path=$RUN,mount_tag=vmrun,security_model=none,multidevs=remap")
if grep -qx '# vm-numa: 2' "$SCRIPT"; then
	half=$(( ${VM_MEM:-2048} / 2 ))M
	[ "${VM_SMP:-2}" = 2 ] || die "$SCRIPT wants two NUMA nodes of one vCPU each: VM_SMP=2"
	# shellcheck disable=SC2054 # the commas belong to qemu options
	qemu+=(-object "memory-backend-ram,id=m0,size=$half" -object "memory-backend-ram,id=m1,size=$half"
		-numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1
		-device pxb,id=pxb1,bus_nr=4,numa_node=1 -netdev user,id=n1,restrict=on
		-device virtio-net-pci,bus=pxb1,addr=0x1,netdev=n1)
fi
# shellcheck disable=SC2206 # split at spaces on purpose
[ -z "${VM_QEMU_ARGS:-}" ] || qemu+=($VM_QEMU_ARGS)

# Interrupted (Ctrl-C, a killed make): stop the guest, drop the run folder.
qpid="" tpid="" wpid=""
# shellcheck disable=SC2317 # reached through the trap
on_signal() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null # timeout passes it on to qemu
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null
	wait
	[ "${VM_KEEP:-0}" = 1 ] || rm -rf "$RUN"
	echo "$ME: interrupted; serial log: $LOG" >&2
	exit 130
}
trap on_signal INT TERM HUP

# boot_once: one guest, its output streamed; sets qrc.  A watchdog kills it
# and leaves $RUN/boot-hung when stage 2 has not said it is up within
# VM_BOOT_TIMEOUT s: a TCG guest kernel has hung in its early init (once in
# a few hundred boots, before any scenario ran), and without this it holds
# the check for the whole VM_TIMEOUT.  A guest that ends before stage 2 is
# up leaves $RUN/boot-ended: its kernel panicked in early init (6.12 under
# TCG, once: an int3 Oops in sched_clock_cpu at 1.9 s), nothing ran either.
boot_once() {
	: >"$RUN/output"
	rm -f "$LOG" # the watchdog must not read an earlier run's "stage 2 up"
	timeout -k 5 "$VM_TIMEOUT" "${qemu[@]}" \
		-chardev "file,id=ser0,path=$LOG" -serial chardev:ser0 </dev/null &
	qpid=$!
	(
		end=$((SECONDS + VM_BOOT_TIMEOUT))
		while kill -0 "$qpid" 2>/dev/null; do
			grep -q 'vm: stage 2 up' "$LOG" 2>/dev/null && exit 0
			if [ "$SECONDS" -ge "$end" ]; then
				: >"$RUN/boot-hung"
				kill "$qpid" 2>/dev/null
				exit 0
			fi
			sleep 0.5
		done
	) &
	wpid=$!
	# Stream the script's output while the guest runs.
	tail -n +1 -s 0.2 -f --pid="$qpid" "$RUN/output" &
	tpid=$!
	wait "$qpid"
	qrc=$?
	wait "$tpid" "$wpid"
	wpid=""
	if [ ! -e "$RUN/boot-hung" ] && [ ! -e "$RUN/status" ] &&
		! grep -q 'vm: stage 2 up' "$LOG" 2>/dev/null; then
		: >"$RUN/boot-ended"
	fi
}

start=$(date +%s.%N)
if [ "${VM_SHELL:-0}" = 1 ]; then
	# Interactive: the serial console is this terminal, and logged.
	timeout --foreground -k 5 "$VM_TIMEOUT" "${qemu[@]}" \
		-chardev "stdio,id=ser0,signal=off,logfile=$LOG" -serial chardev:ser0
	qrc=$?
else
	tries=0 lost=""
	while :; do
		boot_once
		if [ -e "$RUN/boot-hung" ]; then
			what="boot hung: the guest kernel did not reach stage 2 within $VM_BOOT_TIMEOUT s" kept=hung
		elif [ -e "$RUN/boot-ended" ]; then
			what="boot failed: the guest ended before stage 2 (qemu exit $qrc; a kernel panic in early boot)" kept=ended
		else
			break
		fi
		rm -f "$RUN/boot-hung" "$RUN/boot-ended"
		if [ "$tries" -ge "$VM_BOOT_RETRIES" ]; then
			lost=$kept
			break
		fi
		mv -f "$LOG" "$LOG.$kept$tries"
		echo "$ME: $what (serial log $LOG.$kept$tries, last line: $(tail -n 1 "$LOG.$kept$tries" | tr -d '\r'));" \
			"booting again (retry $((tries + 1)) of $VM_BOOT_RETRIES)" >&2
		tries=$((tries + 1))
	done
fi
elapsed=$(echo "$start $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')

cp "$RUN/output" "$BUILD/vm-logs/$name.output.log" 2>/dev/null
status=$(cat "$RUN/status" 2>/dev/null)
if [ "${VM_KEEP:-0}" = 1 ]; then
	echo "$ME: run folder kept: $RUN" >&2
else
	rm -rf "$RUN"
fi

why=""
if [ "${lost:-}" = hung ]; then
	why="boot hung: no stage 2 within $VM_BOOT_TIMEOUT s, $VM_BOOT_RETRIES retries (VM_BOOT_TIMEOUT, VM_BOOT_RETRIES)"
elif [ "${lost:-}" = ended ]; then
	why="boot failed: the guest ended before stage 2 (kernel panic?), qemu exit $qrc, $VM_BOOT_RETRIES retries (VM_BOOT_RETRIES)"
elif [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	why="hard timeout: qemu killed after $VM_TIMEOUT s (VM_TIMEOUT)"
elif [ -z "$status" ]; then
	why="the guest never reported a status (kernel panic, failed boot or script killed); qemu exit $qrc"
elif ! [ "$status" -eq "$status" ] 2>/dev/null; then
	why="garbled status '$status'"
elif [ "$status" = 124 ] || [ "$status" = 137 ]; then
	why="$name ran past the guest deadline of $deadline s (VM_TIMEOUT - 30)"
elif [ "$status" -ne 0 ]; then
	why="$name exited $status in the guest"
fi
if [ -z "$why" ]; then
	echo "$ME: $name passed in ${elapsed} s" >&2
	exit 0
fi
echo "$ME: FAILED: $why (${elapsed} s)" >&2
echo "$ME: serial log: $LOG; its last 30 lines:" >&2
tail -n 30 "$LOG" | sed 's/^/  | /' >&2
if [ -n "$status" ] && [ "$status" -gt 0 ] 2>/dev/null && [ "$status" -lt 256 ]; then
	exit "$status"
fi
exit 1
