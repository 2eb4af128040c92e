#!/usr/bin/awk -f
# SPDX-License-Identifier: MIT
#
# This file contains the tables of `make bench`: it reads the guest's
# "ROW VERS PATH WORKLOAD VALUE NFS-CALLS PROXY-CPU-TICKS" lines (output of
# tests/bench/vm_nfs_bench.sh) and prints, per NFS version, one Markdown table
# of every workload on every path with the gateway's ratios to direct RDMA and
# to HAProxy, the CPU microseconds per call of each proxy, and the targets of
# the benchmark.  With -v chart=1 it prints the chart's data instead: one line
# per workload, the ratio to direct RDMA of each path (tests/bench/bench_chart.sh).
BEGIN {
	nw = split("ga mix rr rr8 rw8 sw sr sw8 sr8", wk, " ")
	lab["ga"] = "GETATTR/s"; lab["mix"] = "small-op mix calls/s"; lab["rr"] = "4 KiB rand read IOPS"
	lab["rr8"] = "4 KiB rand read IOPS, 8 streams"; lab["rw8"] = "4 KiB rand write IOPS, 8 streams"
	lab["sw"] = "seq write MB/s (dd)"; lab["sr"] = "seq read MB/s (dd)"
	lab["sw8"] = "seq write MB/s, 8 streams"; lab["sr8"] = "seq read MB/s, 8 streams"
	short["ga"] = "GETATTR"; short["mix"] = "mix"; short["rr"] = "4k rd"; short["rr8"] = "4k rd x8"
	short["rw8"] = "4k wr x8"; short["sw"] = "seq wr"; short["sr"] = "seq rd"; short["sw8"] = "seq wr x8"; short["sr8"] = "seq rd x8"
	small["ga"] = small["mix"] = small["rr"] = small["rr8"] = small["rw8"] = 1
	pl["tcp"] = "direct TCP"; pl["rdma"] = "direct RDMA"; pl["gw"] = "rpcrdma-gw"; pl["gwbase"] = "rpcrdma-gw (base build)"
	pl["proxy"] = "HAProxy"; pl["reexp"] = "knfsd re-export"
	hz = 100	# USER_HZ of /proc/PID/stat
}
function rat(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
function us(v, p, w) { return (tk[v, p, w] != "" && tk[v, p, w] != "-" && op[v, p, w] > 0) ? sprintf("%.0f", tk[v, p, w] / hz * 1e6 / op[v, p, w]) : "-" }
$1 == "ROW" && NF >= 7 {
	v = $2; p = $3; w = $4
	if (!(v in seenv)) { seenv[v] = 1; vers[++nv] = v }
	if (!(p in seenp)) { seenp[p] = 1; path[++np] = p }
	val[v, p, w] = $5; op[v, p, w] = $6; tk[v, p, w] = $7
}
END {
	if (chart) {
		printf "workload"
		for (j = 1; j <= np; j++) if (path[j] != "rdma") printf "\t\"%s\"", pl[path[j]]
		print ""
		for (i = 1; i <= nv; i++) for (k = 1; k <= nw; k++) {
			v = vers[i]; w = wk[k]
			if (val[v, "rdma", w] + 0 <= 0) continue
			printf "\"v%s %s\"", v, short[w]
			for (j = 1; j <= np; j++) if (path[j] != "rdma") {
				r = rat(val[v, path[j], w], val[v, "rdma", w]); printf "\t%s", (r == "-" ? "0" : r) }
			print ""
		}
		exit
	}
	for (i = 1; i <= nv; i++) {
		v = vers[i]
		printf "%s#### NFS v%s\n\n| workload |", (i > 1 ? "\n" : ""), v
		for (j = 1; j <= np; j++) if ((v, path[j], "ga") in val) printf " %s |", pl[path[j]]
		print " gw ×RDMA | gw ×HAProxy |"
		printf "|---|"
		for (j = 1; j <= np; j++) if ((v, path[j], "ga") in val) printf "---:|"
		print "---:|---:|"
		for (k = 1; k <= nw; k++) {
			w = wk[k]
			printf "| %s |", lab[w]
			for (j = 1; j <= np; j++) if ((v, path[j], "ga") in val) printf " %s |", val[v, path[j], w]
			printf " %s | %s |\n", rat(val[v, "gw", w], val[v, "rdma", w]), rat(val[v, "gw", w], val[v, "proxy", w])
		}
	}
	print "\n#### CPU per call of each proxy\n"
	print "| NFS | workload | rpcrdma-gw µs/call | HAProxy µs/call | gw ÷ HAProxy | NFS calls (gw / HAProxy) |"
	print "|---|---|---:|---:|---:|---:|"
	for (i = 1; i <= nv; i++) for (k = 1; k <= nw; k++) {
		v = vers[i]; w = wk[k]
		a = us(v, "gw", w); b = us(v, "proxy", w)
		printf "| v%s | %s | %s | %s | %s | %s / %s |\n", v, lab[w], a, b, rat(a, b), op[v, "gw", w], op[v, "proxy", w]
	}
	print "\n#### Against the targets (issue 14; ratios in this run)\n"
	for (i = 1; i <= nv; i++) {
		v = vers[i]; s1 = s2 = s3 = ""; m1 = m2 = m3 = 1
		for (k = 1; k <= nw; k++) {
			w = wk[k]
			if (small[w]) {
				r = rat(val[v, "gw", w], val[v, "proxy", w]); s1 = s1 sprintf(" %s %s,", short[w], r)
				if (r == "-" || r + 0 < 1) m1 = 0
				a = us(v, "gw", w); b = us(v, "proxy", w); s2 = s2 sprintf(" %s %s/%s,", short[w], a, b)
				if (a == "-" || b == "-" || a + 0 > b + 0) m2 = 0
			} else {
				r = rat(val[v, "gw", w], val[v, "rdma", w]); s3 = s3 sprintf(" %s %s,", short[w], r)
				if (r == "-" || r + 0 < 1) m3 = 0
			}
		}
		sub(/,$/, "", s1); sub(/,$/, "", s2); sub(/,$/, "", s3)
		printf "- v%s, small-op and 4 KiB rows, gateway ≥ 1.0× HAProxy:%s: %s\n", v, s1, (m1 ? "met" : "NOT met")
		printf "- v%s, gateway CPU µs per small call ≤ HAProxy's (gw/HAProxy):%s: %s\n", v, s2, (m2 ? "met" : "NOT met")
		printf "- v%s, sequential ≥ 1.0× direct RDMA:%s: %s\n", v, s3, (m3 ? "met" : "NOT met")
	}
}
