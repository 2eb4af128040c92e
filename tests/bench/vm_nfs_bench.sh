#!/bin/bash
# claim: benchmark (not a test): the kernel NFS client over six paths to one nfsd in the Soft-RoCE guest, NFSv3 and NFSv4.1: GETATTR rate, small-op mix, 4 KiB random I/O with 1 and 8 streams, sequential MB/s with 1 and 8 streams, CPU per call of the gateway (one worker and two) and of HAProxy
#
#   kernel NFS client (vers=3, 4.1) ----- tcp 2049 -----------------------------> nfsd
#                              ---------- rdma 20049 ---------------------------> nfsd
#                              -- tcp --> rpcrdma-gw 20490 -- RPC-over-RDMA ----> nfsd
#                              -- tcp --> rpcrdma-gw, 2 workers 20493 -- RDMA --> nfsd
#                              -- tcp --> haproxy (mode tcp) 20491 -- tcp ------> nfsd
#                              -- tcp --> nfsd re-export of an NFS/RDMA mount --> nfsd (v3 only)
#                 all in one qemu TCG guest: rxe0 on d0 (dummy), 10.99.0.1
#
# On the host: BUILD=build tests/bench/vm_nfs_bench.sh [--doc FILE] boots the
# VM tier's guest and runs itself inside; the guest prints one "ROW VERS PATH
# WORKLOAD VALUE NFS-CALLS PROXY-CPU-TICKS GUEST-BUSY-TICKS GUEST-ALL-TICKS
# PROXY-RUN-US PROXY-WAIT-US KSOFTIRQD-RUN-US ELAPSED-US" line per workload
# and path (see wl below), and the host turns them into tables
# (tests/bench/bench_tables.awk), a chart
# (tests/bench/bench_chart.sh: bench.png beside FILE) and FILE
# (docs/benchmarks.md from tests/bench/run.sh).  Sizes: BENCH_SEQ_MIB (128),
# BENCH_SECS (5) per timed workload, BENCH_JOBS (8) streams, BENCH_VERS.
# BENCH_PATHS="tcp rdma gw" measures only those paths (default: all six:
# tcp rdma gw gw2 proxy reexp).
# BENCH_GW_BASE=DIR/rpcrdma-gw adds a path "gwbase": the same gateway setup
# run by that (baseline) binary, so a change is compared with the build before
# it in one guest boot: `git worktree add /tmp/base HEAD~N && make -C /tmp/base`.
# A path "gw2" (BENCH_PATHS="gw gw2 ...") is the gateway with workers = 2.
# The gateway paths' (gw, gwbase, gw2, gwinline, gwconn, gwrt) BENCH_JOBS-stream rows spread their
# clients: BENCH_SPREAD (4) mounts at once, each of another loopback address
# (127.0.0.1, .2, ...; a local route per address makes it the source too),
# nconnect and fio jobs split among them, so gw2's workers (which a hash of
# the client's address picks) both carry calls; BENCH_SPREAD=1 is one mount.
# For NFSv4.1 each mount is made under a hostname of its own (unshare --uts):
# the client would otherwise find the "same" server behind every address
# (client ID trunking) and send all on the first mount's connection.
# BENCH_WORKLOADS="rr8 rw8" measures only those workloads (keys: ga mix rr
# sw sr rr8 rw8 sw8 sr8; default all); BENCH_VERS_ONLY=4.1 one NFS version.
# BENCH_AB=ROUNDS (with BENCH_GW_BASE) measures only this build against the
# baseline, both mounted at once, in ROUNDS rounds of short alternating runs
# (A B B A, then B A A B): slow drift of the shared host cancels out of each
# round's ratio; tests/bench/bench_ab.awk prints the median ratio per workload.
# BENCH_AB_VS=proxy pairs this build with HAProxy the same way (no baseline
# build needed), BENCH_AB_VS=gw2 with this build at workers = 2,
# BENCH_AB_VS=gwinline with this build at BENCH_INLINE (default 16384) inline
# size while side gw keeps the default 4096 (nfsd's max_req_size raised for
# both; each side's window binds and LOCAL_INVs per call are printed).
# BENCH_AB_VS=gwconn pairs it with this build at BENCH_CONNS (default 1;
# side gw has the default, 2) RDMA connections to nfsd (path gwconn;
# BENCH_PATHS may name it too).  BENCH_AB_VS=rdma pairs it with the kernel
# client's own RDMA mount (direct, no proxy).  BENCH_AB_VERS=4.1 runs the
# pairing over NFSv4.1 (default 3); each side then mounts under a hostname
# of its own, as the spread mounts do.
# BENCH_RT=N runs every gateway at realtime_priority = N and HAProxy at
# SCHED_RR N too (chrt), the same for both proxies.  BENCH_AB_VS=gwrt pairs
# this build with itself at realtime_priority = 1 (path gwrt; side gw keeps
# the default, normal scheduling).
# BENCH_HAPROXY_THREADS=N runs HAProxy with nbthread N (default: its own, one
# thread per CPU; the gateway runs one worker).
# BENCH_PIN=1 puts every proxy (gateways, HAProxy; all threads) on the
# guest's last CPU and the workloads on the others (taskset): the proxies
# get a CPU of their own.  With VM_APPEND=nohz_full=N (N that CPU) the
# kernel also accounts their user and system time exactly.
# BENCH_NFSD_MAX_BLOCK=BYTES sets nfsd's largest READ/WRITE (default: sized
# from the guest's memory, 256 KiB at 2 GiB: a 1 MiB block is then 4 calls).
# BENCH_INLINE=SIZE (4096-65536) raises nfsd's RPC-over-RDMA inline size
# (/proc/sys/sunrpc/svc_rdma/max_req_size) and the gateways' inline_send and
# inline_recv to SIZE: 4 KiB READ and WRITE then travel inline, no chunk.
# BENCH_MTU=BYTES sets the MTU of Soft-RoCE's dummy netdev (default 1500:
# RDMA path MTU 1024; 9000, jumbo frames as RoCE networks run: 4096).  It
# changes the RDMA leg of every RDMA path (direct and gateways), not TCP's.
set -u

