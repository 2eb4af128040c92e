#!/bin/bash
# Claim: with --log journal the daemon sends its lines to journald as
# structured entries (MESSAGE, PRIORITY, CODE_FUNC, SYSLOG_IDENTIFIER=rpcrdma-gw,
# CLIENT, ERROR, RPC_XID...), and a client host that makes it log more than
# 10 lines a second is cut off, with a "suppressed N messages" entry later
# and the count in the log_suppressed counter.
#
#   14 bad clients ──TCP──▶ rpcrdma-gw --log journal ──datagrams──▶ /run/systemd/journal/socket
#                                                                   (a python receiver, in a
#                                                                    private mount namespace)
#
#   tests/pkg/check-journal.sh     exit 0 all good (or skipped: not root / no unshare), 1 a check failed
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
GW=$(realpath "$BUILD/rpcrdma-gw")
H=$(realpath tests/pkg/ops-helpers.py)
[ -x "$GW" ] || { echo "check-journal: $GW not built (make)"; exit 2; }
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	echo "check-journal: skipped (needs root and unshare for a private /run)"
	exit 0
fi

. tests/pkg/lib.sh
pkg_tmp
read -r p_listen p_srv < <(python3 "$H" ports 2)
cat >"$tmp/gw.conf" <<CONF
[gateway]
listen = 127.0.0.1:$p_listen
secure_port = no
admin_listen =
control_socket =
max_record = 64k
bytes_per_client = 64k
[backend srv]
address = 127.0.0.1
[route nfs]
program = nfs
transport = tcp
port = $p_srv
CONF
cat >"$tmp/recv.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind('/run/systemd/journal/socket')
s.settimeout(3)
with open(sys.argv[1], 'wb') as f:
    try:
        while True:
            f.write(s.recv(65536) + b'\n----\n'); f.flush()
    except socket.timeout:
        pass
PY
# A record mark announcing 1 GiB: above max_record, the client is closed.
# One process opens them all at once, so the burst lands inside one second
# even on a loaded machine (14 interpreter starts did not).
cat >"$tmp/bad.py" <<'PY'
import socket, sys
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1
socks = [socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2) for _ in range(n)]
for s in socks:
    s.sendall(b'\xc0\x00\x00\x00garbage!')
for s in socks:
    try: s.recv(10)
    except OSError: pass
PY
export GW H tmp p_listen
# shellcheck disable=SC2016 # expanded by the inner bash, from the environment
unshare -m --propagation private bash -c '
	mount -t tmpfs none /run && mkdir -p /run/systemd/journal || exit 1
	python3 "$tmp/recv.py" "$tmp/journal" &
	for ((i = 0; i < 50; i++)); do [ -S /run/systemd/journal/socket ] && break; sleep 0.1; done
	"$GW" -c "$tmp/gw.conf" --log journal 2>"$tmp/stderr" &
	gw=$!
	sleep 0.5
	python3 "$tmp/bad.py" "$p_listen" 14
	sleep 1.2
	python3 "$tmp/bad.py" "$p_listen"	# next second: the suppressed line
	sleep 0.3
	kill -TERM "$gw"; wait "$gw"
	wait
'
j=$tmp/journal
[ -s "$j" ] || { echo "check-journal: nothing received"; exit 1; }
if [ ! -s "$tmp/stderr" ]; then ok "nothing on stderr with --log journal"; else bad "stderr not empty: $(head -3 "$tmp/stderr")"; fi
if grep -aq '^SYSLOG_IDENTIFIER=rpcrdma-gw$' "$j" && grep -aq '^CODE_FUNC=' "$j" && grep -aq '^PRIORITY=' "$j"; then
	ok "entries carry SYSLOG_IDENTIFIER, CODE_FUNC, PRIORITY"
else
	bad "missing standard fields"
fi
if grep -aq '^CLIENT=127\.0\.0\.1:' "$j" && grep -aq '^ERROR=client_record_too_big$' "$j"; then
	ok "client errors carry CLIENT= and ERROR=client_record_too_big"
else
	bad "no CLIENT=/ERROR= fields"
fi
n=$(grep -ac '^ERROR=client_record_too_big$' "$j")
if [ "$n" -lt 14 ]; then ok "rate limit: $n of 15 'closed' entries written"; else bad "rate limit: $n entries (no limit)"; fi
if grep -aq '^MESSAGE=peer 127\.0\.0\.1:.*suppressed [0-9]* messages' "$j"; then
	ok "suppressed entry: $(grep -a -m1 '^MESSAGE=peer 127' "$j" | cut -d= -f2-)"
else
	bad "no 'suppressed N messages' entry"
fi
if grep -aq '^MESSAGE=counter log_suppressed = [1-9]' "$j"; then ok "log_suppressed counter logged at exit"; else bad "no log_suppressed counter"; fi

pkg_end
