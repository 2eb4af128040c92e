#!/bin/bash
# claim: benchmark (not a test): small-call latency, 4 KiB O_DIRECT random reads at iodepth 1 and 16, direct RDMA vs rpcrdma-gw per registration mode
#
# Host: tests/vm/run-vm.sh tests/bench/vm_smallcall.sh [SC_X=value...]
# Settings: SC_SECS (15) per fio run, SC_MODES ("mw persistent reg"), SC_PATHS ("rdma gw"),
# SC_FIO=0 (GETATTR only, SC_GA_SECS long), SC_GWS="binary..." (default $BUILD/rpcrdma-gw; each in turn), SC_PERF=1 (perf profile of the guest during the gateway's iodepth 16 run),
# SC_STRACE=1 (system calls of the gateway per call: perf stat tracepoint counts over its whole run).
# The gateway's latency histograms (whole call, RDMA leg) are printed after each gateway run.
set -u
for a in "$@"; do	# run-vm.sh passes arguments, not the environment
	case $a in SC_*=*) export "${a?}" ;; esac
done
. "$(dirname "$0")/../vm/lib.sh"

SC_SECS=${SC_SECS:-15}
SC_MODES=${SC_MODES:-mw persistent reg}
SC_PATHS=${SC_PATHS:-rdma gw}
GW_PORT=20490
ADMIN=127.0.0.1:9466
W=/tmp/sc
M=/mnt/sc
mkdir -p "$W" "$M"

bed_nfsd_up
bed_nfs_client_modules
head -c $((32 << 20)) /dev/urandom >"$BED_EXPORT/rand.bin"
echo x >"$BED_EXPORT/small"

gw_pid=
gw_up() { # registration mode
	cat >"$W/gw.conf" <<CONF
[gateway]
listen = $BED_IP:$GW_PORT
workers = 1
log_level = info
admin_listen = $ADMIN
[backend nfsd]
address = $BED_IP
port = $BED_NFS_PORT
registration = $1
[route nfs]
program = nfs
transport = rdma
[route mount]
program = mount
transport = tcp
CONF
	"${SC_GW:-$BUILD/rpcrdma-gw}" -c "$W/gw.conf" >"$W/gw-$1.log" 2>&1 &
	gw_pid=$!
	bed_wait 20 "gateway rdma path" grep -q 'transport rdma up' "$W/gw-$1.log"
	st_pid=
	if [ -n "${SC_STRACE:-}" ]; then
		perf stat -e raw_syscalls:sys_enter -e syscalls:sys_enter_epoll_wait \
			-e syscalls:sys_enter_epoll_ctl -e syscalls:sys_enter_clock_gettime \
			-e syscalls:sys_enter_recvfrom -e syscalls:sys_enter_read \
			-e syscalls:sys_enter_write -e syscalls:sys_enter_writev \
			-p "$gw_pid" -x ';' -o "$W/pstat.txt" >/dev/null 2>&1 &
		st_pid=$!
		sleep 1
	fi
}
gw_down() {
	if [ -n "$st_pid" ]; then
		kill -INT "$st_pid"
		wait "$st_pid" 2>/dev/null || true
		calls=$(awk '/^rpcrdma_gw_rdma_duration_seconds_count/ { print $2 }' "$W/metrics")
		awk -F';' -v c="$calls" 'c > 0 && $1 ~ /^[0-9]+$/ {
			printf "  syscalls/call %-36s %.2f\n", $3, $1 / c }' "$W/pstat.txt"
	fi
	kill -TERM "$gw_pid" 2>/dev/null; wait "$gw_pid" 2>/dev/null; gw_pid=
}
trap 'rc=$?; [ -z "$gw_pid" ] || kill "$gw_pid"; (exit $rc); bed_on_exit' EXIT

do_mount() { # path extra
	case $1 in
	rdma) opts="vers=3,proto=rdma,port=$BED_RDMA_PORT,nolock" ;;
	gw) opts="vers=3,proto=tcp,port=$GW_PORT,mountport=$GW_PORT,mountproto=tcp,nolock" ;;
	tcp) opts="vers=3,proto=tcp,port=$BED_NFS_PORT,nolock" ;;
	esac
	timeout 60 mount -t nfs -o "$opts,soft,timeo=100,retrans=2${2:+,$2}" "$BED_IP:$BED_EXPORT" "$M"
}

