#!/bin/bash
# claim: an hour (SOAK_SECONDS) of mixed clients with churn through rpcrdma-gw (two workers, NFS over RDMA to nfsd) leaves the daemon flat: RSS, descriptors, call objects in use and XID-map entries at the end are within bounds of what they were after the warm-up, every copy checks, and nothing is left in flight once the load stops
#
#   copy loop       vers=3 (NLM on), 16 MiB files written, read back, sha256 --+
#   lock loop       fcntl lock/unlock on the vers=3 mount (NLM through the gw)  |
#   remount loop    vers=4.1 and 4.2 mounts made and unmade, 4 MiB each time    +--tcp--> rpcrdma-gw --rdma--> nfsd
#   v4.0 id churn   20 new NFSv4.0 client ids every round (callback relay)     |   127.0.0.1:20499
#   non-readers     3 connections x 100 READs never read, every round          --+
#
# Not part of make check (`make soak`).  The samples (every SOAK_SAMPLE
# seconds) go to $out/samples.tsv and are printed; the verdict compares the
# last third of the run with the first third after the warm-up.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20499
NLM_PORT=32803
SECS=${1:-3600}	# make soak: SOAK_SECONDS
SAMPLE=$(( SECS >= 600 ? 30 : 10 ))
out=/tmp/soak
mkdir -p "$out"
v3=/mnt/soak3
export GW_WORKERS=${GW_WORKERS:-2}

bed_lockd_pin "$NLM_PORT"
bed_nfsd_up
bed_nfs_client_modules
rpc.statd --no-notify
bed_wait 20 "statd registered with rpcbind" sh -c 'rpcinfo -p 127.0.0.1 | grep -q status'
for v in 1 3 4; do rpcinfo -d 100021 "$v"; done	# NLM to the gateway (t_68)
gw_start "$PORT" "$out" gateway.rpcbind_register=on nlm.transport=tcp "nlm.port=$NLM_PORT" \
	nsm.transport=tcp gateway.idle_timeout=30s gateway.write_timeout=10s