BENCH_SEQ_MIB=128
BENCH_SECS=5
BENCH_JOBS=8
BENCH_VERS="3 4.1"

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
	gargs=(--paths "${BENCH_PATHS:-tcp rdma gw gw2 proxy reexp}" --spread "${BENCH_SPREAD:-4}")
	[ -z "${BENCH_WORKLOADS:-}" ] || gargs+=(--workloads "$BENCH_WORKLOADS")
	[ -z "${BENCH_VERS_ONLY:-}" ] || gargs+=(--vers "$BENCH_VERS_ONLY")
	[ -z "${BENCH_INLINE:-}" ] || gargs+=(--inline "$BENCH_INLINE")
	[ -z "${BENCH_CONNS:-}" ] || gargs+=(--conns "$BENCH_CONNS")
	[ -z "${BENCH_NFSD_MAX_BLOCK:-}" ] || gargs+=(--max-block "$BENCH_NFSD_MAX_BLOCK")
	[ -z "${BENCH_RT:-}" ] || gargs+=(--rt "$BENCH_RT")
	[ -z "${BENCH_HAPROXY_THREADS:-}" ] || gargs+=(--haproxy-threads "$BENCH_HAPROXY_THREADS")
	[ "${BENCH_PIN:-0}" != 1 ] || gargs+=(--pin)
	[ -z "${BENCH_MTU:-}" ] || gargs+=(--mtu "$BENCH_MTU")
	if [ -n "${BENCH_GW_BASE:-}" ]; then
		[ -x "$BENCH_GW_BASE" ] || { echo "vm_nfs_bench: BENCH_GW_BASE $BENCH_GW_BASE is not a program" >&2; exit 1; }
		gargs+=(--gw-base "$(realpath "$BENCH_GW_BASE")")
	fi
	if [ -n "${BENCH_AB:-}" ]; then
		vs=${BENCH_AB_VS:-gwbase}
		case $vs in
		gwbase)
			[ -n "${BENCH_GW_BASE:-}" ] || { echo "vm_nfs_bench: BENCH_AB needs BENCH_GW_BASE (or BENCH_AB_VS=proxy|gw2|gwinline|gwconn|gwrt|rdma)" >&2; exit 1; }
			abargs=(--paths gw --gw-base "$(realpath "$BENCH_GW_BASE")") ;;
		proxy | gw2 | gwrt) abargs=(--paths "gw $vs") ;;
		gwconn) abargs=(--paths "gw $vs" --conns "${BENCH_CONNS:-1}") ;;
		gwinline) abargs=(--paths "gw $vs"); BENCH_INLINE=${BENCH_INLINE:-16384} ;;
		rdma) abargs=(--paths gw) ;;
		*) echo "vm_nfs_bench: BENCH_AB_VS must be gwbase, proxy, gw2, gwinline, gwconn, gwrt or rdma, not '$vs'" >&2; exit 1 ;;
		esac
		case ${BENCH_AB_VERS:-3} in
		3 | 4.1 | 4.2) abargs+=(--vers "${BENCH_AB_VERS:-3}") ;;
		*) echo "vm_nfs_bench: BENCH_AB_VERS must be 3, 4.1 or 4.2, not '$BENCH_AB_VERS'" >&2; exit 1 ;;
		esac
		[ -z "${BENCH_INLINE:-}" ] || abargs+=(--inline "$BENCH_INLINE")
		[ -z "${BENCH_NFSD_MAX_BLOCK:-}" ] || abargs+=(--max-block "$BENCH_NFSD_MAX_BLOCK")
		[ -z "${BENCH_RT:-}" ] || abargs+=(--rt "$BENCH_RT")
		[ -z "${BENCH_HAPROXY_THREADS:-}" ] || abargs+=(--haproxy-threads "$BENCH_HAPROXY_THREADS")
		[ "${BENCH_PIN:-0}" != 1 ] || abargs+=(--pin)
		[ -z "${BENCH_MTU:-}" ] || abargs+=(--mtu "$BENCH_MTU")
		VM_TIMEOUT=${VM_TIMEOUT:-1200} tests/vm/run-vm.sh tests/bench/vm_nfs_bench.sh \
			"${abargs[@]}" --ab "$BENCH_AB" --ab-vs "$vs" | tee "$out"
		rc=${PIPESTATUS[0]}
		echo
		echo "host load average before: $load0; after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - t0)) s"
		tests/bench/bench_ab.awk -v vs="$vs" -v vers="${BENCH_AB_VERS:-3}" "$out"
		rm -f "$out"
		exit "$rc"
	fi
	VM_TIMEOUT=${VM_TIMEOUT:-1200} tests/vm/run-vm.sh tests/bench/vm_nfs_bench.sh "${gargs[@]}" | tee "$out"
	rc=${PIPESTATUS[0]}
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	secs=$(($(date +%s) - t0))
	table=$(tests/bench/bench_tables.awk "$out")
	echo
	echo "$table"
	tests/bench/bench_tables.awk -v chart=1 "$out" >"${out}.dat"
	if [ -n "$doc" ] && [ "$rc" = 0 ] && [ -n "$table" ]; then
		tests/bench/bench_chart.sh "${out}.dat" "$(dirname "$doc")/bench.png" "$(date -u '+%Y-%m-%d %H:%M UTC')" ||
			echo "vm_nfs_bench: no chart (gnuplot)" >&2
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
			echo "- machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); guest: qemu TCG, Soft-RoCE (rdma_rxe on a dummy netdev, MTU ${BENCH_MTU:-1500}), -smp ${VM_SMP:-2}, ${VM_MEM:-2048} MiB"
			echo "- guest kernel: $(sed -n 's/^guest kernel: //p' "$out" | head -1); host kernel: $(uname -r)"
			echo "- host load average (1/5/15 min) before: $load0; after: $load1 (other engineers' VMs and builds share the 2 cores: figures move by tens of percent between runs)"
			echo "- whole run: ${secs} s"
			echo
			echo "Every path mounts the same tmpfs export with the kernel client (\`vers=3,nolock\`, then"
			echo "\`vers=4.1\` on the pseudo root; the re-export only over NFSv3 and one stream); each workload runs on each"
			echo "path in turn, in one guest boot, ${BENCH_SECS} s per timed workload:"
			echo
			echo "- GETATTR/s: \`stat()\` of one file in a loop on a \`noac\` mount (one GETATTR per call), one process (perl)."
			echo "- small-op mix: ${BENCH_JOBS} processes on a \`noac\` mount, each in its own directory of 40 files: \`readdir\`, \`stat\` and \`access(R_OK)\` of every entry in a loop (READDIR(PLUS), LOOKUP, GETATTR, ACCESS); NFS calls/s from the client's \`/proc/self/mountstats\`."
			echo "- 4 KiB rand read: \`fio --rw=randread --bs=4k --direct=1 --iodepth=8 --ioengine=libaio\`, 32 MiB file, one stream."
			echo "- ×${BENCH_JOBS} streams: \`nconnect=${BENCH_JOBS}\` mount, \`fio --numjobs=${BENCH_JOBS}\`: 4 KiB random read and write (\`--iodepth=4\` each) on the 32 MiB file; 1 MiB sequential write then read (\`--direct=1\`, a $((BENCH_SEQ_MIB / BENCH_JOBS)) MiB file per job). On the gateway paths the ${BENCH_JOBS} streams come from ${BENCH_SPREAD:-4} mounts at once, one per client address (127.0.0.1 and up, \`nconnect\` and jobs split among them), so that a gateway with several workers gets clients on each (\`BENCH_SPREAD=1\`: one mount)."
			echo "- seq write/read (dd): ${BENCH_SEQ_MIB} MiB with \`dd bs=1M\`: write with \`conv=fsync\`; read after umount + drop_caches + mount (cold client cache)."
			echo "- ×RDMA, ×HAProxy: the gateway's figure over direct kernel RDMA's and over HAProxy's, same workload and NFS version."
			echo "- CPU µs per call: (utime + stime) of the proxy process (all threads, \`/proc/PID/stat\`) over the workload ÷ the NFS calls the client made in it (\`/proc/self/mountstats\`), for the gateway and HAProxy alike."
			echo "- µs on a CPU / waiting, threads, ksoftirqd: from \`/proc/PID/task/*/schedstat\` over the workload: the proxy's threads' time on a CPU and runnable on a run queue per NFS call, the mean number of them doing either (1.0: one thread never asleep), and every CPU's \`ksoftirqd\` time on a CPU per call."
			echo "- guest CPU µs per call: the whole guest's busy time (every CPU, every state but idle and iowait, \`/proc/stat\`) over the workload ÷ the NFS calls: client, nfsd, Soft-RoCE and proxy together; busy % is that time over the guest's CPUs × the elapsed time."
			echo
			echo "$table"
			echo
			echo "![gateway and HAProxy over direct RDMA, per workload](bench.png)"
			echo
			echo "Gateway configuration in the run: one worker (the 2-worker column: \`workers = 2\`), defaults of docs/configuration.md"
			echo "(RDMA connections: two with one worker, one per worker with two; credits, inline thresholds, MW registration), \`log_level = info\`."
			echo "HAProxy: its defaults, $(sed -n 's/^haproxy threads: //p' "$out" | head -1) threads (one per CPU; a connection stays on one)."
			[ -z "$notes" ] || printf '\n%s\n' "$notes"
		} >"$doc"
		cp "${out}.dat" "$(dirname "$doc")/bench.dat"
		echo "vm_nfs_bench: wrote $doc"
	fi
	rm -f "${out}.dat"
	rm -f "$out"
	exit "$rc"
