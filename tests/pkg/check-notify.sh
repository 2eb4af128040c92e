#!/bin/bash
# Claim: the built daemon speaks the systemd protocols it is configured for:
# on its own NOTIFY_SOCKET it sends READY=1 and STATUS= once listening with
# its route connected, WATCHDOG=1 every WATCHDOG_USEC/2, RELOADING=1 then
# READY=1 on SIGHUP and STOPPING=1 on SIGTERM; and under
# systemd-socket-activate it serves the socket it is passed (a call for an
# unknown program on that port gets the gateway's PROG_UNAVAIL reply) and
# does not open the listen address of its configuration.
#
#   notify receiver ◀──datagrams── rpcrdma-gw ──TCP──▶ ops-helpers.py server
#   (ops-helpers.py notify)          ▲ 127.0.0.1:$p_listen
#                                    └── ops-helpers.py call
#
#   tests/pkg/check-notify.sh     exit 0 all good, 1 a check failed, 2 a tool is missing
# Host only, loopback only; BUILD (default build) holds rpcrdma-gw.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/pkg/lib.sh
pkg_gw
pkg_need python3 systemd-socket-activate
pkg_tmp

read -r p_listen p_srv p_act p_cfg < <(python3 "$H" ports 4)
python3 "$H" server "$p_srv" & pids+=("$!")
python3 "$H" notify "$tmp/notify" "$tmp/notify.log" & pids+=("$!")
cat >"$tmp/gw.conf" <<CONF
[gateway]
listen = 127.0.0.1:$p_listen
secure_port = no
admin_listen =
control_socket =
reconnect_interval = 100ms
[backend srv]
address = 127.0.0.1
[route nfs]
program = nfs
backend = srv
transport = tcp
port = $p_srv
CONF

# wait_for PATTERN FILE SECONDS
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
for ((i = 0; i < 50; i++)); do [ -S "$tmp/notify" ] && break; sleep 0.1; done

# 1. notify: READY=1, STATUS=, WATCHDOG=1 (WATCHDOG_PID must be the daemon's
# pid: the subshell's pid, which exec keeps).
(
	export NOTIFY_SOCKET=$tmp/notify WATCHDOG_USEC=2000000 WATCHDOG_PID=$BASHPID
	exec "$GW" -c "$tmp/gw.conf"
) >"$tmp/gw.log" 2>&1 &
gw=$!
pids+=("$gw")
if wait_for '^READY=1' "$tmp/notify.log" 10; then ok "READY=1 received"; else bad "no READY=1"; fi
if grep -q '^STATUS=.*listening' "$tmp/notify.log"; then
	ok "STATUS= received: $(grep -m1 '^STATUS=.*listening' "$tmp/notify.log")"
else
	bad "no STATUS= with the listening state"
fi
if stat=$(python3 "$H" call "$p_listen" 100003 3 0) && [ "$stat" = 0 ]; then
	ok "NULL call through the gateway answered SUCCESS"
else
	bad "NULL call through the gateway"
fi
if wait_for '^WATCHDOG=1' "$tmp/notify.log" 3; then ok "WATCHDOG=1 within 3 s (WATCHDOG_USEC=2 s)"; else bad "no WATCHDOG=1"; fi
n1=$(grep -c '^WATCHDOG=1' "$tmp/notify.log")
sleep 2.2
n2=$(grep -c '^WATCHDOG=1' "$tmp/notify.log")
if [ "$n2" -ge $((n1 + 2)) ]; then ok "WATCHDOG=1 keeps coming ($n1 -> $n2 in 2.2 s)"; else bad "WATCHDOG=1 not periodic ($n1 -> $n2)"; fi
: >"$tmp/notify.log"
kill -HUP "$gw"
if wait_for '^READY=1' "$tmp/notify.log" 5 && grep -q '^RELOADING=1' "$tmp/notify.log"; then
	ok "SIGHUP: RELOADING=1 then READY=1"
else
	bad "SIGHUP: no RELOADING=1/READY=1"
fi
kill -TERM "$gw"
if wait_for '^STOPPING=1' "$tmp/notify.log" 5; then ok "SIGTERM: STOPPING=1"; else bad "SIGTERM: no STOPPING=1"; fi
wait "$gw"
rc=$?
if [ "$rc" -eq 0 ]; then ok "clean exit after SIGTERM"; else bad "exit status $rc after SIGTERM"; cat "$tmp/gw.log"; fi

# 2. socket activation: the configuration says 127.0.0.1:$p_cfg, systemd
# passes a socket on $p_act.
sed -i "s/^listen = .*/listen = 127.0.0.1:$p_cfg/" "$tmp/gw.conf"
systemd-socket-activate -l "127.0.0.1:$p_act" "$GW" -c "$tmp/gw.conf" >"$tmp/act.log" 2>&1 &
act=$!
pids+=("$act")
sleep 0.5
if stat=$(python3 "$H" call "$p_act" 123456 1 0) && [ "$stat" = 1 ]; then
	ok "activated socket $p_act: unknown program gets PROG_UNAVAIL from the gateway"
else
	bad "no PROG_UNAVAIL reply on the activated socket (got '${stat:-none}')"
	cat "$tmp/act.log"
fi
if stat=$(python3 "$H" call "$p_act" 100003 3 0) && [ "$stat" = 0 ]; then
	ok "activated socket: NFS NULL forwarded to the backend"
else
	bad "activated socket: NFS NULL"
fi
if grep -q "listening on 1 socket(s) from systemd" "$tmp/act.log"; then
	ok "daemon says it took 1 socket from systemd"
else
	bad "no 'socket(s) from systemd' log line"
fi
if python3 "$H" call "$p_cfg" 100003 3 0 >/dev/null 2>&1; then
	bad "configured listen address $p_cfg opened despite socket activation"
else
	ok "configured listen address not opened"
fi
kill -TERM "$act" 2>/dev/null
wait "$act" 2>/dev/null

pkg_end
