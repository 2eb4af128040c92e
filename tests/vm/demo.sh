#!/bin/bash
# claim: demo: the kernel NFS client mounts over TCP through rpcrdma-gw, which speaks RPC-over-RDMA (Soft-RoCE) to nfsd; a 256 MiB file and a 400-file tree go in and out with sha256 equal on client and server
#
#   TCP NFS client --tcp--> rpcrdma-gw --RPC-over-RDMA--> kernel nfsd   (demo_gateway)
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
# GATEWAY SECTION.  "$BUILD/rpcrdma-gw" listens on TCP $BED_IP:$GW_PORT; its
# NFS route speaks RPC-over-RDMA to nfsd on rxe0 ($BED_IP:$BED_RDMA_PORT),
# MOUNT goes over TCP.  The kernel client mounts it over plain TCP: a
# $GW_MIB MiB random file goes in (NFSv3 WRITE: data in read chunks) and out
# (READ: write chunks), and a generated tree of $GW_TREE_FILES files goes in
# and out; sha256 on the client and on the server side must agree.  The
# closing summary comes from the gateway's control socket (rpcrdma-gwctl
# stats, backends) just before SIGTERM, and its counters logged at exit.
# Returns non-zero on any mismatch or failure.
# ----------------------------------------------------------------------------
GW_PORT=20490
GW_MIB=${DEMO_GW_MIB:-256}
GW_TREE_FILES=400
GW_DIR=/tmp/demo-gw
GW_PID=

gw_log_tail() { grep -v '\[debug\]' "$GW_DIR/gw.log" | tail -"${1:-30}" | sed 's/^/  gw: /'; }

# sha256 of every regular file under $1, by relative path, then one line.
tree_manifest() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum); }

# One process (perl): each exec costs ~0.3 s in the TCG guest (host root on 9p).
gen_tree() {
	perl -e '
		my ($root, $n) = @ARGV;
		open(my $r, "<", "/dev/urandom") or die;
		for my $i (1 .. $n) {
			my $d = sprintf("%s/dir%02d", $root, ($i - 1) % 20 + 1);
			$d .= "/sub" if $i % 3 == 0;
			for my $p ($root, $d =~ s{/sub$}{}r, $d) { -d $p or mkdir($p) or die "$p: $!" }
			my $len = ($i * 7919) % 98304;	# 0 B .. 96 KiB, odd sizes too (XDR pads)
			read($r, my $buf, $len) == $len or die;
			open(my $f, ">", sprintf("%s/f%03d.bin", $d, $i)) or die "$d: $!";
			print $f $buf;
			close($f) or die;
		}
		symlink("dir01/f001.bin", "$root/link") or die;
	' "$1" "$GW_TREE_FILES"
}

# elapsed seconds and MB/s for "BYTES SECONDS"
rate() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f s, %.1f MB/s", s, (s > 0 ? b / s / 1e6 : 0) }'; }
now() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

