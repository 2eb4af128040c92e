#!/bin/bash
# Claim: the daemon works with the privileges its unit gives it and no more
# (issue 12 item 8): as user nobody, with CAP_NET_BIND_SERVICE as its only
# capability and RLIMIT_MEMLOCK set to what docs/operations.md §3.3 says the
# configuration needs, it binds a port below 1024, answers a NULL call
# through a TCP route, and serves /readyz and /metrics on a Unix admin socket
# (mode 0660) only to requests with the bearer token.  Negative: without the
# capability the reserved port fails with an error naming
# CAP_NET_BIND_SERVICE (exit 1, no crash); a token file that group or others
# may read refuses the start (and --check-config); --check-config warns about
# an admin_listen beyond loopback without a token, and not with one.
#
#   ops-helpers.py call ──TCP:<1024──▶ rpcrdma-gw (nobody) ──TCP──▶ ops-helpers.py server
#   curl --unix-socket ──HTTP──▶ admin.sock
#
#   tests/pkg/check-unpriv.sh    exit 0 all good, 1 a check failed, 77 not root or a tool missing
# Host only, loopback only; needs root to change user (setpriv) and a user
# "nobody" with group "nogroup".
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
H=tests/pkg/ops-helpers.py
skip() { echo "SKIPPED: $*"; exit 77; }
[ -x "$BUILD/rpcrdma-gw" ] || { echo "check-unpriv: $BUILD/rpcrdma-gw not built (make)"; exit 2; }
[ "$(id -u)" = 0 ] || skip "check-unpriv needs root to run the daemon as nobody"
for t in python3 curl setpriv prlimit; do
	command -v "$t" >/dev/null || skip "check-unpriv: $t not found"
done
getent passwd nobody >/dev/null && getent group nogroup >/dev/null || skip "no user nobody/group nogroup"

. tests/pkg/lib.sh
pkg_tmp
chmod 755 "$tmp"
GW=$tmp/rpcrdma-gw		# whatever the build directory's permissions, nobody can run this
cp "$BUILD/rpcrdma-gw" "$GW"
mkdir -m 755 "$tmp/run" && chown nobody:nogroup "$tmp/run"

