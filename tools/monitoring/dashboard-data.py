#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# This file contains the arithmetic of tools/monitoring/dashboard-png.sh:
# from "SCRAPE <seconds> <sample> <value>" lines (successive scrapes of
# /metrics) it computes what the dashboard's main queries show, the way
# Prometheus does (rate() over a window, histogram_quantile() with linear
# interpolation inside a bucket), and writes one gnuplot data file each:
#   calls.dat    seconds, calls/s: all, write, read, getattr+lookup+access, compound
#   latency.dat  seconds, call p50, call p99, RDMA-leg p99 (milliseconds)
#   bytes.dat    seconds, MiB/s in read chunks (WRITE data), in write chunks (READ data)
#   credits.dat  seconds, credits in use, granted, waiting, calls in flight
# and prints the mean time between two scrapes.
#
#   dashboard-data.py SCRAPES OUTDIR
import collections, math, os, re, sys

WINDOW = 5.0	# seconds, the rate() window


def load(path):
    """[(t, {series: value})] in time order, one entry per scrape."""
    scrapes = collections.OrderedDict()
    for line in open(path):
        m = re.match(r'SCRAPE (\S+) (\S+(?:\{.*\})?) (\S+)$', line.strip())
        if m:
            scrapes.setdefault(float(m.group(1)), {})[m.group(2)] = float(m.group(3))
    return sorted(scrapes.items())


def total(s, name, match=''):
    return sum(v for k, v in s.items()
               if (k == name or k.startswith(name + '{')) and match in k)


def quantile(q, s0, s1, name):
    """histogram_quantile(q, increase of name's buckets between two scrapes)."""
    b = []
    for k, v in s1.items():
        m = re.match(name + r'_bucket\{le="([^"]+)"\}', k)
        if m:
            b.append((float(m.group(1)), v - s0.get(k, 0.0)))
    b.sort()
    if not b or b[-1][1] <= 0:
        return float('nan')
    rank, prev_le, prev_c = q * b[-1][1], 0.0, 0.0
    for le, c in b:
        if c >= rank:
            if math.isinf(le):
                return prev_le
            return prev_le + (le - prev_le) * (rank - prev_c) / max(c - prev_c, 1e-9)
        prev_le, prev_c = le, c
    return prev_le


def main(src, outdir):
    sc = load(src)
    if len(sc) < 3:
        sys.exit('dashboard-data: fewer than 3 scrapes in %s' % src)
    os.makedirs(outdir, exist_ok=True)
    t0 = sc[0][0]
    f = {n: open(os.path.join(outdir, n + '.dat'), 'w')
         for n in ('calls', 'latency', 'bytes', 'credits')}
    j = 0
    for i in range(1, len(sc)):
        t1, s1 = sc[i]
        while sc[j + 1][0] <= t1 - WINDOW:
            j += 1
        t0w, s0 = sc[j]
        dt = t1 - t0w
        if dt <= 0:
            continue
        x = t1 - t0

        def rate(name, match=''):
            return max(total(s1, name, match) - total(s0, name, match), 0.0) / dt
        c = 'rpcrdma_gw_calls_total'
        meta = sum(rate(c, 'procname="%s"' % p) for p in ('getattr', 'lookup', 'access'))
        f['calls'].write('%.1f %.2f %.2f %.2f %.2f %.2f\n' % (
            x, rate(c), rate(c, 'procname="write"'), rate(c, 'procname="read"'), meta,
            rate(c, 'procname="compound"')))
        f['latency'].write('%.1f %.3f %.3f %.3f\n' % (
            x, 1e3 * quantile(0.5, s0, s1, 'rpcrdma_gw_call_duration_seconds'),
            1e3 * quantile(0.99, s0, s1, 'rpcrdma_gw_call_duration_seconds'),
            1e3 * quantile(0.99, s0, s1, 'rpcrdma_gw_rdma_duration_seconds')))
        p = 'rpcrdma_gw_payload_bytes_total'
        f['bytes'].write('%.1f %.3f %.3f\n' % (
            x, rate(p, 'path="read_chunk"') / 2**20, rate(p, 'path="write_chunk"') / 2**20))
        f['credits'].write('%.1f %d %d %d %d\n' % (
            x, total(s1, 'rpcrdma_gw_rdma_credits_in_use'),
            total(s1, 'rpcrdma_gw_rdma_credits_granted'),
            total(s1, 'rpcrdma_gw_rdma_credit_queue'), total(s1, 'rpcrdma_gw_calls_in_flight')))
    for h in f.values():
        h.close()
    # the mean time between scrapes, for the picture's title
    print('%.1f' % ((sc[-1][0] - sc[0][0]) / (len(sc) - 1)))


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit('usage: dashboard-data.py SCRAPES OUTDIR')
    main(sys.argv[1], sys.argv[2])