fi

# --- inside the guest ---------------------------------------------------------
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/../vm/lib.sh"
# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"

PROXY_PORT=20491
# The gateway paths, each a gateway of its own on its TCP port; gw_pids
# holds the pid of each one started (gw_side).
declare -A gw_port=([gw]=20490 [gwbase]=20492 [gw2]=20493 [gwinline]=20494 [gwconn]=20495 [gwrt]=20496)
declare -A gw_pids=()
PATHS="tcp rdma gw proxy reexp"
GW_BASE=
AB_ROUNDS=
AB_VS=gwbase
INLINE=
CONNS=1
SPREAD=1
WORKLOADS=
RT=
PIN=
while [ $# -gt 0 ]; do
	case $1 in
	--paths) PATHS=$2; shift 2 ;;
	--spread) SPREAD=$2; shift 2 ;;
	--workloads) WORKLOADS=$2; shift 2 ;;
	--vers) BENCH_VERS=$2; shift 2 ;;
	--gw-base) GW_BASE=$2; shift 2 ;;
	--ab) AB_ROUNDS=$2; shift 2 ;;
	--ab-vs) AB_VS=$2; shift 2 ;;
	--inline) INLINE=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	--max-block) BED_NFSD_MAX_BLOCK=$2; shift 2 ;;
	--rt) RT=$2; shift 2 ;;
	--haproxy-threads) export HAPROXY_NBTHREAD=$2; shift 2 ;;
	--pin) PIN=1; shift ;;
	--mtu) export BED_MTU=$2; shift 2 ;;
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

