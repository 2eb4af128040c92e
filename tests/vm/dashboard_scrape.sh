#!/bin/bash
# claim: dashboard workload: the kernel NFS client writes, reads and walks files through rpcrdma-gw (RPC-over-RDMA to nfsd) for a minute or two while /metrics is scraped twice a second; the scrapes are printed as "SCRAPE <seconds> <sample>" lines for tools/monitoring/dashboard-png.sh
#
# Not a test scenario (no t_ prefix: the VM tier does not run it); it feeds
# the picture of the dashboard in docs/operations.md.
#
#   kernel NFS client  --tcp-->  rpcrdma-gw 127.0.0.1:20490  --rdma-->  nfsd
#   /mnt/d3 (vers=3), /mnt/d41 (vers=4.1)
#                                 127.0.0.1:9466/metrics  <-- scraper (0.5 s)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

GW_PORT=20490
ADMIN=127.0.0.1:9466
out=/tmp/dash
mkdir -p "$out"
# The families the dashboard's main panels read.
KEEP='^rpcrdma_gw_(calls_total|call_duration_seconds_bucket|rdma_duration_seconds_bucket|payload_bytes_total|rdma_credits_(in_use|granted)|rdma_credit_queue|pool_buffers_free|calls_in_flight|path_up)'

get() {
	if command -v curl >/dev/null; then curl -sf "$1"; else busybox wget -q -O - "$1"; fi
}
scraper() {
	local t
	while [ ! -e "$out/stop" ]; do
		t=$(bed_now)
		get "http://$ADMIN/metrics" | grep -E "$KEEP" | sed -u "s/^/SCRAPE $t /" || true
		sleep 0.5
	done
}

bed_nfsd_up
bed_nfs_client_modules
gw_start "$GW_PORT" "$out" "gateway.admin_listen=$ADMIN" "backend.port=$BED_NFS_PORT" backend.credits=32

# The scraper's lines go straight to the output: a run cut short keeps them.
# The workload below waits for its own jobs only, never for the scraper.
scraper &
spid=$!
sleep 3

step "phase 1 (vers=3): write 10 x 4 files of 2 MiB, 4 writers at a time"
gw_mount 3 /mnt/d3 nolock
head -c $((2 << 20)) /dev/urandom >/tmp/d.bin
for r in $(seq 1 10); do
	pids=()
	for w in 1 2 3 4; do cp /tmp/d.bin "/mnt/d3/f$r-$w.bin" & pids+=($!); done
	wait "${pids[@]}"
done
sync
sleep 2

step "phase 2 (vers=3): read them back, cold cache"
echo 3 >/proc/sys/vm/drop_caches
for r in $(seq 1 10); do
	pids=()
	for w in 1 2 3 4; do cat "/mnt/d3/f$r-$w.bin" >/dev/null & pids+=($!); done
	wait "${pids[@]}"
done
sleep 2

step "phase 3 (vers=3): 100 small files created, listed, stat'ed, removed"
mkdir -p /mnt/d3/tree
for i in $(seq 1 100); do echo "$i" >"/mnt/d3/tree/s$i"; done
ls -l /mnt/d3/tree >/dev/null
stat /mnt/d3/tree/* >/dev/null
rm -f /mnt/d3/tree/s*
timeout 60 umount /mnt/d3
sleep 2

step "phase 4 (vers=4.1): mixed reads and writes"
gw_mount 4.1 /mnt/d41
for r in 1 2 3 4; do
	cp /tmp/d.bin "/mnt/d41/v4-$r.bin" &
	p1=$!
	cat "/mnt/d41/f$r-1.bin" >/dev/null &
	wait "$p1" "$!"
done
sync
timeout 60 umount /mnt/d41
sleep 3

touch "$out/stop"
wait "$spid"
gw_stop
gw_log_clean
