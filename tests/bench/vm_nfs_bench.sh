#!/bin/bash
# claim: benchmark (not a test): the kernel NFS client over five paths to one nfsd in the Soft-RoCE guest, small-op rate, 4 KiB random reads, sequential MB/s
#
#   kernel NFS client (vers=3) ---------- tcp 2049 -----------------------------> nfsd
#                              ---------- rdma 20049 ---------------------------> nfsd
#                              -- tcp --> rpcrdma-gw 20490 -- RPC-over-RDMA ----> nfsd
#                              -- tcp --> haproxy (mode tcp) 20491 -- tcp ------> nfsd
#                              -- tcp --> nfsd re-export of an NFS/RDMA mount --> nfsd
#                 all in one qemu TCG guest: rxe0 on d0 (dummy), 10.99.0.1
#
# On the host: BUILD=build tests/bench/vm_nfs_bench.sh [--doc FILE] boots the
# VM tier's guest and runs itself inside; the guest prints one "ROW" line per
# path and the host turns them into a table (and FILE, docs/benchmarks.md
# from tests/bench/run.sh).  Sizes: BENCH_SEQ_MIB (256), BENCH_SECS (6).
# BENCH_PATHS="tcp rdma gw" measures only those paths (default: all five).
# BENCH_GW_BASE=DIR/rpcrdma-gw adds a path "gwbase": the same gateway setup
# run by that (baseline) binary, so a change is compared with the build before
# it in one guest boot: `git worktree add /tmp/base HEAD~N && make -C /tmp/base`.
set -u

BENCH_SEQ_MIB=256
BENCH_SECS=6