if [ -n "$INLINE" ]; then	# before the first RDMA connection: nfsd reads it per connection
	modprobe -a nfsd rpcrdma
	echo "$INLINE" >/proc/sys/sunrpc/svc_rdma/max_req_size || { echo "vm_nfs_bench: max_req_size $INLINE refused" >&2; exit 2; }
fi
bed_nfsd_up
echo "nfsd max_block_size: $(cat /proc/fs/nfsd/max_block_size)"
bed_nfs_client_modules
echo 16 >/proc/fs/nfsd/threads	# the re-export's client calls need nfsd threads of their own

step "files on the server: 32 MiB for random reads, one small file for GETATTR"
head -c $((32 << 20)) /dev/urandom >"$BED_EXPORT/rand.bin"
echo x >"$BED_EXPORT/small"

# The client addresses of a spread mount set: 127.0.0.1 .. 127.0.0.SPREAD.
case $SPREAD in '' | *[!0-9]* | 0) echo "vm_nfs_bench: --spread needs a count" >&2; exit 2 ;; esac
[ $((BENCH_JOBS % SPREAD)) = 0 ] || { echo "vm_nfs_bench: --spread must divide $BENCH_JOBS" >&2; exit 2; }
spread_addrs=()
for k in $(seq 1 "$SPREAD"); do spread_addrs+=("127.0.0.$k"); done
gw_addrs=("${spread_addrs[@]}")
gw_spread_up
gw_conf() { # port control-socket [workers [inline-size [connections, or the default]]]
	cat <<CONF
[gateway]
listen = $BED_IP:$1
$(for a in "${spread_addrs[@]}"; do echo "listen = $a:$1"; done)
workers = ${3:-1}
$([ -z "$RT" ] || echo "realtime_priority = $RT")
log_level = info
control_socket = $2
admin_listen =
[backend nfsd]
address = $BED_IP
port = $BED_NFS_PORT
$([ -z "${5:-}" ] || echo "connections = $5")
$([ -z "${4:-}" ] || printf 'inline_send = %s\ninline_recv = %s\n' "$4" "$4")
[route nfs]
program = nfs
transport = rdma
[route mount]
program = mount
transport = tcp
CONF
}
# gw_side PATH WORKERS INLINE CONNECTIONS [BINARY]: the gateway of PATH
# (nfs over rdma, mount over tcp) on its port, config and log in $W/PATH.*,
# its pid in gw_pids[PATH].
gw_side() {
	local port=${gw_port[$1]}
	step "rpcrdma-gw for path $1 on tcp $BED_IP:$port (workers $2${3:+, inline $3}${4:+, connections $4}${5:+, binary $5}${RT:+, realtime_priority $RT})"
	gw_conf "$port" "$W/$1.control" "$2" "$3" "$4" >"$W/$1.conf"
	"${5:-$BUILD/rpcrdma-gw}" -c "$W/$1.conf" >"$W/$1.log" 2>&1 &
	gw_pids[$1]=$!
}
is_gw_path() { [ -n "${gw_port[$1]:-}" ]; }
gw_inline=$INLINE	# --ab-vs gwinline: only that side's gateway
[ "$AB_VS" != gwinline ] || gw_inline=
gw_side gw 1 "$gw_inline" ""
case " $PATHS " in *" gw2 "*) gw_side gw2 2 "$gw_inline" "" ;; esac
case " $PATHS " in *" gwinline "*) gw_side gwinline 1 "$INLINE" "" ;; esac
case " $PATHS " in *" gwconn "*) gw_side gwconn 1 "$gw_inline" "$CONNS" ;; esac
case " $PATHS " in *" gwrt "*) RT=${RT:-1} gw_side gwrt 1 "$gw_inline" "" ;; esac
[ -z "$GW_BASE" ] || gw_side gwbase 1 "$gw_inline" "" "$GW_BASE"	# the baseline build

if [ -z "$AB_ROUNDS" ] || [ "$AB_VS" = proxy ]; then	# --ab measures its two sides only
	step "haproxy (mode tcp) on $BED_IP:$PROXY_PORT -> $BED_IP:$BED_NFS_PORT"
	bed_haproxy "$PROXY_PORT" "$W" || exit 1
	[ -z "$RT" ] || chrt -a -r -p "$RT" "$(cat "$W/haproxy.pid")" || exit 1
	hp_threads=(/proc/"$(cat "$W/haproxy.pid")"/task/[0-9]*)
	echo "haproxy threads: ${#hp_threads[@]}"	# its default: one per CPU
fi
if [ -z "$AB_ROUNDS" ]; then
	step "re-export: $BED_IP:$BED_EXPORT mounted proto=rdma on $REEXP, exported again (fsid=1001)"
	mkdir -p "$REEXP"
	timeout 60 mount -t nfs -o "vers=3,proto=rdma,port=$BED_RDMA_PORT,nolock" "$BED_IP:$BED_EXPORT" "$REEXP"
	exportfs -o rw,fsid=1001,no_root_squash,insecure,no_subtree_check,sync "*:$REEXP"
fi

