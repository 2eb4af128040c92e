#!/bin/bash
# Claim: a running gateway answers rpcrdma-gwctl on its control socket (mode
# 0600) and Prometheus scrapes on admin_listen: after calls through it,
# `rpcrdma-gwctl backends` shows the path up, `stats` counts the procedures
# used, `stats --ops` their latency by NFS operation and path (-i: the
# interval's only), drain holds new calls until undrain, /metrics counts them by
# procedure and operation, /healthz is 200 and /readyz follows the backend (200 up, 503
# down).  The configuration file's name holds '"', '\' and a blank: `--json
# status` still parses and gives the name back unchanged.  The configuration
# does not set `workers`: the daemon runs the default, one worker per core of
# the RDMA device's NUMA node (here, with no such device, per core it may run
# on, at most 16), says so at start, and status counts them.
#
#   ops-helpers.py call ──TCP──▶ rpcrdma-gw ──TCP──▶ ops-helpers.py server
#   rpcrdma-gwctl ──unix──▶ │ ◀──HTTP── curl
#
#   tests/pkg/check-ops.sh     exit 0 all good, 1 a check failed, 2 a tool is missing
# Host only, loopback only.  rpcrdma-gwctl is taken from $BUILD, or built
# into a temp dir when the Makefile does not build it yet.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/pkg/lib.sh
pkg_gw
pkg_need python3 curl
pkg_tmp

CTL=$BUILD/rpcrdma-gwctl
if [ ! -x "$CTL" ]; then
	CTL=$tmp/rpcrdma-gwctl
	# shellcheck disable=SC2046
	cc -std=gnu11 -O2 -D_GNU_SOURCE -Ichunking -Iconfig -Ibackend-rdma -Ifrontend-tcp -Igateway \
		-o "$CTL" tools/rpcrdma-gwctl.c "$BUILD/librpcrdmagw.a" \
		$(pkg-config --libs libibverbs librdmacm libevent_core libevent_extra libtirpc libsystemd inih json-c) \
		-lpthread || { echo "check-ops: cannot build rpcrdma-gwctl"; exit 2; }
fi

read -r p_listen p_srv p_admin < <(python3 "$H" ports 3)
python3 "$H" server "$p_srv" & srv=$!
pids+=("$srv")
conf="$tmp/gw \"q\" \\.conf"	# JSON must escape it
cat >"$conf" <<CONF
[gateway]
listen = 127.0.0.1:$p_listen
secure_port = no
admin_listen = 127.0.0.1:$p_admin
control_socket = $tmp/control
reconnect_interval = 100ms
[backend srv]
address = 127.0.0.1
[route nfs]
program = nfs
backend = srv
transport = tcp
port = $p_srv
CONF
"$GW" -c "$conf" >"$tmp/gw.log" 2>&1 &
gw=$!
pids+=("$gw")
for ((i = 0; i < 50; i++)); do [ -S "$tmp/control" ] && break; sleep 0.1; done
for ((i = 0; i < 50; i++)); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p_admin/readyz")" = 200 ] && break
	sleep 0.1
done

mode=$(stat -c %a "$tmp/control" 2>/dev/null)
if [ "$mode" = 600 ]; then ok "control socket mode 0600"; else bad "control socket mode '$mode'"; fi
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p_admin/healthz")
if [ "$code" = 200 ]; then ok "/healthz 200"; else bad "/healthz $code"; fi
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p_admin/readyz")
if [ "$code" = 200 ]; then ok "/readyz 200 with the backend up"; else bad "/readyz $code with the backend up"; fi

if python3 "$H" call "$p_listen" 100003 3 1 5 >/dev/null && python3 "$H" call "$p_listen" 100003 3 0 2 >/dev/null; then
	ok "7 calls through the gateway"
else
	bad "calls through the gateway"
fi

out=$("$CTL" -s "$tmp/control" backends)
printf '%s\n' "$out" | while IFS= read -r l; do echo "    $l"; done
if echo "$out" | grep -Eq '^nfs/srv +srv +tcp +up '; then ok "gwctl backends: nfs/srv up"; else bad "gwctl backends"; fi
out=$("$CTL" -s "$tmp/control" stats)
echo "$out" | sed -n '1,6p' | sed 's/^/    /'
if echo "$out" | grep -Eq '^getattr +5 ' && echo "$out" | grep -Eq '^null +2 '; then
	ok "gwctl stats: getattr 5, null 2"
else
	bad "gwctl stats table"
fi
out=$("$CTL" -s "$tmp/control" stats --ops)
echo "$out" | sed -n '1,4p' | sed 's/^/    /'
if echo "$out" | grep -Eq '^3 +GETATTR +5 ' && echo "$out" | grep -Eq '^3 +NULL +2 ' &&
	echo "$out" | grep -Eq '^nfs/srv +7 '; then
	ok "gwctl stats --ops: GETATTR 5, NULL 2, path nfs/srv 7"
else
	bad "gwctl stats --ops table"