# A free port below 1024, and two ordinary ones.
p_low=$(python3 -c '
import socket
for p in range(1023, 600, -1):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try: s.bind(("127.0.0.1", p)); print(p); break
    except OSError: pass
')
read -r p_srv p_admin < <(python3 "$H" ports 2)
python3 "$H" server "$p_srv" & pids+=($!)

tok=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$tok" >"$tmp/token"
chown nobody:nogroup "$tmp/token"
chmod 600 "$tmp/token"
sock=$tmp/run/admin.sock
conf=$tmp/gw.conf
cat >"$conf" <<CONF
[gateway]
listen = 127.0.0.1:$p_low
# the test client cannot take a reserved source port: nfsd's name for secure_port = no
insecure = yes
buffers = 64
buffer_size = 64k
admin_listen = unix:$sock
admin_token_file = $tmp/token
control_socket = $tmp/run/control
reconnect_interval = 100ms
[backend srv]
address = 127.0.0.1
[route nfs]
program = nfs
backend = srv
transport = tcp
port = $p_srv
CONF
chmod 644 "$conf"
# docs/operations.md §3.3: buffers x buffer_size + connections x credits x
# (inline_send + inline_recv) = 4 MiB + 64 x 8 KiB, plus ~10 %.
memlock=$(( (64 * 65536 + 64 * 8192) * 11 / 10 ))

as_nobody() {	# CAPS ARGS...: exec as nobody with those inheritable+ambient caps (in a subshell)
	local caps=$1
	shift
	if [ -n "$caps" ]; then
		exec prlimit --memlock="$memlock:$memlock" setpriv --reuid=nobody --regid=nogroup \
			--clear-groups --inh-caps="-all,+$caps" --ambient-caps="+$caps" -- "$@"
	else
		exec prlimit --memlock="$memlock:$memlock" setpriv --reuid=nobody --regid=nogroup \
			--clear-groups --inh-caps=-all --bounding-set=-all -- "$@"
	fi
}
admin() {	# AUTH PATH: HTTP status of GET PATH on the admin socket
	curl -s -o "$tmp/body" -w '%{http_code}' --unix-socket "$sock" ${1:+-H "Authorization: Bearer $1"} \
		"http://gw$2"
}

as_nobody net_bind_service "$GW" -c "$conf" --log stderr >"$tmp/gw.log" 2>&1 &
gw=$!
pids+=("$gw")
for ((i = 0; i < 50; i++)); do [ "$(admin "$tok" /readyz)" = 200 ] && break; sleep 0.1; done

st=/proc/$gw/status
if [ "$(awk '/^Uid:/ {print $2 $3 $4 $5}' "$st" 2>/dev/null)" = 65534655346553465534 ] &&
	[ "$(awk '/^Gid:/ {print $2}' "$st")" = 65534 ]; then
	ok "runs as nobody:nogroup"
else
	bad "not nobody: $(grep -E '^(Uid|Gid):' "$st" 2>/dev/null | tr '\n' ' ')"
fi
capeff=$(awk '/^CapEff:/ {print $2}' "$st" 2>/dev/null)
if [ "$capeff" = 0000000000000400 ]; then ok "CapEff $capeff: CAP_NET_BIND_SERVICE only"; else bad "CapEff '$capeff'"; fi
lim=$(awk '/^Max locked memory/ {print $4}' "/proc/$gw/limits" 2>/dev/null)
if [ "$lim" = "$memlock" ]; then ok "RLIMIT_MEMLOCK $lim bytes (the documented need)"; else bad "memlock '$lim'"; fi
if grep -q "listening on 127.0.0.1:$p_low" "$tmp/gw.log"; then ok "bound port $p_low (< 1024)"; else bad "no listener on $p_low"; fi
if [ "$(python3 "$H" call "$p_low" 100003 3 0 1)" = 0 ]; then
	ok "NULL call through the TCP route: SUCCESS"
else
	bad "NULL call through port $p_low"
fi

mode=$(stat -c '%a %U' "$sock" 2>/dev/null)
if [ "$mode" = "660 nobody" ]; then ok "admin socket mode 0660, owner nobody"; else bad "admin socket '$mode'"; fi
c1=$(admin "" /metrics) c2=$(admin "wrong-$tok" /metrics)
if [ "$c1" = 401 ] && [ "$c2" = 401 ]; then ok "admin: no token 401, wrong token 401"; else bad "admin without/with wrong token: $c1 $c2"; fi
c3=$(admin "$tok" /metrics)
if [ "$c3" = 200 ] && grep -q '^rpcrdma_gw_admin_refused_total{reason="unauthorized"} 2$' "$tmp/body"; then
	ok "admin with the token: /metrics 200, unauthorized 2"
else
	bad "admin with the token: $c3 $(grep -c unauthorized "$tmp/body" 2>/dev/null)"
fi
if grep -q 'admin unix: admin request refused: no bearer token' "$tmp/gw.log"; then
	ok "refusal logged with the peer"
else
	bad "no refusal line in the log"
fi
kill "$gw" 2>/dev/null
wait "$gw" 2>/dev/null

# Negative: no capability at all.
(as_nobody "" "$GW" -c "$conf" --log stderr) >"$tmp/nocap.log" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "listen 127.0.0.1:$p_low: Permission denied (a port below 1024 needs CAP_NET_BIND_SERVICE" "$tmp/nocap.log"; then
	ok "without the capability: exit 1, error names CAP_NET_BIND_SERVICE"
else
	bad "without the capability: exit $rc: $(tail -1 "$tmp/nocap.log")"
fi

# Negative: a token file group or others may read.
chmod 644 "$tmp/token"
(as_nobody net_bind_service "$GW" -c "$conf" --log stderr) >"$tmp/tok.log" 2>&1
rc=$?
(as_nobody net_bind_service "$GW" --check-config "$conf") >"$tmp/check.log" 2>&1
rc2=$?
if [ "$rc" = 1 ] && [ "$rc2" = 1 ] && grep -q "admin_token_file $tmp/token: mode 0644" "$tmp/tok.log" &&
	grep -q "mode 0644" "$tmp/check.log" && ! grep -q "listening on" "$tmp/tok.log"; then
	ok "token file 0644: start refused (exit 1) before any listener, --check-config fails too"
else
	bad "token file 0644: start exit $rc, check exit $rc2: $(tail -1 "$tmp/tok.log")"
fi
chmod 600 "$tmp/token"

# --check-config: beyond loopback without a token is warned about.
sed -e "s|^admin_listen = .*|admin_listen = 0.0.0.0:$p_admin|" -e '/^admin_token_file/d' "$conf" >"$tmp/open.conf"
out=$("$GW" --check-config "$tmp/open.conf" 2>&1)
rc=$?
if [ "$rc" = 0 ] && echo "$out" | grep -q "warning: admin_listen = 0.0.0.0:$p_admin is not a loopback address and no admin_token_file"; then
	ok "--check-config warns: admin_listen 0.0.0.0 without a token"
else
	bad "--check-config on 0.0.0.0 without a token: exit $rc: $out"
fi
sed -e "s|^admin_listen = .*|admin_listen = 0.0.0.0:$p_admin|" "$conf" >"$tmp/token.conf"
out=$("$GW" --check-config "$tmp/token.conf" 2>&1)
if [ $? = 0 ] && ! echo "$out" | grep -q warning; then ok "--check-config: no warning with a token"; else bad "--check-config with a token: $out"; fi

pkg_end