demo_gateway() {
	local gw=$BUILD/rpcrdma-gw t sum_src sum_srv sum_out m_src m_srv m_out rc=0
	banner "3. Gateway path: TCP NFS client -> rpcrdma-gw -> nfsd over RDMA"
	[ -x "$gw" ] || { bed_fail "$gw missing ('make' builds it)"; return 1; }
	mkdir -p "$GW_DIR"
	cat >"$GW_DIR/gw.conf" <<CONF
[gateway]
listen = $BED_IP:$GW_PORT
log_level = info
control_socket = $GW_DIR/control
admin_listen =
[backend nfsd]
address = $BED_IP
port = $BED_NFS_PORT
[route nfs]
program = nfs
transport = rdma
[route mount]
program = mount
transport = tcp
CONF
	sed 's/^/  /' "$GW_DIR/gw.conf"
	step "start rpcrdma-gw: tcp $BED_IP:$GW_PORT -> rdma $BED_IP:$BED_RDMA_PORT"
	"$gw" -c "$GW_DIR/gw.conf" >"$GW_DIR/gw.log" 2>&1 &
	GW_PID=$!
	bed_wait 10 "the gateway listening" sh -c "ss -ltn | grep -q '$BED_IP:$GW_PORT '" || { gw_log_tail; return 1; }
	bed_wait 20 "the gateway's RDMA path to nfsd" grep -q 'path nfs/nfsd: transport rdma up' "$GW_DIR/gw.log" ||
		{ gw_log_tail; return 1; }
	# the configuration leaves workers at its default: one per core
	grep -h 'workers = 0: ' "$GW_DIR/gw.log" | sed 's/^/  gw: /'
	gw_log_tail 8

	step "make $GW_MIB MiB of random data and a tree of $GW_TREE_FILES files on the client"
	head -c "$((GW_MIB << 20))" /dev/urandom >"$GW_DIR/big.bin"
	sum_src=$(sha256sum "$GW_DIR/big.bin" | cut -d' ' -f1)
	gen_tree "$GW_DIR/tree"
	m_src=$(tree_manifest "$GW_DIR/tree" | sha256sum | cut -d' ' -f1)
	echo "  big.bin sha256 $sum_src; tree: $(find "$GW_DIR/tree" -type f | wc -l) files," \
		"$(du -sk "$GW_DIR/tree" | cut -f1) KiB, manifest sha256 $m_src"

	mkdir -p /mnt/gw3
	step "mount -t nfs -o vers=3,proto=tcp,port=$GW_PORT $BED_IP:$BED_EXPORT /mnt/gw3 (through the gateway)"
	timeout 90 mount -t nfs -o "vers=3,proto=tcp,port=$GW_PORT,mountport=$GW_PORT,mountproto=tcp,nolock" \
		"$BED_IP:$BED_EXPORT" /mnt/gw3 || { gw_log_tail; return 1; }
	echo "  $(grep ' /mnt/gw3 ' /proc/mounts)"

	step "copy IN: $GW_MIB MiB client -> gateway -> nfsd (NFSv3 WRITE, data in RDMA read chunks)"
	t=$(now)
	cp "$GW_DIR/big.bin" /mnt/gw3/big.bin && sync
	GW_IN_RATE=$(rate $((GW_MIB << 20)) "$(since "$t")")
	echo "  $GW_IN_RATE"
	sum_srv=$(sha256sum "$BED_EXPORT/big.bin" | cut -d' ' -f1)

	step "copy OUT: $GW_MIB MiB nfsd -> gateway -> client (READ, data in RDMA write chunks), cold cache"
	timeout 60 umount /mnt/gw3
	echo 3 >/proc/sys/vm/drop_caches
	timeout 90 mount -t nfs -o "vers=3,proto=tcp,port=$GW_PORT,mountport=$GW_PORT,mountproto=tcp,nolock" \
		"$BED_IP:$BED_EXPORT" /mnt/gw3 || { gw_log_tail; return 1; }
	t=$(now)
	cp /mnt/gw3/big.bin "$GW_DIR/big.out"
	GW_OUT_RATE=$(rate $((GW_MIB << 20)) "$(since "$t")")
	echo "  $GW_OUT_RATE"
	sum_out=$(sha256sum "$GW_DIR/big.out" | cut -d' ' -f1)
	rm -f "$GW_DIR/big.out"
	timeout 60 umount /mnt/gw3
	printf '  %-28s %s\n' "client source" "$sum_src" "server side (nfsd tmpfs)" "$sum_srv" \
		"client copy back" "$sum_out"
	if [ "$sum_src" = "$sum_srv" ] && [ "$sum_src" = "$sum_out" ]; then
		GW_BIG=equal
	else
		GW_BIG=MISMATCH
		rc=1
	fi
	echo "  big file: $GW_BIG"
	rm -f "$BED_EXPORT/big.bin"

	step "mount vers=3 again; tree IN: cp -a $GW_TREE_FILES files to /mnt/gw3/tree"
	timeout 90 mount -t nfs -o "vers=3,proto=tcp,port=$GW_PORT,mountport=$GW_PORT,mountproto=tcp,nolock" \
		"$BED_IP:$BED_EXPORT" /mnt/gw3 || { gw_log_tail; return 1; }
	t=$(now)
	cp -a "$GW_DIR/tree" /mnt/gw3/tree && sync
	echo "  $(since "$t") s"
	m_srv=$(tree_manifest "$BED_EXPORT/tree" | sha256sum | cut -d' ' -f1)
	step "tree OUT: cp -a /mnt/gw3/tree back to the client, cold cache"
	timeout 60 umount /mnt/gw3
	echo 3 >/proc/sys/vm/drop_caches
	timeout 90 mount -t nfs -o "vers=3,proto=tcp,port=$GW_PORT,mountport=$GW_PORT,mountproto=tcp,nolock" \
		"$BED_IP:$BED_EXPORT" /mnt/gw3 || { gw_log_tail; return 1; }
	t=$(now)
	timeout 120 cp -a /mnt/gw3/tree "$GW_DIR/tree.out"
	echo "  $(since "$t") s"
	m_out=$(tree_manifest "$GW_DIR/tree.out" | sha256sum | cut -d' ' -f1)
	[ "$(readlink "$GW_DIR/tree.out/link")" = dir01/f001.bin ] || m_out="$m_out (symlink lost)"
	timeout 60 umount /mnt/gw3
	printf '  %-28s %s\n' "client source manifest" "$m_src" "server side manifest" "$m_srv" \
		"client copy back manifest" "$m_out"
	if [ "$m_src" = "$m_srv" ] && [ "$m_src" = "$m_out" ]; then
		GW_TREE=equal
	else
		GW_TREE=MISMATCH
		rc=1
	fi
	echo "  tree: $GW_TREE"

	banner "Summary: rpcrdma-gwctl stats / backends (control socket)"
	timeout 10 "$BUILD/rpcrdma-gwctl" -s "$GW_DIR/control" stats 2>&1 | sed '/^counters:/,$d; s/^/  /' || true
	timeout 10 "$BUILD/rpcrdma-gwctl" -s "$GW_DIR/control" backends >"$GW_DIR/backends.txt" 2>&1 || true
	sed 's/^/  /' "$GW_DIR/backends.txt"
	step "SIGTERM the gateway; it logs its counters on the way out"
	kill -TERM "$GW_PID"
	wait "$GW_PID" || { echo "  gateway exit status $?"; rc=1; }
	GW_PID=
	gw_summary
	return "$rc"
}

