#!/bin/bash
# SPDX-License-Identifier: MIT
#
# This file contains the maker of docs/dashboard.png: the main queries of
# the Grafana dashboard (rpcrdma-gw-dashboard.json) computed from real
# scrapes of a gateway's /metrics and plotted with gnuplot.  The scrapes
# come from tests/vm/dashboard_scrape.sh, a minute of NFS v3 and v4.1
# traffic through the gateway over Soft-RoCE in the VM tier's guest.
#
#   tools/monitoring/dashboard-png.sh [OUT.png]     boot the guest, scrape, plot
#   tools/monitoring/dashboard-png.sh --from LOG [OUT.png]
#                                                   plot the SCRAPE lines of LOG
# OUT defaults to docs/dashboard.png; work files go to $BUILD/dashboard/.
# Needs: gnuplot (gnuplot-nox), python3, and for the guest what the VM tier
# needs (make deps).  One guest at a time on a shared machine: wrap the
# first form in the same lock as the VM tier if others use it.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
work=$BUILD/dashboard
mkdir -p "$work"
log=$work/vm.log
if [ "${1:-}" = --from ]; then
	log=$2
	shift 2
else
	[ -x "$BUILD/rpcrdma-gw" ] || { echo "dashboard-png: build first (make)" >&2; exit 1; }
	why=$(tests/vm/run-vm.sh --probe) || { echo "dashboard-png: no VM here: $why" >&2; exit 1; }
	echo "dashboard-png: running tests/vm/dashboard_scrape.sh in the guest (log $log)"
	BUILD=$BUILD tests/vm/run-vm.sh tests/vm/dashboard_scrape.sh >"$log" 2>&1 || {
		tail -30 "$log" >&2; echo "dashboard-png: the guest run failed (log $log)" >&2; exit 1; }
fi
out=${1:-docs/dashboard.png}
command -v gnuplot >/dev/null || { echo "dashboard-png: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }
grep '^SCRAPE ' "$log" >"$work/scrapes" || { echo "dashboard-png: no SCRAPE lines in $log" >&2; exit 1; }
every=$(python3 tools/monitoring/dashboard-data.py "$work/scrapes" "$work/data")
gnuplot -e "datadir='$work/data'; out='$out'; every='$every'" tools/monitoring/dashboard.gp
echo "dashboard-png: wrote $out ($(wc -l <"$work/scrapes") samples)"
