#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# This file contains the sanity check of the monitoring files that the
# package installs (tools/monitoring/): the Grafana dashboard is valid JSON
# with panels and queries, and every metric name that a dashboard query or
# a Prometheus rule names is one the gateway exports.  The exported names
# are read from the code that prints them: gateway/metrics.c (gw_head(),
# gw_hist_render() and the gw_fams[] table), gateway/readiness.c (its
# "# TYPE" lines) and backend-rdma/backend.h (the
# family column of BE_COUNTERS), plus PENDING, names another change adds.
#
#   monitoring-check.py names                      print the exported names
#   monitoring-check.py check DASHBOARD RULES      exit 1 on a problem
#   monitoring-check.py promql DASHBOARD OUT.yml   the dashboard's queries as
#                                                  recording rules, for promtool
import json, re, sys

PREFIX = 'rpcrdma_gw_'
# Names another change announces, allowed until it lands (none now).
PENDING = {}
# A few names that must be found, so that a change of the code's layout
# cannot silently empty the list.
MUST = ('info', 'calls_total', 'call_duration_seconds_bucket', 'path_up',
        'rdma_credits_in_use', 'payload_bytes_total', 'rdma_connects_total')


def exported():
    src = open('gateway/metrics.c').read()
    be = open('backend-rdma/backend.h').read()
    names = set(re.findall(r'gw_head\(o, "([a-z0-9_]+)"', src))
    names |= set(re.findall(r'\[F_[A-Z0-9_]+\] = \{ "([a-z0-9_]+)"', src))
    hists = re.findall(r'gw_hist_render\(o, "([a-z0-9_]+)"', src)
    hists += re.findall(r'gw_head\(o, "([a-z0-9_]+)", "histogram"', src)
    for h in hists:
        names |= {h + '_bucket', h + '_sum', h + '_count'}
    names |= set(re.findall(r'X\([A-Z0-9_]+, [a-z0-9_]+, "([a-z0-9_]+)"', be))
    # Families written out whole elsewhere (readiness.c: rpcrdma_gw_ready).
    names |= set(re.findall(r'# TYPE rpcrdma_gw_([a-z0-9_]+) ', open('gateway/readiness.c').read()))
    missing = [m for m in MUST if m not in names]
    if missing:
        sys.exit('monitoring-check: the metric names of gateway/metrics.c were not found '
                 '(%s): update this script to the code' % ', '.join(missing))
    pending = set()
    for n, kind in PENDING.items():
        pending |= {n + s for s in ('_bucket', '_sum', '_count')} if kind == 'histogram' else {n}
    return {PREFIX + n for n in names}, {PREFIX + n for n in pending - names}


def used(expr):
    """Metric names of a PromQL expression (label values and strings cut)."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    return set(re.findall(r'(?<![A-Za-z0-9_:])' + PREFIX + r'[a-z0-9_]+', expr))


def dash_exprs(path):
    d = json.load(open(path))
    out, problems, ids = [], [], set()
    panels = d.get('panels') or []
    if not panels:
        problems.append('%s: no panels' % path)
    for p in panels:
        t = p.get('title') or '(untitled)'
        if p.get('id') in ids:
            problems.append('%s: panel id %s twice' % (path, p.get('id')))
        ids.add(p.get('id'))
        if not p.get('targets'):
            problems.append('%s: panel "%s" has no query' % (path, t))
        for tg in p.get('targets') or []:
            e = (tg.get('expr') or '').strip()
            if not e:
                problems.append('%s: panel "%s" has an empty query' % (path, t))
            out.append((t, e))
    if not any(v.get('name') == 'instance' for v in d.get('templating', {}).get('list', [])):
        problems.append('%s: no $instance variable' % path)
    return out, problems


def rule_exprs(path):
    """(name, expr) of each rule of a rules file, read line by line (the
    file's layout: `- record: X` or `- alert: X` then `expr: ...`)."""
    out, name, recorded = [], None, set()
    for line in open(path):
        m = re.match(r'\s*- (record|alert): (\S+)', line)
        if m:
            name = m.group(2)
            if m.group(1) == 'record':
                recorded.add(name)
            continue
        m = re.match(r'\s*expr: (.*)$', line)
        if m:
            out.append((name, m.group(1)))
    return out, recorded


def check(dash, rules):
    have, pending = exported()
    exprs, problems = dash_exprs(dash)
    rexprs, recorded = rule_exprs(rules)
    if not rexprs:
        problems.append('%s: no rules' % rules)
    notes = set()
    for where, e in [(dash + ': ' + t, e) for t, e in exprs] + \
                    [(rules + ': ' + n, e) for n, e in rexprs]:
        for n in sorted(used(e)):
            if n in pending:
                notes.add(n)
            elif n not in have:
                problems.append('%s: %s is not exported by gateway/metrics.c' % (where, n))
        for r in re.findall(r'[a-z_]+:' + PREFIX + r'[a-z0-9_]+:[a-z0-9_]+', e):
            if r not in recorded:
                problems.append('%s: recording rule %s is not defined' % (where, r))
    for n in sorted(notes):
        print('note: %s is not in gateway/metrics.c yet (announced by another change)' % n)
    for p in problems:
        print('FAIL: ' + p)
    print('monitoring-check: %d dashboard queries, %d rules, %d problems'
          % (len(exprs), len(rexprs), len(problems)))
    return 1 if problems else 0


def promql(dash, out):
    exprs, _ = dash_exprs(dash)
    with open(out, 'w') as f:
        f.write('groups:\n  - name: dashboard-queries\n    rules:\n')
        for i, (_, e) in enumerate(exprs):
            e = e.replace('$__rate_interval', '5m').replace('$instance', '.*')
            f.write('      - record: dashboard:query_%d\n        expr: %s\n' % (i, json.dumps(e)))


if __name__ == '__main__':
    a = sys.argv[1:]
    if a == ['names']:
        have, pending = exported()
        print('\n'.join(sorted(have | pending)))
    elif len(a) == 3 and a[0] == 'check':
        sys.exit(check(a[1], a[2]))
    elif len(a) == 3 and a[0] == 'promql':
        promql(a[1], a[2])
    else:
        sys.exit('usage: monitoring-check.py names | check DASHBOARD RULES | promql DASHBOARD OUT')