if [ "${VM_GUEST:-}" != 1 ]; then
	cd "$(dirname "$0")/../.." || exit 1
	export BUILD=${BUILD:-build}
	doc=
	[ "${1:-}" = --doc ] && doc=${2:?--doc FILE}
	why=$(tests/vm/run-vm.sh --probe) || { echo "vm_nfs_bench: VM tier unavailable: $why" >&2; exit 1; }
	for t in fio haproxy; do
		command -v "$t" >/dev/null || { echo "vm_nfs_bench: $t missing (make deps)" >&2; exit 1; }
	done
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	t0=$(date +%s)
	out=$(mktemp)
	gargs=(--paths "${BENCH_PATHS:-tcp rdma gw proxy reexp}")
	if [ -n "${BENCH_GW_BASE:-}" ]; then
		[ -x "$BENCH_GW_BASE" ] || { echo "vm_nfs_bench: BENCH_GW_BASE $BENCH_GW_BASE is not a program" >&2; exit 1; }
		gargs+=(--gw-base "$(realpath "$BENCH_GW_BASE")")
	fi
	VM_TIMEOUT=${VM_TIMEOUT:-1200} tests/vm/run-vm.sh tests/bench/vm_nfs_bench.sh "${gargs[@]}" | tee "$out"
	rc=${PIPESTATUS[0]}
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	secs=$(($(date +%s) - t0))
	table=$(awk '
		$1 == "ROW" { n++; name[n] = $2; ga[n] = $3; io[n] = $4; wr[n] = $5; rd[n] = $6; desc[n] = $0
			sub(/^ROW [^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+ /, "", desc[n]) }
		function r(v, b) { return (b > 0 && v > 0) ? sprintf("%.2f", v / b) : "-" }
		END {
			for (i = 1; i <= n; i++) { if (name[i] == "tcp") t = i; if (name[i] == "rdma") d = i; if (name[i] == "gwbase") b = i; if (name[i] == "gw") g = i }
			print "| path | GETATTR/s | ×TCP | ×RDMA | 4 KiB rand read IOPS | ×TCP | ×RDMA | seq write MB/s | ×TCP | ×RDMA | seq read MB/s | ×TCP | ×RDMA |"
			print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
			for (i = 1; i <= n; i++)
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", desc[i],
					ga[i], r(ga[i], ga[t]), r(ga[i], ga[d]), io[i], r(io[i], io[t]), r(io[i], io[d]),
					wr[i], r(wr[i], wr[t]), r(wr[i], wr[d]), rd[i], r(rd[i], rd[t]), r(rd[i], rd[d])
			if (b && g)
				printf "\nThis build ÷ baseline build (same boot): GETATTR/s %s, 4 KiB IOPS %s, seq write %s, seq read %s\n",
					r(ga[g], ga[b]), r(io[g], io[b]), r(wr[g], wr[b]), r(rd[g], rd[b])
		}' "$out")
	echo
	echo "$table"
	if [ -n "$doc" ] && [ "$rc" = 0 ] && [ -n "$table" ]; then
		# Hand-written notes (from "### Reading these numbers" on) are kept.
		notes=$(sed -n '/^### Reading these numbers/,$p' "$doc" 2>/dev/null)
		{
			echo "# Benchmarks"
			echo
			echo "Measured by \`make bench\` (tests/bench/run.sh -> tests/bench/vm_nfs_bench.sh). A benchmark,"
			echo "not a test: nothing passes or fails here."
			echo
			echo "## NFS paths in the Soft-RoCE guest"
			echo
			echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
			echo "- machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); guest: qemu TCG, Soft-RoCE (rdma_rxe on a dummy netdev), -smp ${VM_SMP:-2}, ${VM_MEM:-2048} MiB"
			echo "- guest kernel: $(sed -n 's/^guest kernel: //p' "$out" | head -1); host kernel: $(uname -r)"
			echo "- host load average (1/5/15 min) before: $load0; after: $load1 (other engineers' VMs and builds share the 2 cores: figures move by tens of percent between runs)"
			echo "- whole run: ${secs} s"
			echo
			echo "Every path mounts the same tmpfs export with the kernel client, \`vers=3,nolock\`; each"
			echo "workload runs on each path in turn, in one guest boot:"
			echo
			echo "- GETATTR/s: \`stat()\` of one file in a loop for ${BENCH_SECS} s on a \`noac\` mount (one GETATTR per call), one process (perl)."
			echo "- 4 KiB random read IOPS: \`fio --rw=randread --bs=4k --direct=1 --iodepth=8 --ioengine=libaio\`, ${BENCH_SECS} s, 32 MiB file."
			echo "- sequential MB/s: ${BENCH_SEQ_MIB} MiB with \`dd bs=1M\`: write with \`conv=fsync\`; read after umount + drop_caches + mount (cold client cache)."
			echo "- ×TCP, ×RDMA: ratio to the direct kernel TCP and direct kernel RDMA rows."
			echo
			echo "$table"
			echo
			echo "### Against the targets"
			echo
			awk '
				$1 == "ROW" { n++; name[n] = $2; ga[n] = $3; io[n] = $4; wr[n] = $5; rd[n] = $6 }
				function f(v) { return sprintf("%.2f", v) }
				END {
					for (i = 1; i <= n; i++) { if (name[i] == "tcp") t = i; if (name[i] == "rdma") d = i; if (name[i] == "gw") g = i }
					if (!g || !t || !d || ga[t] == 0 || io[d] == 0 || wr[d] == 0 || rd[d] == 0) { print "(incomplete run)"; exit }
					printf "- GETATTR/s through rpcrdma-gw = %s × direct TCP (target ≥ 0.8): %s\n", f(ga[g] / ga[t]), (ga[g] / ga[t] >= 0.8 ? "met" : "NOT met")
					printf "- seq write MB/s = %s × direct RDMA, seq read MB/s = %s × direct RDMA (target ≥ 1.0): %s\n", f(wr[g] / wr[d]), f(rd[g] / rd[d]), (wr[g] / wr[d] >= 1 && rd[g] / rd[d] >= 1) ? "met" : "NOT met"
					printf "- 4 KiB random read IOPS = %s × direct RDMA (target ≥ 0.9): %s\n", f(io[g] / io[d]), (io[g] / io[d] >= 0.9 ? "met" : "NOT met")
				}' "$out"
			echo
			echo "Gateway configuration in the run: one RDMA connection, defaults of docs/configuration.md"
			echo "(credits, inline thresholds, MW registration), \`log_level = info\`."
			[ -z "$notes" ] || printf '\n%s\n' "$notes"
		} >"$doc"
		echo "vm_nfs_bench: wrote $doc"
	fi
	rm -f "$out"
	exit "$rc"
fi

# --- inside the guest ---------------------------------------------------------
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/../vm/lib.sh"

GW_PORT=20490
PROXY_PORT=20491
GW_BASE_PORT=20492
PATHS="tcp rdma gw proxy reexp"
GW_BASE=
while [ $# -gt 0 ]; do
	case $1 in
	--paths) PATHS=$2; shift 2 ;;
	--gw-base) GW_BASE=$2; shift 2 ;;
	*) echo "vm_nfs_bench: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ -n "$GW_BASE" ]; then	# the baseline build right after the gateway it is compared with
	PATHS=$(echo " $PATHS " | sed 's/ gw / gw gwbase /')
	case " $PATHS " in *" gwbase "*) ;; *) PATHS="$PATHS gwbase" ;; esac
