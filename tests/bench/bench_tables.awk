#!/usr/bin/awk -f
# SPDX-License-Identifier: MIT
#
# This file contains the tables of `make bench`: it reads the guest's
# "ROW VERS PATH WORKLOAD VALUE NFS-CALLS PROXY-CPU-TICKS [GUEST-BUSY-TICKS
# GUEST-ALL-TICKS [PROXY-RUN-US PROXY-WAIT-US KSOFTIRQD-RUN-US ELAPSED-US]]"
# lines (output of tests/bench/vm_nfs_bench.sh) and prints, per NFS version,
# one Markdown table of every workload on every path with the gateway's
# ratios to direct RDMA and to HAProxy, the CPU microseconds per call of each
# proxy, the whole guest's CPU per call and the ceiling it sets, the proxies'
# threads on a CPU and on a run queue, and the targets of the benchmark.
# With -v chart=1 it prints the chart's data instead: one line per workload,
# the ratio to direct RDMA of each path (tests/bench/bench_chart.sh).
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
	pl["gw2"] = "rpcrdma-gw, 2 workers"
	pl["proxy"] = "HAProxy"; pl["reexp"] = "knfsd re-export"
	hz = 100	# USER_HZ of /proc/PID/stat
}
function rat(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
# The whole guest's CPU per call: busy ticks over NFS calls, in µs.
function gus(v, p, w) { return (gb[v, p, w] + 0 > 0 && op[v, p, w] > 0) ? sprintf("%.0f", gb[v, p, w] / hz * 1e6 / op[v, p, w]) : "-" }
function busy(v, p, w) { return (ga[v, p, w] + 0 > 0) ? sprintf("%.0f", 100 * gb[v, p, w] / ga[v, p, w]) : "-" }
# The gateway path's busy ticks per call with the gateway's own taken out
# (the rest of its path), and path o's ticks of the guest's whole capacity
# (CPUs × elapsed) per call; "-" where a count is missing.
function rest_pc(v, w) {
	return (gb[v, "gw", w] + 0 > 0 && tk[v, "gw", w] != "-" && op[v, "gw", w] > 0) ? (gb[v, "gw", w] - tk[v, "gw", w]) / op[v, "gw", w] : "-"
}
function cap_pc(v, o, w) { return (ga[v, o, w] + 0 > 0 && op[v, o, w] > 0) ? ga[v, o, w] / op[v, o, w] : "-" }
# The ceiling of a gateway that cost no CPU at all, over path o's measured
# rate: that rest of the path filling every CPU of the guest.  The
# gateway's ticks include Soft-RoCE and TCP work run inside its system
# calls, which a cheaper gateway would not remove, so the true ceiling is
# lower still.
function ceil(v, o, w,   r, c) {
	r = rest_pc(v, w); c = cap_pc(v, o, w)
	return (r == "-" || c == "-" || r <= 0) ? "-" : sprintf("%.2f", c / r)
}
# The same bound as CPU: the most µs per call the gateway could spend and
# still reach path o's rate (o's capacity per call less the rest).  Below 0
# no gateway can; below HAProxy's own µs per call only one cheaper than
# HAProxy could.
function budget(v, o, w,   r, c) {
	r = rest_pc(v, w); c = cap_pc(v, o, w)
	return (r == "-" || c == "-") ? "-" : sprintf("%.0f", (c - r) / hz * 1e6)
}
# µs per call of a scheduler field f (sr, sw, kr) on path p
function sus(f, v, p, w,   x) {
	x = f == "sr" ? sr[v, p, w] : f == "sw" ? sw[v, p, w] : kr[v, p, w]
	return (x != "" && x != "-" && op[v, p, w] > 0) ? sprintf("%.0f", x / op[v, p, w]) : "-"
}
# The proxy's threads on a CPU or runnable, on average over the workload: 1.0
# is one thread that never slept.
function thr(v, p, w) {
	return (sr[v, p, w] != "" && sr[v, p, w] != "-" && el[v, p, w] > 0) ? sprintf("%.2f", (sr[v, p, w] + sw[v, p, w]) / el[v, p, w]) : "-"
}
function us(v, p, w) { return (tk[v, p, w] != "" && tk[v, p, w] != "-" && op[v, p, w] > 0) ? sprintf("%.0f", tk[v, p, w] / hz * 1e6 / op[v, p, w]) : "-" }
$1 == "ROW" && NF >= 7 {
	v = $2; p = $3; w = $4
	if (!(v in seenv)) { seenv[v] = 1; vers[++nv] = v }
	if (!(p in seenp)) { seenp[p] = 1; path[++np] = p }
	val[v, p, w] = $5; op[v, p, w] = $6; tk[v, p, w] = $7
	if (p == "gw2") has2 = 1
	if (NF >= 9) { gb[v, p, w] = $8; ga[v, p, w] = $9; guest = 1 }
	if (NF >= 13) { sr[v, p, w] = $10; sw[v, p, w] = $11; kr[v, p, w] = $12; el[v, p, w] = $13; sched = 1 }
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
	printf "| NFS | workload | rpcrdma-gw µs/call |%s HAProxy µs/call | gw ÷ HAProxy | NFS calls (gw / HAProxy) |\n", (has2 ? " 2 workers µs/call |" : "")
	print "|---|---|---:|" (has2 ? "---:|" : "") "---:|---:|---:|"
	for (i = 1; i <= nv; i++) for (k = 1; k <= nw; k++) {
		v = vers[i]; w = wk[k]
		a = us(v, "gw", w); b = us(v, "proxy", w)
		printf "| v%s | %s | %s |%s %s | %s | %s / %s |\n", v, lab[w], a, (has2 ? " " us(v, "gw2", w) " |" : ""), b, rat(a, b), op[v, "gw", w], op[v, "proxy", w]
	}
	if (guest) {
		print "\n#### The whole guest's CPU per call, and the ceiling it sets\n"
		print "| NFS | workload | guest busy % (RDMA / gw / HAProxy) | guest CPU µs/call (RDMA / gw / HAProxy) | gw path less the gateway µs/call | ceiling ×HAProxy | ceiling ×RDMA | gateway budget µs/call (gw / HAProxy own) |"
		print "|---|---|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= nv; i++) for (k = 1; k <= nw; k++) {
			v = vers[i]; w = wk[k]
			rest = (gus(v, "gw", w) != "-" && us(v, "gw", w) != "-") ? gus(v, "gw", w) - us(v, "gw", w) : "-"
			printf "| v%s | %s | %s / %s / %s | %s / %s / %s | %s | %s | %s | %s (%s / %s) |\n", v, lab[w],
				busy(v, "rdma", w), busy(v, "gw", w), busy(v, "proxy", w),
				gus(v, "rdma", w), gus(v, "gw", w), gus(v, "proxy", w), rest, ceil(v, "proxy", w), ceil(v, "rdma", w),
				budget(v, small[w] ? "proxy" : "rdma", w), us(v, "gw", w), us(v, "proxy", w)
		}
		print "\nA ceiling is what a gateway costing no CPU could reach at most on this bed: the rest of"
		print "its path (client, TCP, Soft-RoCE, nfsd) filling every vCPU.  Below 1.0 no gateway can meet"
		print "that row's target here; it is an upper bound (the gateway's own time includes Soft-RoCE and"
		print "TCP work done inside its system calls) and says nothing where the guest was not busy."
		print "The budget says the same in CPU: the most a gateway could spend per call and still reach"
		print "the row's target (HAProxy's rate on small rows, direct RDMA's on sequential ones) with that"
		print "rest filling the guest.  A gateway within it is held back by waiting, not by its own CPU."
	}
	if (sched) {
		print "\n#### The proxies' threads and Soft-RoCE's tasklets, per call\n"
		printf "| NFS | workload | gw µs on a CPU / runnable, waiting | HAProxy µs on a CPU / waiting | threads on a CPU or waiting (gw / %sHAProxy) | ksoftirqd µs (RDMA / gw / HAProxy) |\n", (has2 ? "2 workers / " : "")
		print "|---|---|---:|---:|---:|---:|"
		for (i = 1; i <= nv; i++) for (k = 1; k <= nw; k++) {
			v = vers[i]; w = wk[k]
			printf "| v%s | %s | %s / %s | %s / %s | %s / %s%s | %s / %s / %s |\n", v, lab[w],
				sus("sr", v, "gw", w), sus("sw", v, "gw", w), sus("sr", v, "proxy", w), sus("sw", v, "proxy", w),
				thr(v, "gw", w), (has2 ? thr(v, "gw2", w) " / " : ""), thr(v, "proxy", w),
				sus("kr", v, "rdma", w), sus("kr", v, "gw", w), sus("kr", v, "proxy", w)
		}
		print "\nFrom each thread's /proc schedstat.  Threads near 1.0 per thread are never asleep: a call"
		print "waits for that thread to get a CPU.  ksoftirqd runs Soft-RoCE's tasklets raised outside an"
		print "interrupt (an RNIC does that work in hardware)."
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
		s4 = ""
		for (k = 1; k <= nw; k++) {
			w = wk[k]; c = ceil(v, small[w] ? "proxy" : "rdma", w)
			if (c != "-" && c + 0 < 1) s4 = s4 sprintf(" %s %s,", short[w], c)
		}
		sub(/,$/, "", s4)
		if (has2) {
			s5 = ""; m5 = 1
			for (k = 1; k <= nw; k++) {
				w = wk[k]
				if (w != "rr8" && w != "rw8") continue
				r = rat(val[v, "gw2", w], val[v, "gw", w]); c = rat(us(v, "gw2", w), us(v, "gw", w))
				s5 = s5 sprintf(" %s %s (CPU per call %s),", short[w], r, c)
				if (!(r != "-" && r + 0 >= 1.6) && !(c != "-" && c + 0 <= 1.1)) m5 = 0
			}
			sub(/,$/, "", s5)
			printf "- v%s, 2 workers ÷ 1 on the 8-stream 4 KiB rows ≥ 1.6, or CPU per call flat (≤ 1.1):%s: %s\n", v, s5, (m5 ? "met" : "NOT met")
		}
		if (guest) {
			printf "- v%s, rows whose ceiling (a gateway costing nothing) is below its target on this bed:%s\n", v, (s4 == "" ? " none" : s4)
			s6 = s7 = ""
			for (k = 1; k <= nw; k++) {
				w = wk[k]; b = budget(v, small[w] ? "proxy" : "rdma", w); a = us(v, "gw", w); c = us(v, "proxy", w)
				if (b == "-" || a == "-") continue
				if (a + 0 <= b + 0) s6 = s6 sprintf(" %s %s/%s,", short[w], a, b)
				if (small[w] && c != "-" && b + 0 < c + 0) s7 = s7 sprintf(" %s %s/%s,", short[w], b, c)
			}
			sub(/,$/, "", s6); sub(/,$/, "", s7)
			printf "- v%s, rows whose gateway CPU is within its budget (gw/budget µs: what holds them back is waiting, not the gateway's CPU):%s\n", v, (s6 == "" ? " none" : s6)
			printf "- v%s, small rows whose budget is below HAProxy's own CPU per call (budget/HAProxy µs: only a gateway cheaper than HAProxy could meet them here):%s\n", v, (s7 == "" ? " none" : s7)
		}
	}
}
