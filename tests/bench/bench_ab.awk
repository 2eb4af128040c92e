#!/usr/bin/awk -f
# SPDX-License-Identifier: MIT
#
# This file contains the table of the before/after benchmark (BENCH_AB=N in
# tests/bench/vm_nfs_bench.sh): it reads the guest's "AB ROUND WORKLOAD SIDE
# VALUE NFS-CALLS PROXY-CPU-TICKS" lines (side gw = this build, side -v vs =
# the other: gwbase, the baseline build, by default; proxy, HAProxy; gw2, this
# build at workers = 2; gwinline, this build with its inline sizes raised;
# gwconn, this build at BENCH_CONNS RDMA connections; gwrt, this build at
# realtime_priority = 1; rdma, the kernel
# client's own RDMA mount, no proxy: no CPU figure; -v vers, the NFS version),
# forms one ratio per round (mean of this build's two runs over the mean of
# the other side's two) and prints per workload the median ratio, its
# quartiles and range over the rounds, and each side's CPU microseconds per
# NFS call over all rounds.  Ratios above 1 mean this build is faster.
# "AB-REG" lines (RDMA registrations per call of a gateway side) go to stderr.
BEGIN {
	if (vs == "") vs = "gwbase"
	other = vs == "proxy" ? "HAProxy" : vs == "gw2" ? "workers = 2" : vs == "gwinline" ? "inline raised" : vs == "gwconn" ? "BENCH_CONNS connections" : vs == "rdma" ? "direct RDMA" : vs == "gwrt" ? "realtime_priority = 1" : "baseline"
	if (vers != "") print "NFS version " vers
	nw = split("ga mix rr sw sr", wk, " ")
	lab["ga"] = "GETATTR/s (noac, 1 process)"; lab["rr"] = "4 KiB rand read IOPS (iodepth 8)"
	lab["mix"] = "small-op mix calls/s (8 processes)"
	lab["sw"] = "seq write MB/s (O_DIRECT 1 MiB)"; lab["sr"] = "seq read MB/s (O_DIRECT 1 MiB)"
	hz = 100	# USER_HZ of /proc/PID/stat
}
$1 == "AB" && NF >= 7 && $2 > 0 {
	r = $2; w = $3; s = $4
	sum[w, r, s] += $5; cnt[w, r, s]++
	if (!((w, r) in seen)) { seen[w, r] = 1; rounds[w] = rounds[w] " " r }
	calls[w, s] += $6; ticks[w, s] += $7
}
# q-quantile (0..1) of the n sorted values in a[1..n], linear interpolation
function quant(a, n, q,   h, lo) {
	if (n == 0) return 0
	h = (n - 1) * q + 1; lo = int(h)
	return lo >= n ? a[n] : a[lo] + (h - lo) * (a[lo + 1] - a[lo])
}
function sortn(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
}
function us(w, s) { return s == "rdma" ? "-" : calls[w, s] > 0 ? sprintf("%.0f", ticks[w, s] / hz * 1e6 / calls[w, s]) : "-" }
$1 == "AB-REG" { print > "/dev/stderr" }
END {
	printf "| workload | rounds | this build (median) | %s (median) | ratio median | quartiles | range | CPU µs/call this / %s |\n", other, other
	print "|---|---:|---:|---:|---:|---:|---:|---:|"
	for (k = 1; k <= nw; k++) {
		w = wk[k]; n = split(rounds[w], rl, " "); m = 0
		delete ra; delete va; delete vb
		for (i = 1; i <= n; i++) {
			r = rl[i]
			if (cnt[w, r, "gw"] == 0 || cnt[w, r, vs] == 0) continue
			a = sum[w, r, "gw"] / cnt[w, r, "gw"]; b = sum[w, r, vs] / cnt[w, r, vs]
			if (b <= 0) continue
			m++; ra[m] = a / b; va[m] = a; vb[m] = b
		}
		if (m == 0) continue
		sortn(ra, m); sortn(va, m); sortn(vb, m)
		printf "| %s | %d | %.1f | %.1f | %.3f | %.3f – %.3f | %.3f – %.3f | %s / %s |\n", lab[w], m,
			quant(va, m, 0.5), quant(vb, m, 0.5), quant(ra, m, 0.5), quant(ra, m, 0.25),
			quant(ra, m, 0.75), ra[1], ra[m], us(w, "gw"), us(w, vs)
	}
}