fi
REEXP=/srv/reexp
W=/tmp/bench
mkdir -p "$W"
echo "guest kernel: $(uname -r)"

bed_nfsd_up
bed_nfs_client_modules
echo 16 >/proc/fs/nfsd/threads	# the re-export's client calls need nfsd threads of their own

step "files on the server: 32 MiB for random reads, one small file for GETATTR"
head -c $((32 << 20)) /dev/urandom >"$BED_EXPORT/rand.bin"
echo x >"$BED_EXPORT/small"

gw_conf() { # port control-socket
	cat <<CONF
[gateway]
listen = $BED_IP:$1
log_level = info
control_socket = $2
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
}
step "rpcrdma-gw on tcp $BED_IP:$GW_PORT (nfs over rdma, mount over tcp)"
gw_conf "$GW_PORT" "$W/gw.control" >"$W/gw.conf"
"$BUILD/rpcrdma-gw" -c "$W/gw.conf" >"$W/gw.log" 2>&1 &
gw_pid=$!
gwbase_pid=
if [ -n "$GW_BASE" ]; then
	step "baseline rpcrdma-gw ($GW_BASE) on tcp $BED_IP:$GW_BASE_PORT, same setup"
	gw_conf "$GW_BASE_PORT" "$W/gwbase.control" >"$W/gwbase.conf"
	"$GW_BASE" -c "$W/gwbase.conf" >"$W/gwbase.log" 2>&1 &
	gwbase_pid=$!
fi

step "haproxy (mode tcp) on $BED_IP:$PROXY_PORT -> $BED_IP:$BED_NFS_PORT"
cat >"$W/haproxy.cfg" <<CONF
global
	maxconn 256
defaults
	mode tcp
	timeout connect 5s
	timeout client 1h
	timeout server 1h
listen nfs
	bind $BED_IP:$PROXY_PORT
	server nfsd $BED_IP:$BED_NFS_PORT
CONF
haproxy -D -f "$W/haproxy.cfg" -p "$W/haproxy.pid"

step "re-export: $BED_IP:$BED_EXPORT mounted proto=rdma on $REEXP, exported again (fsid=1001)"
mkdir -p "$REEXP"
timeout 60 mount -t nfs -o "vers=3,proto=rdma,port=$BED_RDMA_PORT,nolock" "$BED_IP:$BED_EXPORT" "$REEXP"
exportfs -o rw,fsid=1001,no_root_squash,insecure,no_subtree_check,sync "*:$REEXP"

on_exit() {
	local rc=$?
	kill -TERM "$gw_pid" $gwbase_pid 2>/dev/null || true
	[ -f "$W/haproxy.pid" ] && kill "$(cat "$W/haproxy.pid")" 2>/dev/null
	(exit "$rc")
	bed_on_exit
}
trap on_exit EXIT
bed_wait 20 "the gateway's RDMA path" grep -q 'transport rdma up' "$W/gw.log"
[ -z "$GW_BASE" ] || bed_wait 20 "the baseline gateway's RDMA path" grep -q 'transport rdma up' "$W/gwbase.log"

# name | mount source | options ; $1 extra options (noac)
mnt_opts() {
	case $1 in
	tcp) echo "$BED_IP:$BED_EXPORT vers=3,proto=tcp,port=$BED_NFS_PORT,nolock" ;;
	rdma) echo "$BED_IP:$BED_EXPORT vers=3,proto=rdma,port=$BED_RDMA_PORT,nolock" ;;
	gw) echo "$BED_IP:$BED_EXPORT vers=3,proto=tcp,port=$GW_PORT,mountport=$GW_PORT,mountproto=tcp,nolock" ;;
	# MOUNT from mountd directly: two gateways' MOUNT routes would both
	# want the same reserved source port to mountd.
	gwbase) echo "$BED_IP:$BED_EXPORT vers=3,proto=tcp,port=$GW_BASE_PORT,mountproto=tcp,nolock" ;;
	proxy) echo "$BED_IP:$BED_EXPORT vers=3,proto=tcp,port=$PROXY_PORT,nolock" ;;
	reexp) echo "$BED_IP:$REEXP vers=3,proto=tcp,port=$BED_NFS_PORT,nolock" ;;
	esac
}
desc_of() {
	case $1 in
	tcp) echo "kernel client → nfsd, TCP (direct)" ;;
	rdma) echo "kernel client → nfsd, RDMA (direct)" ;;
	gw) echo "kernel client → rpcrdma-gw (TCP) → nfsd (RDMA)" ;;
	gwbase) echo "kernel client → rpcrdma-gw baseline build (TCP) → nfsd (RDMA)" ;;
	proxy) echo "kernel client → HAProxy mode tcp → nfsd (TCP)" ;;
	reexp) echo "kernel client → knfsd re-export (TCP) → nfsd (RDMA)" ;;
	esac
}