fi
if "$CTL" -s "$tmp/control" --json stats --ops | python3 -c 'import json,sys; d=json.load(sys.stdin); r=[o for o in d["ops"] if o["op"]=="GETATTR" and o["vers"]=="3"]; sys.exit(0 if r and r[0]["count"]==5 and len(r[0]["buckets"])==len(d["bounds_us"])+1 else 1)'; then
	ok "gwctl --json stats --ops parses: GETATTR 5, one bucket more than bounds"
else
	bad "gwctl --json stats --ops"
fi
# -i: the second answer minus the first, i.e. only the calls of the interval.
"$CTL" -s "$tmp/control" stats --ops -i 2 -c 1 >"$tmp/interval" &
ipid=$!
sleep 0.5
python3 "$H" call "$p_listen" 100003 3 1 3 >/dev/null
wait "$ipid"
rc=$?
sed 's/^/    /' "$tmp/interval"
if [ "$rc" = 0 ] && grep -Eq '^3 +GETATTR +3 ' "$tmp/interval" && ! grep -q NULL "$tmp/interval"; then
	ok "gwctl stats --ops -i 2 -c 1: the interval's 3 GETATTR only"
else
	bad "gwctl stats --ops -i (rc $rc)"
fi
if "$CTL" -s "$tmp/control" clients --top 3 --by latency | grep -q '^id .*calls_done .*mean_ms'; then
	ok "gwctl clients --top 3 --by latency"
else
	bad "gwctl clients --top"
fi
bads=0
for args in "clients --top 0" "clients --by speed" "status --ops" "clients --ops" "stats -i 1" "stats --top 2"; do
	# shellcheck disable=SC2086
	"$CTL" -s "$tmp/control" $args >/dev/null 2>&1
	[ $? = 2 ] || { bads=$((bads + 1)); echo "    '$args' not refused with exit 2"; }
