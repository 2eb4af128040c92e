#!/bin/bash
# SPDX-License-Identifier: MIT
#
# This file contains the chart of `make bench`: a PNG bar chart (gnuplot) of
# each path's figure over direct kernel RDMA, per workload and NFS version,
# from the data that tests/bench/bench_tables.awk -v chart=1 prints.
#   tests/bench/bench_chart.sh DATA PNG [TITLE-SUFFIX]
set -eu
data=${1:?DATA} png=${2:?PNG} when=${3:-}
command -v gnuplot >/dev/null || { echo "bench_chart: gnuplot missing" >&2; exit 1; }
ncol=$(head -1 "$data" | awk -F'\t' '{ print NF }')
[ "$ncol" -ge 2 ] && [ "$(wc -l <"$data")" -ge 2 ] || { echo "bench_chart: no data in $data" >&2; exit 1; }
gnuplot <<GP
set terminal pngcairo size 1400,560 font "sans,10"
set output "$png"
set title "make bench${when:+, $when}: throughput over direct kernel NFS/RDMA (1.0 = direct RDMA; higher is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top right
set grid ytics
set yrange [0:*]
set ylabel "× direct RDMA"
set xtics rotate by -35 scale 0
set datafile separator "\t"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5
plot for [c=2:$ncol] "$data" using c:xtic(1) title columnheader(c)
GP