# Closing numbers from the counters the gateway logs at exit (gateway.h)
# and the credits rpcrdma-gwctl backends showed.
gw_summary() {
	local log=$GW_DIR/gw.log
	banner "Summary: the gateway's counters at exit"
	awk '
		/gw_stats_log: counter / { c[$(NF-2)] = $NF }
		function kib(n) { return sprintf("%12.1f KiB", n / 1024) }
		function mib(n) { return sprintf("%12.1f MiB", n / 1048576) }
		END {
			printf "  calls received %s, replies %s, forwarded over RDMA: see per procedure above\n",
				c["calls"] + 0, c["replies"] + 0
			print  "  bytes over the RDMA path:"
			print  "    call inline (RDMA_MSG)    " kib(c["bytes_inline_call"])
			print  "    call read chunks          " mib(c["bytes_read_chunk"]) "   (WRITE data, pulled by nfsd with RDMA Read)"
			print  "    call long (RDMA_NOMSG)    " kib(c["bytes_long_call"])
			print  "    reply inline              " kib(c["bytes_inline_reply"])
			print  "    reply write chunks        " mib(c["bytes_write_chunk"]) "   (READ data, RDMA Written by nfsd)"
			print  "    reply chunk               " kib(c["bytes_reply_chunk"]) "   (READDIR/READLINK-sized replies)"
		}' "$log"
	# every RDMA path's connections, per worker when there are several
	awk '$1 == "worker" { w = $1 " " $2 " " }
		$3 == "rdma" { s = $0; o = ""
			while (match(s, /[0-9]+:[a-z]+ credits [0-9]+\/[0-9]+/)) {
				o = o " " substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH) }
			print "  credits, " w $1 " (connection:state granted/in use):" o }
		END { print "  (a connection that has carried no call yet holds the 1 credit it starts with)" }' \
		"$GW_DIR/backends.txt" 2>/dev/null
	grep -E 'counter (calls_failed|backend_garbage|calls_cancelled|backend_disconnects) =' "$log" |
		sed 's/.*counter /  WARNING: /' || true
}

demo_exit() {
	local rc=$?
	if [ -n "$GW_PID" ]; then kill -TERM "$GW_PID" 2>/dev/null || true; fi
	(exit "$rc")
	bed_on_exit
}
trap demo_exit EXIT
DEMO_T0=$(now)
demo_bed
demo_kernel_rdma
demo_rc=0
demo_gateway || demo_rc=$?
banner "Demo result"
echo "  kernel NFS/RDMA reference path: sha256 equal"
echo "  through rpcrdma-gw: $GW_MIB MiB file ${GW_BIG:-not run} (in ${GW_IN_RATE:-?}; out ${GW_OUT_RATE:-?}), $GW_TREE_FILES-file tree ${GW_TREE:-not run}"
echo "  script time: $(since "$DEMO_T0") s in the guest"
if [ "$demo_rc" = 0 ]; then
	echo "DEMO PASS: TCP NFS client -> rpcrdma-gw -> RPC-over-RDMA -> nfsd, every checksum equal"
else
	echo "DEMO FAIL: see above (exit $demo_rc)"
	exit "$demo_rc"
fi
