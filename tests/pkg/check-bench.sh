#!/bin/bash
# SPDX-License-Identifier: MIT
#
# This file contains the check of `make bench`'s arithmetic
# (tests/bench/bench_tables.awk) on rows whose answers are worked out here by
# hand, so a table in docs/benchmarks.md can be trusted without a guest:
#   - the ratios to direct RDMA and to HAProxy, and CPU µs per call;
#   - the whole guest's CPU per call and busy share of each path;
#   - the ceiling: what a gateway costing no CPU could reach over HAProxy
#     (small rows) or direct RDMA (sequential rows), and the targets line
#     that names every row whose ceiling is below 1.0; the same bound as a
#     CPU budget per call, and the lines naming the rows whose gateway is
#     within it and the small rows whose budget is below HAProxy's own CPU;
#   - the proxies' threads on a CPU and waiting per call, the mean number of
#     them busy or runnable, and ksoftirqd's time per call;
#   - with a 2-worker gateway (path gw2): its column, CPU per call, threads,
#     and the workers target (≥ 1.6× one worker, or CPU per call flat);
#   - rows of the older seven-field form (no guest ticks) still give the
#     first tables and neither the ceiling nor the threads.
#
#   tests/pkg/check-bench.sh   exit 0 all good, 1 a check failed
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/pkg/lib.sh
pkg_tmp
A=tests/bench/bench_tables.awk

# VERS PATH WORKLOAD VALUE NFS-CALLS PROXY-TICKS GUEST-BUSY GUEST-ALL (ticks of
# 10 ms) [PROXY-RUN PROXY-WAIT KSOFTIRQD-RUN ELAPSED (µs)]
cat >"$tmp/rows" <<'EOF'
ROW 3 rdma rr8 3000 15000 - 900 1000 - - 1300000 5000000
ROW 3 gw rr8 2000 10000 150 980 1000 1500000 3000000 1000000 5000000
ROW 3 proxy rr8 2500 12500 170 990 1000 1250000 8750000 50000 5000000
ROW 3 rdma ga 577 2885 - 500 1000
ROW 3 gw ga 200 1000 70 600 1000
ROW 3 proxy ga 227 1135 75 620 1000
ROW 3 rdma sw8 80 640 - 990 1000
ROW 3 gw sw8 75 600 100 1000 1000
ROW 3 proxy sw8 110 880 300 950 1000
EOF
awk -f "$A" "$tmp/rows" >"$tmp/out" 2>&1 || bad "bench_tables.awk failed: $(head -3 "$tmp/out")"

has() { # WHAT LINE: the output holds LINE exactly
	if grep -qxF -- "$2" "$tmp/out"; then ok "$1"
	else bad "$1: no line '$2' in:"; sed 's/^/    /' "$tmp/out"; fi
}
# 4 KiB x8: gw ÷ RDMA 2000/3000, ÷ HAProxy 2000/2500; gateway 150 ticks over
# 10000 calls = 150 µs, HAProxy 170/12500 = 136 µs; guest 980/10000 = 980
# µs, 990/12500 = 792, RDMA 900/15000 = 600; rest 830 µs; ceiling over
# HAProxy (10000/830) / (12500/1000) = 0.96, over RDMA (10000/830) /
# (15000/1000) = 0.80.  Budget: the guest's capacity per HAProxy call,
# 1000/12500 = 800 µs, less the rest: -30 µs, below HAProxy's own 136.
has "ratios of the 4 KiB row" "| 4 KiB rand read IOPS, 8 streams | 3000 | 2000 | 2500 | 0.67 | 0.80 |"
has "CPU per call of each proxy" "| v3 | 4 KiB rand read IOPS, 8 streams | 150 | 136 | 1.10 | 10000 / 12500 |"
has "guest CPU, rest and ceilings of the 4 KiB row" \
	"| v3 | 4 KiB rand read IOPS, 8 streams | 90 / 98 / 99 | 600 / 980 / 792 | 830 | 0.96 | 0.80 | -30 (150 / 136) |"
# GETATTR: rest 530 ticks over 1000 calls; (1000/530) / (1135/1000) = 1.66;
# budget 1000/1135 = 8811 µs less 5300 = 3511, the gateway's 700 within it.
has "a ceiling above 1.0" "| v3 | GETATTR/s | 50 / 60 / 62 | 1733 / 6000 / 5463 | 5300 | 1.66 | 0.65 | 3511 (700 / 661) |"
# seq x8: rest 900; (600/900) / (640/1000) = 1.04 over RDMA, / (880/1000) = 0.76 over HAProxy;
# budget against RDMA 1000/640 = 15625 µs less 15000 = 625, the gateway's 1667 over it.
has "a sequential row's ceiling" "| v3 | seq write MB/s, 8 streams | 99 / 100 / 95 | 15469 / 16667 / 10795 | 15000 | 0.76 | 1.04 | 625 (1667 / 3409) |"
has "the targets line names the rows below 1.0, each against its own target" \
	"- v3, rows whose ceiling (a gateway costing nothing) is below its target on this bed: 4k rd x8 0.96"