on_exit() {
	local rc=$?
	kill -TERM "${gw_pids[@]}" 2>/dev/null || true
	[ -f "$W/haproxy.pid" ] && kill "$(cat "$W/haproxy.pid")" 2>/dev/null
	(exit "$rc")
	bed_on_exit
}
trap on_exit EXIT
for s in "${!gw_pids[@]}"; do
	bed_wait 20 "path $s's RDMA connection" grep -q 'transport rdma up' "$W/$s.log"
done
if [ -n "$PIN" ]; then	# --pin: every proxy on the last CPU, this script and its workloads on the others
	pinned=("${gw_pids[@]}")
	[ ! -f "$W/haproxy.pid" ] || pinned+=("$(cat "$W/haproxy.pid")")
	bench_pin "${pinned[@]}" || exit 1
fi

# name | mount source | options ; $1 extra options (noac)
mnt_opts() {
	case $1 in
	tcp) echo "$BED_IP:$BED_EXPORT vers=3,proto=tcp,port=$BED_NFS_PORT,nolock" ;;
	rdma) echo "$BED_IP:$BED_EXPORT vers=3,proto=rdma,port=$BED_RDMA_PORT,nolock" ;;
	gw) echo "$BED_IP:$BED_EXPORT vers=3,proto=tcp,port=${gw_port[gw]},mountport=${gw_port[gw]},mountproto=tcp,nolock" ;;
	proxy) echo "$BED_IP:$BED_EXPORT vers=3,proto=tcp,port=$PROXY_PORT,nolock" ;;
	reexp) echo "$BED_IP:$REEXP vers=3,proto=tcp,port=$BED_NFS_PORT,nolock" ;;
	# The other gateway paths MOUNT from mountd directly: two gateways'
	# MOUNT routes would both want the same reserved source port to mountd.
	*) ! is_gw_path "$1" || echo "$BED_IP:$BED_EXPORT vers=3,proto=tcp,port=${gw_port[$1]},mountproto=tcp,nolock" ;;
	esac
}
desc_of() {
	case $1 in
	tcp) echo "kernel client → nfsd, TCP (direct)" ;;
	rdma) echo "kernel client → nfsd, RDMA (direct)" ;;
	gw) echo "kernel client → rpcrdma-gw (TCP) → nfsd (RDMA)" ;;
	gwbase) echo "kernel client → rpcrdma-gw baseline build (TCP) → nfsd (RDMA)" ;;
	gw2) echo "kernel client → rpcrdma-gw, workers = 2 (TCP) → nfsd (RDMA)" ;;
	gwinline) echo "kernel client → rpcrdma-gw, inline $INLINE (TCP) → nfsd (RDMA)" ;;
	gwconn) echo "kernel client → rpcrdma-gw (TCP) → nfsd ($CONNS RDMA connections)" ;;
	gwrt) echo "kernel client → rpcrdma-gw at realtime_priority = ${RT:-1} (TCP) → nfsd (RDMA)" ;;
	proxy) echo "kernel client → HAProxy mode tcp → nfsd (TCP)" ;;
	reexp) echo "kernel client → knfsd re-export (TCP) → nfsd (RDMA)" ;;
	esac
}

M=/mnt/bench
mkdir -p "$M"
VERS=3
do_mount() { # path extra-opts [hostname: the client identity, NFSv4.x]
	local src opts
	read -r src opts <<<"$(mnt_opts "$1")"
	if [ "$VERS" != 3 ]; then	# NFSv4.1: the pseudo root (fsid=0), no MOUNT protocol
		src=$BED_IP:/
		opts=$(echo "$opts" | sed -e "s/vers=3/vers=$VERS/" -e 's/,mountport=[0-9]*//; s/,mountproto=tcp//; s/,nolock//')
	fi
	# soft: a path that dies (gateway crash) fails the workload instead of
	# hanging the guest; the same options on every path.
	opts="$opts,soft,timeo=100,retrans=2${2:+,$2}"
	if [ -n "${3:-}" ]; then	# see spread_mount: no trunking onto another mount
		# shellcheck disable=SC2016 # $1.. are sh -c's arguments
		timeout 60 unshare --uts sh -c 'hostname "$1" && exec mount -t nfs -o "$2" "$3" "$4"' \
			_ "$3" "$opts" "$src" "$M"
	else
		timeout 60 mount -t nfs -o "$opts" "$src" "$M"
	fi
}
do_umount() { timeout 60 umount "$M" || umount -f -l "$M"; }

getattr_rate() {
	perl -e '
		use Time::HiRes qw(time);
		my ($f, $secs) = @ARGV; my $n = 0; my $t0 = time; my $end = $t0 + $secs;
		while (1) { for (1 .. 20) { stat($f) or die "$f: $!"; } $n += 20; last if time >= $end }
		printf "%.0f\n", $n / (time - $t0);
	' "$M/small" "$BENCH_SECS"
}

# NFS calls the client made on $M so far (all procedures, /proc/self/mountstats);
# a spread set's mounts $M, ${M}2, ... summed
nfs_ops() { bench_nfs_calls "$M"; }
# Small-op mix: BENCH_JOBS processes, each in its own directory of the tree:
# readdir (READDIR/READDIRPLUS), stat (LOOKUP/GETATTR) and access(R_OK)
# (ACCESS) of every entry, in a loop; prints NFS calls/s from mountstats.
mix_rate() {
	local o0 o1 t0 t1
	o0=$(nfs_ops); t0=$(bed_now)
	perl -e '
		use POSIX qw(access R_OK _exit); use Time::HiRes qw(time);
		my ($top, $jobs, $secs) = @ARGV; my $end = time + $secs;
		for my $j (0 .. $jobs - 1) {
			next if fork;
			my $d = "$top/d$j";
			while (time < $end) {
				opendir(my $dh, $d) or die "$d: $!";
				for my $e (readdir $dh) { next if $e =~ /^\./; stat("$d/$e") or die; access("$d/$e", R_OK) }
				closedir $dh;
			}
			_exit(0);
		}
		1 while wait != -1;
	' "$M/tree" "$BENCH_JOBS" "$BENCH_SECS"
	o1=$(nfs_ops); t1=$(bed_now)
	awk -v a="$t0" -v b="$t1" -v n=$((o1 - o0)) 'BEGIN { printf "%.0f\n", n / (b - a) }'
}