M=/mnt/bench
mkdir -p "$M"
do_mount() { # path extra-opts
	local src opts
	read -r src opts <<<"$(mnt_opts "$1")"
	# soft: a path that dies (gateway crash) fails the workload instead of
	# hanging the guest; the same options on every path.
	timeout 60 mount -t nfs -o "$opts,soft,timeo=100,retrans=2${2:+,$2}" "$src" "$M"
}
do_umount() { timeout 60 umount "$M"; }

getattr_rate() {
	perl -e '
		use Time::HiRes qw(time);
		my ($f, $secs) = @ARGV; my $n = 0; my $t0 = time; my $end = $t0 + $secs;
		while (1) { for (1 .. 20) { stat($f) or die "$f: $!"; } $n += 20; last if time >= $end }
		printf "%.0f\n", $n / (time - $t0);
	' "$M/small" "$BENCH_SECS"
}

fio_iops() {
	fio --name=rr --filename="$M/rand.bin" --rw=randread --bs=4k --direct=1 --ioengine=libaio \
		--iodepth=8 --runtime="$BENCH_SECS" --time_based --size=32m --output-format=terse \
		--terse-version=3 2>"$W/fio.err" | awk -F';' '{ printf "%.0f\n", $8 }'
}

seq_mbs() { # write|read
	local t0 t1 file="$M/seq-$p.bin"
	t0=$(bed_now)
	if [ "$1" = write ]; then
		dd if="$W/seq.src" of="$file" bs=1M conv=fsync status=none
	else
		dd if="$file" of=/dev/null bs=1M status=none
	fi
	t1=$(bed_now)
	awk -v a="$t0" -v b="$t1" -v m="$BENCH_SEQ_MIB" 'BEGIN { printf "%.1f\n", m * 1048576 / (b - a) / 1e6 }'
}

head -c $((BENCH_SEQ_MIB << 20)) /dev/urandom >"$W/seq.src"

# The first path measured also warms the guest up (page cache, nfsd threads,
# TCG translation cache): an unreported warm-up pass on direct TCP comes first.
for p in warmup $PATHS; do
	if [ "$p" = warmup ]; then
		step "warm-up pass (direct TCP, not reported)"
		do_mount tcp noac
		BENCH_SECS=2 getattr_rate >/dev/null
		do_umount
		do_mount tcp
		fio_iops >/dev/null || true
		dd if="$W/seq.src" of="$M/warm.bin" bs=1M conv=fsync status=none
		rm -f "$M/warm.bin"
		do_umount
		continue
	fi
	step "path $p: $(desc_of "$p")"
	do_mount "$p" noac
	ga=$(getattr_rate) || ga=0
	do_umount || umount -f -l "$M"
	do_mount "$p"
	echo 3 >/proc/sys/vm/drop_caches
	io=$(fio_iops) || io=0
	[ -n "$io" ] || { io=0; sed 's/^/  fio: /' "$W/fio.err"; }
	wr=$(seq_mbs write) || wr=0
	do_umount || umount -f -l "$M"
	echo 3 >/proc/sys/vm/drop_caches
	if do_mount "$p"; then
		rd=$(seq_mbs read) || rd=0
		rm -f "$M/seq-$p.bin" || true
		do_umount || umount -f -l "$M"
	else
		rd=0
	fi
	if [ "$p" = gw ] && ! kill -0 "$gw_pid" 2>/dev/null; then
		echo "  rpcrdma-gw DIED during this path; its log:"
		tail -20 "$W/gw.log" | sed 's/^/    /'
	fi
	echo "  GETATTR/s $ga, 4k randread IOPS $io, seq write $wr MB/s, seq read $rd MB/s"
	echo "ROW $p $ga $io $wr $rd $(desc_of "$p")"
	if [ "$p" = gw ]; then
		timeout 10 "$BUILD/rpcrdma-gwctl" -s "$W/gw.control" stats 2>&1 | sed -n '/^counters:/,$p' | sed 's/^/  gw /' || true
	fi
done

if grep -q 'error\|using the TCP fallback' "$W/gw.log"; then
	echo "gateway log (errors):"
	grep 'error\|fallback' "$W/gw.log" | head -20 | sed 's/^/  /'
fi
