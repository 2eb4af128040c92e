# SPDX-License-Identifier: MIT
#
# This file contains the gnuplot layout of docs/dashboard.png: four panels
# of the Grafana dashboard (calls/s by procedure, call and RDMA-leg latency,
# payload bytes, credits) from the data files of dashboard-data.py.
#   gnuplot -e "datadir='DIR'; out='FILE.png'; every='SECONDS'" dashboard.gp
set terminal pngcairo size 1400,900 font "DejaVu Sans,11"
set output out
set datafile missing "nan"
set multiplot layout 2,2 title "rpcrdma-gw: NFS v3 then v4.1 through the gateway over RPC-over-RDMA (Soft-RoCE, VM); /metrics scraped every ".every." s, 5 s rate window" font ",13"
set grid
set key top right
set xlabel "seconds"
set style data lines

set title "Calls / s by procedure  (rate(rpcrdma\\_gw\\_calls\\_total[5s]))"
set ylabel "calls/s"
plot datadir.'/calls.dat' u 1:2 t "all" lw 2, '' u 1:3 t "v3 write", '' u 1:4 t "v3 read", \
     '' u 1:5 t "v3 getattr+lookup+access", '' u 1:6 t "v4 compound"

set title "Latency  (histogram\\_quantile over call/rdma\\_duration\\_seconds)"
set ylabel "ms"
set logscale y
plot datadir.'/latency.dat' u 1:2 t "call p50" lw 2, '' u 1:3 t "call p99" lw 2, '' u 1:4 t "RDMA leg p99"
unset logscale y

set title "Payload MiB / s  (rate(rpcrdma\\_gw\\_payload\\_bytes\\_total[5s]))"
set ylabel "MiB/s"
plot datadir.'/bytes.dat' u 1:2 t "read chunks (WRITE data)" lw 2, '' u 1:3 t "write chunks (READ data)" lw 2

set title "RPC-over-RDMA credits and calls in flight (sampled at each scrape)"
set ylabel "count"
plot datadir.'/credits.dat' u 1:3 t "credits granted" lw 2, '' u 1:2 t "credits in use", \
     '' u 1:4 t "waiting for a credit", '' u 1:5 t "calls in flight"
unset multiplot