fio_terse() { # fio-args...: terse v3 line (one group)
	fio --output-format=terse --terse-version=3 --group_reporting "$@" 2>"$W/fio.err" ||
		{ sed 's/^/  fio: /' "$W/fio.err" >&2; return 1; }
}
fio_iops() {
	fio_terse --name=rr --filename="$M/rand.bin" --rw=randread --bs=4k --direct=1 --ioengine=libaio \
		--iodepth=8 --runtime="$BENCH_SECS" --time_based --size=32m | awk -F';' '{ printf "%.0f\n", $8 }'
}
# BENCH_JOBS streams of 4 KiB random read or write, iodepth 4 each
# (on a spread set: BENCH_JOBS / nmnt jobs on each of its nmnt mounts, one
# group, so one terse line sums them)
nmnt=1
mnt_of() { [ "$1" = 1 ] && echo "$M" || echo "$M$1"; }
fio_rand8() { # randread|randwrite
	local k jobs=()
	for k in $(seq 1 "$nmnt"); do
		jobs+=(--name="r8-$k" --filename="$(mnt_of "$k")/rand.bin" --numjobs=$((BENCH_JOBS / nmnt)))
	done
	fio_terse --rw="$1" --bs=4k --direct=1 --ioengine=libaio \
		--iodepth=4 --runtime="$BENCH_SECS" --time_based --size=32m "${jobs[@]}" |
		awk -F';' -v w="$1" '{ printf "%.0f\n", (w == "randread" ? $8 : $49) }'
}
# BENCH_JOBS streams of 1 MiB sequential write or read, a file each
fio_seq8() { # write|read
	local k jobs=()
	for k in $(seq 1 "$nmnt"); do
		jobs+=(--name="s8-$k" --directory="$(mnt_of "$k")" --numjobs=$((BENCH_JOBS / nmnt)))
	done
	fio_terse --rw="$1" --bs=1m --direct=1 --ioengine=psync \
		--size=$((BENCH_SEQ_MIB / BENCH_JOBS))m "${jobs[@]}" |
		awk -F';' -v w="$1" '{ printf "%.1f\n", (w == "read" ? $7 : $48) * 1024 / 1e6 }'
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

proxy_pid() { # the user-space proxy of path $1 (none for the direct paths)
	case $1 in
	proxy) cat "$W/haproxy.pid" ;;
	*) echo "${gw_pids[$1]:-}" ;;
	esac
}
cpu_ticks() { # pid: utime + stime (all threads) in clock ticks, or -
	local t
	bench_cpu_ticks "$1" t
	echo "$t"
}
# wl KEY FUNCTION [ARGS]: one workload on path $p (mounted): prints and
# emits "ROW vers path key value nfs-calls proxy-cpu-ticks guest-busy-ticks
# guest-all-ticks proxy-run-us proxy-wait-us ksoftirqd-run-us elapsed-us":
# the whole guest's CPU over the workload (client, nfsd, Soft-RoCE, proxy;
# all = CPUs × elapsed), the proxy's threads' time on a CPU and runnable on
# a run queue (- - on a direct path), and ksoftirqd's time on a CPU
KSOFTIRQD=()
mapfile -t KSOFTIRQD < <(bench_ksoftirqd_tasks)
wl() {
	local key=$1 v o0 o1 c0 c1 pid g0 g1 s0 s1 k0 k1 t0 t1 sched ksoft=-
	local -a tasks=()
	shift
	pid=$(proxy_pid "$p")
	[ -z "$pid" ] || tasks=(/proc/"$pid"/task/[0-9]*)
	o0=$(nfs_ops); c0=$(cpu_ticks "$pid"); bench_sched s0 "${tasks[@]}"; bench_sched k0 "${KSOFTIRQD[@]}"
	bench_guest_ticks g0; t0=$(bed_now)
	v=$("$@") || v=0
	[ -n "$v" ] || v=0
	t1=$(bed_now); bench_guest_ticks g1
	bench_sched k1 "${KSOFTIRQD[@]}"; bench_sched s1 "${tasks[@]}"; o1=$(nfs_ops); c1=$(cpu_ticks "$pid")
	[ "$c0" = - ] || [ "$c1" = - ] || c1=$((c1 - c0))
	[ "$c0" != - ] || c1=-
	sched="- -"
	[ "${s0% *}" = - ] || [ "${s1% *}" = - ] || sched="$((${s1% *} - ${s0% *})) $((${s1#* } - ${s0#* }))"
	[ "${k0% *}" = - ] || [ "${k1% *}" = - ] || ksoft=$((${k1% *} - ${k0% *}))
	echo "ROW $VERS $p $key $v $((o1 - o0)) $c1 $((${g1% *} - ${g0% *})) $((${g1#* } - ${g0#* }))" \
		"$sched $ksoft $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1e6 }')"
}