has "the budget line names the rows whose gateway is within its budget" \
	"- v3, rows whose gateway CPU is within its budget (gw/budget µs: what holds them back is waiting, not the gateway's CPU): GETATTR 700/3511"
has "the budget line names the small rows whose budget is below HAProxy's own CPU" \
	"- v3, small rows whose budget is below HAProxy's own CPU per call (budget/HAProxy µs: only a gateway cheaper than HAProxy could meet them here): 4k rd x8 -30/136"
# Threads: gw 1.5 s on a CPU and 3 s waiting over 10000 calls = 150 / 300 µs,
# (1.5 + 3) / 5 s = 0.90 threads; HAProxy 100 / 700 µs, 2.00 threads;
# ksoftirqd 1.3 s / 15000 = 87, 1 s / 10000 = 100, 0.05 s / 12500 = 4 µs.
has "threads and ksoftirqd per call" \
	"| v3 | 4 KiB rand read IOPS, 8 streams | 150 / 300 | 100 / 700 | 0.90 / 2.00 | 87 / 100 / 4 |"
has "rows without the scheduler fields give dashes there" "| v3 | GETATTR/s | - / - | - / - | - / - | - / - / - |"
has "an unmet target stays unmet" \
	"- v3, small-op and 4 KiB rows, gateway ≥ 1.0× HAProxy: GETATTR 0.88, mix -, 4k rd -, 4k rd x8 0.80, 4k wr x8 -: NOT met"

# The older form: seven fields, no guest ticks: no ceiling table, no ceiling line.
cut -d' ' -f1-7 "$tmp/rows" | awk -f "$A" >"$tmp/out" 2>&1 || bad "bench_tables.awk failed on seven fields"
if grep -q "ceiling\|threads" "$tmp/out"; then bad "seven-field rows gave a ceiling or threads:"; grep "ceiling\|threads" "$tmp/out" | sed 's/^/    /'
else ok "seven-field rows: no ceiling, no threads"; fi
has "seven-field rows keep their ratios" "| 4 KiB rand read IOPS, 8 streams | 3000 | 2000 | 2500 | 0.67 | 0.80 |"

# A 2-worker gateway: rr8 2200 / 2000 = 1.10 with CPU per call 198 / 11000 =
# 180 µs against 150 (1.20): neither; rw8 3300 / 2000 = 1.65: scaled.
cat >"$tmp/rows2" <<'EOF'
ROW 3 gw ga 200 1000 70 600 1000
ROW 3 gw2 ga 210 1050 75 600 1000
ROW 3 proxy ga 227 1135 75 620 1000
ROW 3 gw rr8 2000 10000 150 980 1000 1500000 3000000 1000000 5000000
ROW 3 gw2 rr8 2200 11000 198 990 1000 2000000 4500000 1000000 5000000
ROW 3 proxy rr8 2500 12500 170 990 1000 1250000 8750000 50000 5000000
ROW 3 gw rw8 2000 10000 150 980 1000
ROW 3 gw2 rw8 3300 16500 150 990 1000
EOF
awk -f "$A" "$tmp/rows2" >"$tmp/out" 2>&1 || bad "bench_tables.awk failed on gw2 rows"
has "the 2-worker column of the rates" "| GETATTR/s | 200 | 210 | 227 | - | 0.88 |"
has "the 2-worker column of CPU per call" "| v3 | 4 KiB rand read IOPS, 8 streams | 150 | 180 | 136 | 1.10 | 10000 / 12500 |"
has "the 2-worker threads: (2 + 4.5) / 5 s" \
	"| v3 | 4 KiB rand read IOPS, 8 streams | 150 / 300 | 100 / 700 | 0.90 / 1.30 / 2.00 | - / 100 / 4 |"
has "the workers target: one row neither scales nor stays flat" \
	"- v3, 2 workers ÷ 1 on the 8-stream 4 KiB rows ≥ 1.6, or CPU per call flat (≤ 1.1): 4k rd x8 1.10 (CPU per call 1.20), 4k wr x8 1.65 (CPU per call 0.61): NOT met"
sed -i 's/^ROW 3 gw2 rr8 2200 11000 198/ROW 3 gw2 rr8 2200 11000 165/' "$tmp/rows2"
awk -f "$A" "$tmp/rows2" >"$tmp/out" 2>&1 || bad "bench_tables.awk failed on gw2 rows"
has "the workers target met by CPU per call flat on one row and scaling on the other" \
	"- v3, 2 workers ÷ 1 on the 8-stream 4 KiB rows ≥ 1.6, or CPU per call flat (≤ 1.1): 4k rd x8 1.10 (CPU per call 1.00), 4k wr x8 1.65 (CPU per call 0.61): met"

pkg_end