done
if [ "$bads" = 0 ]; then ok "gwctl refuses misplaced --ops, -i, --top, --by (exit 2)"; else bad "gwctl option checks"; fi
out=$("$CTL" -s "$tmp/control" --json status)
"$CTL" -s "$tmp/control" status >/dev/null; ready_rc=$?
# The default `workers = 0`: the start line names the count, status has it
# (a lone worker's status has no "workers"), and without an RDMA device that
# names a NUMA node it is the cores this process may run on (each core's
# hardware threads once), at most 16.
nw=$(sed -n 's/.*workers = 0: \([0-9]*\), one per .*/\1/p' "$tmp/gw.log" | head -n 1)
want=$(python3 -c 'import os
t = "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list"
cores = {open(t % c).read() if os.path.exists(t % c) else c for c in os.sched_getaffinity(0)}
print(min(len(cores), 16))')
numa=$(cat /sys/class/infiniband/*/device/numa_node 2>/dev/null | awk '$1 >= 0' | head -n 1)
if [ -z "$nw" ]; then
	bad "workers not set: no 'workers = 0: N, one per ...' line at start (log: $(head -c 300 "$tmp/gw.log"))"
elif ! echo "$out" | NW="$nw" python3 -c 'import json,os,sys; sys.exit(0 if json.load(sys.stdin).get("workers", 1) == int(os.environ["NW"]) else 1)'; then
	bad "workers not set: the start line says $nw, status says otherwise"
elif [ -z "$numa" ] && [ "$nw" != "$want" ]; then
	bad "workers not set: $nw workers, not one per core ($want)"
else
	ok "workers not set: the default runs $nw, one per core${numa:+ of the node of the RDMA device} (nproc $(nproc))"
fi
if echo "$out" | CONF="$conf" python3 -c 'import json,os,sys; d=json.load(sys.stdin); sys.exit(0 if d["ready"] and d["paths"][0]["state"]=="up" and d["config"]==os.environ["CONF"] else 1)'; then
	ok "gwctl --json status parses, ready, path up, configuration name unchanged"
else
	bad "gwctl --json status: $out"
fi
"$CTL" -s "$tmp/control" drain nosuch 2>/dev/null
rc=$?
if [ "$rc" = 1 ]; then ok "gwctl drain nosuch: exit 1"; else bad "gwctl drain nosuch: exit $rc"; fi
"$CTL" -s "$tmp/control" drain "$(printf 'srv\nreload')" 2>/dev/null
rc=$?
if [ "$rc" = 2 ]; then ok "gwctl: a name with a newline is refused (exit 2)"; else bad "gwctl: name with a newline: exit $rc"; fi
"$CTL" -s "$tmp/control" drain srv >/dev/null
timeout 1 python3 "$H" call "$p_listen" 100003 3 0 >/dev/null 2>&1
rc=$?
if [ "$rc" = 124 ]; then ok "drained: a call is held"; else bad "drained: call not held (rc $rc)"; fi
"$CTL" -s "$tmp/control" undrain srv >/dev/null
if python3 "$H" call "$p_listen" 100003 3 0 >/dev/null; then ok "undrained: calls answered"; else bad "undrained: no answer"; fi
# The path name needs no quoting in a shell; the old form, quoted, still works.
"$CTL" -s "$tmp/control" drain nfs/srv | grep -qx 'path nfs/srv: draining' &&
	"$CTL" -s "$tmp/control" undrain 'nfs->srv' | grep -qx 'path nfs/srv: undrained'
rc=$?
if [ "$rc" = 0 ]; then ok "gwctl drain nfs/srv, undrain 'nfs->srv'"; else bad "gwctl drain/undrain by path name"; fi
# Bash completion (the package's): commands, then a running gateway's names.
comp() {	# WORDS...: COMPREPLY for the last word, one line
	PATH=$(dirname "$CTL"):$PATH bash -c '. tools/rpcrdma-gwctl.bash-completion
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rpcrdma_gwctl; echo "${COMPREPLY[*]}"' comp "$@"
}
c1=$(comp rpcrdma-gwctl dr)
c2=$(comp rpcrdma-gwctl -s "$tmp/control" drain "")
c3=$(comp rpcrdma-gwctl log-level d)
if [ "$c1" = drain ] && [ "$c2" = "nfs/srv srv" ] && [ "$c3" = debug ]; then
	ok "bash completion: 'dr' -> drain; drain -> the gateway's nfs/srv srv; log-level d -> debug"
else bad "bash completion: '$c1', '$c2', '$c3'"; fi
if "$CTL" -s "$tmp/control" log-level debug >/dev/null &&
	"$CTL" -s "$tmp/control" --json status | grep -q '"log_level":"debug"'; then
	ok "gwctl log-level debug"
else
	bad "gwctl log-level"
fi
"$CTL" -s "$tmp/control" log-level info >/dev/null
if "$CTL" -s "$tmp/control" reload | grep -q 'reloaded .*values unchanged$'; then ok "gwctl reload: values unchanged"; else bad "gwctl reload"; fi
sed -i 's/^reconnect_interval = 100ms$/reconnect_interval = 200ms\nidle_timeout = 60/' "$conf"
out=$("$CTL" -s "$tmp/control" reload)
if echo "$out" | grep -q 'values changed: idle_timeout, reconnect_interval$' &&
	grep -q 'reload: .* applied: .*values changed: idle_timeout, reconnect_interval' "$tmp/gw.log"; then
	ok "reload names the values that changed (answer and log): idle_timeout, reconnect_interval"
else bad "reload's values: '$out'"; fi

curl -s "http://127.0.0.1:$p_admin/metrics" >"$tmp/metrics"
v=$(sed -n 's/^rpcrdma_gw_calls_total{program="100003",name="nfs",version="3",procedure="1",procname="getattr"} //p' "$tmp/metrics")
if [ "$v" = 8 ]; then ok "/metrics: getattr = 8"; else bad "/metrics: getattr = '$v'"; fi
v=$(sed -n 's/^rpcrdma_gw_op_duration_seconds_count{op="GETATTR",vers="3"} //p' "$tmp/metrics")
if [ "$v" = 8 ]; then ok "/metrics: op_duration_seconds GETATTR v3 = 8"; else bad "/metrics: op_duration_seconds GETATTR '$v'"; fi
v=$(sed -n 's/^rpcrdma_gw_backend_duration_seconds_count{path="nfs\/srv"} //p' "$tmp/metrics")
if [ "${v:-0}" -ge 11 ]; then ok "/metrics: backend_duration_seconds nfs/srv $v"; else bad "/metrics: backend_duration_seconds '$v'"; fi
v=$(sed -n 's/^rpcrdma_gw_call_duration_seconds_count //p' "$tmp/metrics")
if [ "${v:-0}" -ge 8 ]; then ok "/metrics: call_duration_seconds_count $v"; else bad "/metrics: call_duration_seconds_count '$v'"; fi
if grep -q '^# TYPE rpcrdma_gw_call_duration_seconds histogram' "$tmp/metrics"; then ok "/metrics: histogram TYPE"; else bad "/metrics: histogram TYPE"; fi

kill "$srv"
for ((i = 0; i < 30; i++)); do
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p_admin/readyz")
	[ "$code" = 503 ] && break
	sleep 0.1
done
if [ "$code" = 503 ]; then ok "/readyz 503 once the backend is gone"; else bad "/readyz $code with the backend gone"; fi
# Scripts: status's exit status is readiness (0 ready, 4 not ready).
"$CTL" -s "$tmp/control" status >/dev/null; rc=$?
"$CTL" -s "$tmp/control" --json status >/dev/null; jrc=$?
if [ "$rc" = 4 ] && [ "$jrc" = 4 ] && [ "$ready_rc" = 0 ]; then
	ok "gwctl status: exit 0 while ready, 4 (also --json) once not ready"
else bad "gwctl status exit: ready $ready_rc, not ready $rc (--json $jrc); want 0, 4, 4"; fi
kill -TERM "$gw"
wait "$gw"
if [ ! -e "$tmp/control" ]; then ok "control socket removed at exit"; else bad "control socket left behind"; fi

pkg_end