# --ab ROUNDS: this build (side gw, /mnt/ab-gw) against side $AB_VS (--ab-vs:
# gwbase, the baseline build, by default; proxy, HAProxy; gw2, this build at
# workers = 2), both mounted at once (vers=3, noac), 2 s per timed run, 32 MiB
# per O_DIRECT dd (no client cache on either side).  Each round runs every
# workload four times, A B B A on odd rounds and B A A B on even ones, so a
# drift of the shared host within a round hits both sides alike.
AB_MIB=32
ab_dd() { # write|read -> MB/s on $M
	local t0 t1
	t0=$(bed_now)
	if [ "$1" = write ]; then
		dd if="$W/seq.src" of="$M/ab-$p.bin" bs=1M count=$AB_MIB oflag=direct conv=fsync status=none
	else
		dd if="$M/ab-$p.bin" of=/dev/null bs=1M iflag=direct status=none
	fi
	t1=$(bed_now)
	awk -v a="$t0" -v b="$t1" -v m="$AB_MIB" 'BEGIN { printf "%.1f\n", m * 1048576 / (b - a) / 1e6 }'
}
ab_one() { # round side workload: "AB round workload side value nfs-calls proxy-cpu-ticks"
	local v o0 o1 c0 c1 pid
	p=$2; M=/mnt/ab-$2
	pid=$(proxy_pid "$p")
	o0=$(nfs_ops); c0=$(cpu_ticks "$pid")
	[ "$c0" != - ] || c0=0	# a direct path: no proxy
	case $3 in
	ga) v=$(getattr_rate) ;;
	mix) v=$(mix_rate) ;;
	rr) v=$(fio_iops) ;;
	sw) v=$(ab_dd write) ;;
	sr) v=$(ab_dd read) ;;
	esac
	o1=$(nfs_ops); c1=$(cpu_ticks "$pid")
	[ "$c1" != - ] || c1=0
	echo "AB $1 $3 $p ${v:-0} $((o1 - o0)) $((c1 - c0))"
}
ab_run() {
	local r w s order
	head -c $((AB_MIB << 20)) /dev/urandom >"$W/seq.src"
	for s in gw "$AB_VS"; do
		M=/mnt/ab-$s; mkdir -p "$M"
		do_mount "$s" noac "$([ "$VERS" = 3 ] || echo "ab-$s")" || bed_fail "mount through $s"
	done
	BENCH_SECS=2
	step "warm-up round (not reported)"
	for w in ga mix rr sw sr; do ab_one 0 gw "$w" >/dev/null; ab_one 0 "$AB_VS" "$w" >/dev/null; done
	for r in $(seq 1 "$AB_ROUNDS"); do
		order="gw $AB_VS $AB_VS gw"
		[ $((r % 2)) = 1 ] || order="$AB_VS gw gw $AB_VS"
		step "round $r of $AB_ROUNDS: $order"
		for w in ga mix rr sw sr; do
			for s in $order; do ab_one "$r" "$s" "$w"; done
		done
	done
	for s in gw "$AB_VS"; do M=/mnt/ab-$s; rm -f "$M/ab-$s.bin"; do_umount; done
	for s in gw "$AB_VS"; do	# RDMA work per call of each gateway side, all rounds
		[ -S "$W/$s.control" ] || continue
		"$BUILD/rpcrdma-gwctl" -s "$W/$s.control" metrics 2>/dev/null | awk -v s="$s" '
			/^rpcrdma_gw_calls_forwarded_total/ { c += $NF }
			/^rpcrdma_gw_rdma_registrations_total/ && match($0, /kind="[a-z_]+"/) { k[substr($0, RSTART + 6, RLENGTH - 7)] += $NF }
			END { if (c > 0) printf "AB-REG %s calls=%d mw_bind/call=%.3f local_inv/call=%.3f remote_inv/call=%.3f\n", s, c, k["mw_bind"] / c, k["local_inv"] / c, k["remote_inv"] / c }'
	done
}
# The small-op mix's tree: BENCH_JOBS directories of 40 files.
for j in $(seq 0 $((BENCH_JOBS - 1))); do
	mkdir -p "$BED_EXPORT/tree/d$j"
	for f in $(seq 1 40); do echo "$f" >"$BED_EXPORT/tree/d$j/f$f"; done
done
if [ -n "$AB_ROUNDS" ]; then
	VERS=${BENCH_VERS%% *}
	ab_run
	exit 0
fi

head -c $((BENCH_SEQ_MIB << 20)) /dev/urandom >"$W/seq.src"

