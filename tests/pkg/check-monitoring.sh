#!/bin/bash
# SPDX-License-Identifier: MIT
#
# This file contains the check of the monitoring files the package ships
# (tools/monitoring/, installed to /usr/share/rpcrdma-gw/):
#   - `promtool check rules` accepts the Prometheus rules, and `promtool
#     test rules` (tests/pkg/monitoring-rules-test.yml) shows each alert
#     firing on its fault after its `for:` time and not on a healthy gateway;
#   - the Grafana dashboard is valid JSON with panels and queries, every
#     query parses as PromQL (promtool, as recording rules), and every
#     metric name in the dashboard and the rules is one gateway/metrics.c
#     exports (tests/pkg/monitoring-check.py);
#   - docs/dashboard.png is a PNG that docs/operations.md shows;
#   - negative cases: a made-up metric name in a copy of the dashboard, and
#     a copy that is not JSON, are refused.
#
#   tests/pkg/check-monitoring.sh   exit 0 all good, 1 a check failed,
#                                   77 promtool missing (a loud skip; with
#                                   CI=true that is a failure: exit 1)
set -u
cd "$(dirname "$0")/../.." || exit 1
D=tools/monitoring/rpcrdma-gw-dashboard.json
R=tools/monitoring/rpcrdma-gw-rules.yml
T=tests/pkg/monitoring-rules-test.yml
. tests/pkg/lib.sh
pkg_tmp

for f in "$D" "$R" "$T"; do
	[ -e "$f" ] || bad "$f missing"
done
[ "$failed" = 0 ] || { echo "check-monitoring: $passed passed, $failed failed"; exit 1; }

if out=$(python3 -m json.tool "$D" 2>&1 >/dev/null); then ok "$D is valid JSON"
else bad "$D is not valid JSON: $out"; fi
if python3 tests/pkg/monitoring-check.py check "$D" "$R" >"$tmp/names.log" 2>&1; then
	ok "metric names of $D and $R exist ($(tail -1 "$tmp/names.log"))"
	grep '^note:' "$tmp/names.log" | sed 's/^/    /'
else
	bad "metric names:"; sed 's/^/    /' "$tmp/names.log"
fi

# The picture of the dashboard (tools/monitoring/dashboard-png.sh) is there
# and shown in operations.md.
if [ "$(head -c 8 docs/dashboard.png 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
	grep -q '](dashboard.png)' docs/operations.md; then ok "docs/dashboard.png is a PNG shown in docs/operations.md"
else bad "docs/dashboard.png missing, not a PNG, or not shown in docs/operations.md"; fi

# Negative cases: the checks above can fail.
sed 's/rpcrdma_gw_path_up/rpcrdma_gw_path_upp/' "$D" >"$tmp/bad-name.json"
if python3 tests/pkg/monitoring-check.py check "$tmp/bad-name.json" "$R" >"$tmp/neg.log" 2>&1 ||
	! grep -q 'rpcrdma_gw_path_upp is not exported' "$tmp/neg.log"; then
	bad "a dashboard naming rpcrdma_gw_path_upp was not refused"; sed 's/^/    /' "$tmp/neg.log"
else ok "a dashboard naming a metric the gateway lacks is refused"; fi
head -c 200 "$D" >"$tmp/truncated.json"
if python3 -m json.tool "$tmp/truncated.json" >/dev/null 2>&1; then bad "truncated JSON accepted"
else ok "a truncated dashboard is refused"; fi

if ! command -v promtool >/dev/null; then
	if [ "${CI:-}" = true ]; then
		bad "promtool not found (apt-get install prometheus; make deps): CI=true makes it mandatory"
		echo "check-monitoring: $passed passed, $failed failed"
		exit 1
	fi
	echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
	echo "!!! SKIPPED: promtool not found: rules not checked (make deps installs prometheus)"
	echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
	echo "check-monitoring: $passed passed, $failed failed, promtool checks skipped"
	[ "$failed" = 0 ] && exit 77
	exit 1
fi
if out=$(promtool check rules "$R" 2>&1); then ok "promtool check rules $R: $(echo "$out" | grep -o '[0-9]* rules found')"
else bad "promtool check rules $R:"; echo "$out" | sed 's/^/    /'; fi
if out=$(promtool test rules "$T" 2>&1); then ok "promtool test rules $T: every alert fires on its fault only"
else bad "promtool test rules $T:"; echo "$out" | tail -40 | sed 's/^/    /'; fi
python3 tests/pkg/monitoring-check.py promql "$D" "$tmp/dashboard-rules.yml"
if out=$(promtool check rules "$tmp/dashboard-rules.yml" 2>&1); then ok "every dashboard query parses as PromQL"
else bad "dashboard queries that do not parse:"; echo "$out" | sed 's/^/    /'; fi
printf 'groups:\n  - name: n\n    rules:\n      - record: bad:query\n        expr: "sum(rate(rpcrdma_gw_calls_total[5m])"\n' >"$tmp/bad-rules.yml"
if promtool check rules "$tmp/bad-rules.yml" >/dev/null 2>&1; then bad "promtool accepted an unbalanced query"
else ok "promtool refuses an unbalanced query"; fi

pkg_end