fio_run() { # iodepth -> "iops lat_mean_us"
	fio --name=rr --filename="$M/rand.bin" --rw=randread --bs=4k --direct=1 --ioengine=libaio \
		--iodepth="$1" --runtime="$SC_SECS" --time_based --size=32m --output-format=terse \
		--terse-version=3 2>"$W/fio.err" | awk -F';' '{ printf "%.0f %.0f\n", $8, $40 }' || { sed "s/^/  fio: /" "$W/fio.err" >&2; echo "0 0"; }
}
getattr_rate() {
	perl -e '
		use Time::HiRes qw(time);
		my ($f, $secs) = @ARGV; my $n = 0; my $t0 = time; my $end = $t0 + $secs;
		while (1) { for (1 .. 20) { stat($f) or die "$f: $!"; } $n += 20; last if time >= $end }
		printf "%.0f\n", $n / (time - $t0);
	' "$M/small" "${SC_GA_SECS:-5}"
}
# Gateway cost per call: context switches (wakeups) and CPU time, which
# the host's load does not change as much as it changes rates.
gw_cost() {
	local calls vcs ivcs ut st hz
	calls=$(awk '/^rpcrdma_gw_rdma_duration_seconds_count/ { print $2 }' "$W/metrics")
	vcs=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$gw_pid/status")
	ivcs=$(awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "/proc/$gw_pid/status")
	read -r ut st < <(awk '{ print $14, $15 }' "/proc/$gw_pid/stat")
	hz=$(getconf CLK_TCK)
	awk -v c="$calls" -v v="$vcs" -v i="$ivcs" -v u="$ut" -v s="$st" -v hz="$hz" 'BEGIN {
		if (c > 0) printf "  gw per call: %.2f voluntary + %.2f involuntary switches, %.0f us user + %.0f us sys (%d calls)\n",
			v / c, i / c, u / hz * 1e6 / c, s / hz * 1e6 / c, c }'
}
hist() { # print mean of call and rdma histograms
	curl -s "http://$ADMIN/metrics" >"$W/metrics" || return 0
	gw_cost
	awk '/^rpcrdma_gw_(call|rdma)_duration_seconds_(sum|count)/ { v[$1] = $2 }
		END { for (k in v) if (k ~ /_count$/) { b = k; sub(/_count$/, "", b);
			if (v[k] > 0) printf "  %s: n=%d mean=%.0f us\n", b, v[k], v[b "_sum"] / v[k] * 1e6 } }' "$W/metrics"
	grep -E '^rpcrdma_gw_(call|rdma)_duration_seconds_bucket' "$W/metrics" | sed 's/^/    /' || true
	grep -E 'client_paused|credit|retr|registrations' "$W/metrics" | grep -v '^#' | sed 's/^/    /' || true
	# rxe's own counters (cumulative over the boot): retransmissions, RNR
	rdma statistic show link "$BED_RDMA_DEV/1" 2>/dev/null | tr ' ' '\n' | paste - - |
		grep -E 'retry|rnr|seq|dup|ack_deferred|sent_pkts|rcvd_pkts' | tr '\n' ' ' | sed 's/^/  rxe: /' || true
	echo
}

prof_start() {
	pp= sp=
	[ -n "${SC_PERF:-}" ] || return 0
	perf record -a -g -e cpu-clock -o "$W/perf.data" -- sleep $((SC_SECS - 3)) >"$W/perf.out" 2>&1 &
	pp=$!
	if [ -n "${SC_STRACE:-}" ] && [ -n "$gw_pid" ]; then
		timeout -s INT $((SC_SECS - 3)) strace -c -f -p "$gw_pid" -o "$W/strace.txt" &
		sp=$!
	fi
}
prof_end() {
	[ -n "$pp" ] || return 0
	wait "$pp" || true
	[ -z "$sp" ] || { wait "$sp" || true; sed -n 1,30p "$W/strace.txt"; }
	perf report -i "$W/perf.data" --stdio --no-children -g none --sort comm >"$W/rep1" 2>&1 || true
	grep -v '^#' "$W/rep1" | grep -v '^$' | sed -n 1,15p
	perf report -i "$W/perf.data" --stdio --no-children -g none --sort comm,dso,sym >"$W/rep2" 2>&1 || true
	grep -v '^#' "$W/rep2" | grep -v '^$' | grep -v swapper | sed -n 1,60p
}

run_path() { # label path
	do_mount "$2" noac
	ga=$(getattr_rate)
	umount "$M"
	if [ "${SC_FIO:-1}" = 0 ]; then
		echo "RESULT $1 getattr/s=$ga"
		return 0
	fi
	do_mount "$2"
	r1=$(fio_run 1)
	[ "$2" = gw ] || pp=
	[ "$2" != gw ] || prof_start
	r16=$(fio_run 16)
	umount "$M"
	echo "RESULT $1 getattr/s=$ga qd1(iops,lat_us)=$r1 qd16(iops,lat_us)=$r16"
	[ "$2" != gw ] || prof_end
}

# warm-up (TCG translation caches, nfsd threads)
do_mount tcp; SC_SECS=3 fio_run 4 >/dev/null; umount "$M"

for p in $SC_PATHS; do
	if [ "$p" = rdma ] || [ "$p" = tcp ]; then
		step "direct $p"
		run_path "$p" "$p"
		continue
	fi
	for bin in ${SC_GWS:-$BUILD/rpcrdma-gw}; do
		for mode in $SC_MODES; do
			step "gateway $bin registration=$mode"
			SC_GW=$bin gw_up "$mode"
			run_path "gw-$mode:$bin" gw
			hist
			gw_down
		done
	done
done