want() { # KEY...: one of them is measured (BENCH_WORKLOADS, default all)
	local k
	[ -n "$WORKLOADS" ] || return 0
	for k in "$@"; do
		case " $WORKLOADS " in *" $k "*) return 0 ;; esac
	done
	return 1
}
# spread_mount PATH EXTRA: the BENCH_JOBS-stream mount set, $M and, on a
# gateway path with SPREAD > 1, ${M}2 .. ${M}SPREAD from 127.0.0.2 ..;
# nconnect split among them.  Sets nmnt.
spread_mount() {
	local k src opts nc=$((BENCH_JOBS / SPREAD)) host
	if is_gw_path "$1"; then nmnt=$SPREAD; else nmnt=1; fi
	[ "$nmnt" -gt 1 ] || { nmnt=1; do_mount "$1" "$2"; return; }
	read -r src opts <<<"$(mnt_opts "$1")"
	[ "$VERS" = 3 ] ||
		opts=$(echo "$opts" | sed -e "s/vers=3/vers=$VERS/" -e 's/,mountport=[0-9]*//; s/,mountproto=tcp//; s/,nolock//')
	[ "$nc" -le 1 ] || opts+=",nconnect=$nc"
	for k in $(seq 1 "$nmnt"); do
		host=${spread_addrs[k - 1]}
		src=$host:/
		[ "$VERS" != 3 ] || src=$host:$BED_EXPORT
		mkdir -p "$(mnt_of "$k")"
		# NFSv4.1: a client identity (hostname) per mount, or the
		# client trunks all mounts onto the first one's connection.
		# shellcheck disable=SC2016 # $1.. are sh -c's arguments
		timeout 60 unshare --uts sh -c 'hostname "$1" && exec mount -t nfs -o "$2" "$3" "$4"' \
			_ "bench-c$k" "$opts,soft,timeo=100,retrans=2${2:+,$2}" "$src" "$(mnt_of "$k")" ||
			return 1
	done
}
spread_umount() {
	local k
	for k in $(seq "$nmnt" -1 1); do M=$(mnt_of "$k") do_umount_one; done
	nmnt=1
}
do_umount_one() { timeout 60 umount "$M" || umount -f -l "$M"; }
# the proxy's CPU ticks over 2 s with its clients mounted and idle (a
# spinning loop shows here, not in the per-call figures)
idle_cpu() {
	local pid c0
	pid=$(proxy_pid "$p")
	[ -n "$pid" ] || return 0
	c0=$(cpu_ticks "$pid")
	sleep 2
	echo "  $p: idle CPU ticks in 2 s: $(($(cpu_ticks "$pid") - c0))"
}
# what each worker did so far (gw2; gw for comparison): calls, CPU, system
# calls, payload bytes copied and target bytes zeroed by worker (counters
# since start)
gw2_per_worker() {
	case $p in gw | gw2) ;; *) return 0 ;; esac
	timeout 10 "$BUILD/rpcrdma-gwctl" -s "$W/$p.control" metrics 2>/dev/null |
		awk '/^rpcrdma_gw_(calls_forwarded|cpu_seconds|syscalls|scrubbed_bytes|copied_bytes)_total[{ ]/ { printf "  %s: %s %s\n", p, $1, $2 }' p="$p" || true
}

run_path() { # path: every workload (of BENCH_WORKLOADS) on $VERS
	local nc=nconnect=$BENCH_JOBS
	if want ga mix; then
		do_mount "$p" noac
		want ga && wl ga getattr_rate
		want mix && wl mix mix_rate
		do_umount
	fi
	if want rr sw sr; then
		do_mount "$p"
		echo 3 >/proc/sys/vm/drop_caches
		want rr && wl rr fio_iops
		want sw sr && wl sw seq_mbs write	# sr reads its file
		do_umount
	fi
	echo 3 >/proc/sys/vm/drop_caches
	if want sr && do_mount "$p"; then
		wl sr seq_mbs read
		rm -f "$M/seq-$p.bin" || true
		do_umount
	fi
	# The re-export under 8 streams timed out every I/O (EIO after the soft
	# mount's retries, 7+ min per workload, 2026-11-24): not measured there.
	[ "$p" != reexp ] || return 0
	want rr8 rw8 sw8 sr8 || return 0
	if [ "$SPREAD" -gt 1 ] && is_gw_path "$p"; then
		spread_mount "$p" || { echo "  $p: spread mounts failed"; return 1; }
		echo "  $p: $BENCH_JOBS streams over $nmnt mounts from ${spread_addrs[*]}"
	else
		do_mount "$p" "$nc" || { echo "  $p: nconnect refused, $BENCH_JOBS streams on one connection"; nc=; do_mount "$p"; }
	fi
	idle_cpu
	want rr8 && wl rr8 fio_rand8 randread
	want rw8 && wl rw8 fio_rand8 randwrite
	want sw8 sr8 && wl sw8 fio_seq8 write
	gw2_per_worker
	local spread=$nmnt
	if [ "$nmnt" -gt 1 ]; then spread_umount; else do_umount; fi
	want sr8 || { rm -f "$M"/s8* 2>/dev/null; return 0; }
	echo 3 >/proc/sys/vm/drop_caches
	if [ "$spread" -gt 1 ]; then spread_mount "$p"; else do_mount "$p" "$nc"; fi
	wl sr8 fio_seq8 read
	gw2_per_worker
	rm -f "$M"/s8* || true
	if [ "$nmnt" -gt 1 ]; then spread_umount; else do_umount; fi
}

# The first path measured also warms the guest up (page cache, nfsd threads,
# TCG translation cache): an unreported warm-up pass on direct TCP comes first.
step "warm-up pass (direct TCP, not reported)"
p=tcp
do_mount tcp noac
BENCH_SECS=2 getattr_rate >/dev/null
do_umount
do_mount tcp
fio_iops >/dev/null || true
dd if="$W/seq.src" of="$M/warm.bin" bs=1M conv=fsync status=none
rm -f "$M/warm.bin"
do_umount

for VERS in $BENCH_VERS; do
	for p in $PATHS; do
		# the re-export is reached by its own path, outside the v4 pseudo root
		[ "$VERS" = 3 ] || [ "$p" != reexp ] || continue
		step "NFS $VERS, path $p: $(desc_of "$p")"
		run_path
		if [ "$p" = gw ] && ! kill -0 "${gw_pids[gw]}" 2>/dev/null; then
			echo "  rpcrdma-gw DIED during this path; its log:"
			tail -20 "$W/gw.log" | sed 's/^/    /'
		fi
	done
done
timeout 10 "$BUILD/rpcrdma-gwctl" -s "$W/gw.control" stats 2>&1 | sed -n '/^counters:/,$p' | sed 's/^/  gw /' || true

if grep -q 'error\|using the TCP fallback' "$W/gw.log"; then
	echo "gateway log (errors):"
	grep 'error\|fallback' "$W/gw.log" | head -20 | sed 's/^/  /'
fi