gw_mount 3 "$v3"
cp "$(dirname "$0")/rpcpeer.py" "$out/rpc.py"
head -c $((1 << 20)) /dev/urandom >"$BED_EXPORT/big.bin"	# what the non-readers READ

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$gw_pid/status"; }	# KiB
nfd() { find "/proc/$gw_pid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
msum() {	# the sum of every sample of one metric family
	curl -sf "http://${GW_ADMIN:-127.0.0.1:9466}/metrics" |
		awk -v m="$1" '$1 !~ /^#/ && ($1 == m || index($1, m "{") == 1) { s += $NF }
			END { printf "%d\n", s }'
}

# Each loop runs until $out/stop exists; a failure is written to $out/fail.
copy_loop() {
	local i=0
	while [ ! -e "$out/stop" ]; do
		head -c $((16 << 20)) /dev/urandom >"$out/c.bin"
		if ! cp "$out/c.bin" "$v3/soak-$i.bin" ||
			[ "$(sha256sum <"$out/c.bin")" != "$(sha256sum <"$v3/soak-$i.bin")" ]; then
			echo "copy $i differs or failed" >>"$out/fail"
		fi
		rm -f "$v3/soak-$((i - 2)).bin"
		i=$((i + 1))
	done
	echo "$i" >"$out/copies"
}
lock_loop() {
	python3 - "$v3/lockfile" "$out/stop" <<'PY' || echo "lock loop failed" >>"$out/fail"
import fcntl, os, sys, time
n = 0
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
while not os.path.exists(sys.argv[2]):
    fcntl.lockf(fd, fcntl.LOCK_EX, 1, n % 64)
    fcntl.lockf(fd, fcntl.LOCK_UN, 1, n % 64)
    n += 1
    time.sleep(0.02)
print(n)
PY
}
remount_loop() {
	local i=0 v m
	while [ ! -e "$out/stop" ]; do
		for v in 4.1 4.2; do
			m=/mnt/soak$v
			mkdir -p "$m"
			if timeout 90 mount -t nfs -o "vers=$v,proto=tcp,port=$PORT" 127.0.0.1:/ "$m" 2>>"$out/mount.err"; then
				head -c $((4 << 20)) /dev/urandom >"$out/r$v.bin"
				cp "$out/r$v.bin" "$m/r$v.bin" && cmp -s "$out/r$v.bin" "$m/r$v.bin" ||
					echo "remount $i vers=$v copy differs" >>"$out/fail"
				timeout 60 umount "$m" || echo "umount $m failed" >>"$out/fail"
			else
				echo "mount $i vers=$v failed" >>"$out/fail"
			fi
		done
		i=$((i + 1))
	done
	echo "$i" >"$out/remounts"
}
# 20 new v4.0 client ids per round, each with SETCLIENTID and its confirm
# (the callback relay registers each; nfsd probes each with CB_NULL).
churn_loop() {
	local r=0
	while [ ! -e "$out/stop" ]; do
		python3 - "$PORT" "$r" <<'PY' >>"$out/churn.log" 2>&1 || echo "v4.0 churn round $r failed" >>"$out/fail"
import os, struct, sys
sys.path.insert(0, "/tmp/soak")
from rpc import Peer, opaque
port, r = int(sys.argv[1]), int(sys.argv[2])
p = Peer("127.0.0.%d" % (2 + r % 5), "127.0.0.1", port)
def compound(ops):
    res = p.call(100003, 4, 1, opaque(b"") + struct.pack(">II", 0, len(ops)) + b"".join(ops))
    assert struct.unpack(">I", res[:4])[0] == 0
    return res[16:]
for i in range(20):
    ua = ("127.0.0.%d.4.1" % (2 + r % 5)).encode()
    res = compound([struct.pack(">I", 35) + os.urandom(8) + opaque(b"soak-%d-%d" % (r, i)) +
                    struct.pack(">I", 0x40000000) + opaque(b"tcp") + opaque(ua) + struct.pack(">I", 1)])
    compound([struct.pack(">I", 36) + res[4:20]])
PY
		HOSTILE_EXPORT=$BED_EXPORT HOSTILE_FILE=big.bin timeout 60 \
			python3 tests/tools/gw-hostile.py attack noread 127.0.0.1 "$PORT" 127.0.0.9 3 \
			>>"$out/noread.log" 2>&1 || true
		r=$((r + 1))
		sleep 5
	done
	echo "$r" >"$out/rounds"
}

step "soak: $SECS s of load, a sample every $SAMPLE s"
printf 't\trss_kib\tfds\tcalls_in_flight\txid_map_evictions\tclients\n' >"$out/samples.tsv"
copy_loop & p1=$!
lock_loop >"$out/locks" & p2=$!
remount_loop & p3=$!
churn_loop & p4=$!
t0=$(date +%s)
while :; do
	t=$(( $(date +%s) - t0 ))
	gw_alive
	printf '%d\t%d\t%d\t%d\t%d\t%d\n' "$t" "$(rss)" "$(nfd)" "$(msum rpcrdma_gw_calls_in_flight)" \
		"$(msum rpcrdma_gw_xid_map_evictions_total)" \
		"$(msum rpcrdma_gw_client_connections_total)" >>"$out/samples.tsv"
	[ "$t" -ge "$SECS" ] && break
	sleep "$SAMPLE"
done
touch "$out/stop"
for p in $p1 $p2 $p3 $p4; do wait "$p" || true; done
sleep 10	# idle: replies written, non-readers timed out (write_timeout)
idle_calls=$(msum rpcrdma_gw_calls_in_flight)
column -t "$out/samples.tsv" | sed 's/^/  /'
step "copies $(cat "$out/copies"), remount rounds $(cat "$out/remounts"), lock/unlock pairs $(cat "$out/locks"), v4.0 churn rounds $(cat "$out/rounds")"
[ ! -s "$out/fail" ] || { sed 's/^/  /' "$out/fail"; bed_fail "$(wc -l <"$out/fail") load failures"; }
assert_eq 0 "$idle_calls" "calls in flight once the load stopped"
# Flat: the last third's peak within 10 % (+ 8 MiB, 16 fds) of the first
# third's peak after the warm-up (the first two samples).
python3 - "$out/samples.tsv" <<'PY' || bed_fail "the daemon grew during the soak (above)"
import sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1]).read().splitlines()[1:]]
rows = rows[2:] if len(rows) > 8 else rows
third = max(1, len(rows) // 3)
first, last = rows[:third], rows[-third:]
bad = 0
for col, name, slack in ((1, "rss_kib", 8192), (2, "fds", 16)):
    a, b = max(r[col] for r in first), max(r[col] for r in last)
    ok = b <= a * 1.10 + slack
    bad += not ok
    print("  %-8s first third peak %d, last third peak %d: %s" % (name, a, b, "flat" if ok else "GREW"))
sys.exit(1 if bad else 0)
PY
gw_log_clean leak illegal-transition
gw_stop
step "PASS: soak of $SECS s"
