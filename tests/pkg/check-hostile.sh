#!/bin/bash
# Claim: a hostile neighbour cannot starve a well-behaved client of the
# gateway.  While the attacks of issue 12 run at full count against one
# gateway with a TCP route (930 idle connections with one small call each,
# 60 announcing 1 MiB fragments and stalling, 9 sending 300 large-reply
# calls and never reading, 20 000 REPLY records, 5 000 copies of one XID,
# POST /metrics with a 400 MiB body, a 200 MiB header line), a good client
# copies 256 MiB through it (sha256 of what came back equal to what was
# sent) and runs a GETATTR loop whose median stays within 2x of the same
# loop measured quietly first; each attack's counter moves, its log lines
# stay rate-limited, the daemon's RSS stays under 2 x its quiet RSS + the
# buffer pools (64 MiB per worker: the default runs one per core and the
# attackers' addresses spread over them), and it is alive and healthy
# afterwards.
#
#   gw-hostile.py attack ... (127.0.0.2-9) ──TCP──▶ rpcrdma-gw ──TCP──▶ gw-hostile.py server
#   gw-hostile.py copy / getattr (127.0.0.1) ─────▶ │ ◀──HTTP── attacks on admin_listen
#
#   tests/pkg/check-hostile.sh     exit 0 all good, 1 a check failed, 2 a tool is missing
# Host only, loopback only.  The timeouts are lowered (idle 5 s, record and
# write 3 s) so that the attacks end within the run; the limits are the
# defaults.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/pkg/lib.sh
pkg_gw
pkg_need python3 curl
pkg_tmp
T=tests/tools/gw-hostile.py

read -r p_listen p_srv p_admin < <(python3 "$H" ports 3)
python3 "$T" server "$p_srv" & pids+=($!)
cat >"$tmp/gw.conf" <<CONF
[gateway]
listen = 127.0.0.1:$p_listen
secure_port = no
admin_listen = 127.0.0.1:$p_admin
buffers = 1024
buffer_size = 64k
idle_timeout = 5s
record_timeout = 3s
write_timeout = 3s
[backend srv]
address = 127.0.0.1
[route nfs]
program = nfs
backend = srv
transport = tcp
port = $p_srv
CONF
"$GW" -c "$tmp/gw.conf" >"$tmp/gw.log" 2>&1 &
gw=$!
pids+=("$gw")
for ((i = 0; i < 100; i++)); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p_admin/readyz")" = 200 ] && break
	sleep 0.1
done

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$gw/status"; }	# KiB
# msum ERE: the sum of the /metrics samples whose line matches ERE.
msum() {
	curl -s "http://127.0.0.1:$p_admin/metrics" |
		awk -v re="$1" '$1 !~ /^#/ && $0 ~ re { s += $NF } END { printf "%d\n", s }'
}

python3 "$T" getattr 127.0.0.1 "$p_listen" 2000 >"$tmp/quiet.txt" || bad "quiet GETATTR loop"
q_med=$(sed -n 's/.*median \([0-9.]*\) ms/\1/p' "$tmp/quiet.txt")
q_rss=$(rss)
echo "    quiet: GETATTR median $q_med ms, RSS $q_rss KiB"

# The attacks, each from its own address, all at once.  The attackers stand
# for other hosts: they share the last CPU only (as in t_78b), so that the
# loop measures the gateway's fairness, not the CPU the attack scripts take
# from the loop's own Python on a 2-core machine (unpinned, a quiet median
# of 0.05 ms went past 2x).  The gateway is not pinned.
pin=()
[ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null && pin=(taskset -c "$(($(nproc) - 1))")
echo "    attackers on: ${pin[*]:-any CPU (one CPU or no taskset)}"
atk() {	# NAME SRC N [PORT]
	"${pin[@]}" python3 "$T" attack "$1" 127.0.0.1 "${4:-$p_listen}" "$2" "$3" >"$tmp/atk-$1.txt" 2>&1 &
	apids+=($!)
}
apids=()
atk idle 127.0.0.2 930
atk frag 127.0.0.3 60
atk noread 127.0.0.4 9
atk replies 127.0.0.5 20000
atk dupxid 127.0.0.6 5000
atk post 127.0.0.7 400 "$p_admin"
atk header 127.0.0.8 200 "$p_admin"
( peak=0; while kill -0 "$gw" 2>/dev/null; do
	r=$(rss 2>/dev/null || echo 0); [ "${r:-0}" -gt "$peak" ] && peak=$r && echo "$peak" >"$tmp/peak"
	sleep 0.2; done ) & pids+=($!)
sleep 2

python3 "$T" copy 127.0.0.1 "$p_listen" 256 >"$tmp/copy.txt" 2>&1 & cpid=$!
python3 "$T" getattr 127.0.0.1 "$p_listen" 2000 >"$tmp/attack.txt" 2>&1 || bad "GETATTR loop under attack: $(cat "$tmp/attack.txt")"
wait "$cpid" || bad "copy under attack: $(cat "$tmp/copy.txt")"
for p in "${apids[@]}"; do wait "$p"; done
sed 's/^/    /' "$tmp"/atk-*.txt "$tmp/copy.txt" "$tmp/attack.txt"

a_med=$(sed -n 's/.*median \([0-9.]*\) ms/\1/p' "$tmp/attack.txt")
s1=$(sed -n 's/.*sent sha256 //p' "$tmp/copy.txt")
s2=$(sed -n 's/.*back sha256 //p' "$tmp/copy.txt")
if [ -n "$s1" ] && [ "$s1" = "$s2" ]; then ok "256 MiB copied under attack, sha256 equal"; else bad "copy under attack: sha256 '$s1' vs '$s2'"; fi
if [ -n "$a_med" ] && awk -v a="$a_med" -v q="$q_med" 'BEGIN { exit !(a <= 2 * q) }'; then
	ok "GETATTR median $a_med ms under attack, within 2x of $q_med ms quiet"
else
	bad "GETATTR median '$a_med' ms under attack, quiet '$q_med' ms: more than 2x"
fi

# Each attack's counter.
chk() {	# WHAT ERE
	local v
	v=$(msum "$2")
	if [ "$v" -gt 0 ]; then ok "$1: counter $2 = $v"; else bad "$1: counter $2 did not move"; fi
}
chk "930 idle connections" '"per_source_cap"|"idle_timeout"'
chk "60 stalled 1 MiB fragments" '"record_timeout"'
chk "9 clients not reading" '"write_timeout"|"evicted"'
chk "20 000 REPLY records" '"not_a_call"'
chk "5 000 copies of one XID" '"dropped_in_flight"|"resent_same_xid"'
chk "POST /metrics 400 MiB, 200 MiB header line" 'admin.*("method"|"unserved")'

# Rate-limited logs: lines naming each attacker's address.
for a in 2 3 4 5 6 7 8; do
	n=$(grep -c "127\.0\.0\.$a\b" "$tmp/gw.log")
	echo "    log lines naming 127.0.0.$a: $n"
	if [ "$n" -le 300 ]; then ok "127.0.0.$a: $n log lines (rate-limited)"; else bad "127.0.0.$a: $n log lines"; fi
done
echo "    log lines suppressed: $(msum 'log_suppressed_total')"

peak=$(cat "$tmp/peak" 2>/dev/null || echo 0)
# workers = 0 (the default) names its count at start; one pool each
nw=$(sed -n 's/.*workers = 0: \([0-9]*\), one per .*/\1/p' "$tmp/gw.log" | head -n 1)
nw=${nw:-1}
bound=$((2 * q_rss + nw * 64 * 1024))
if [ "$peak" -le "$bound" ]; then
	ok "peak RSS $peak KiB <= 2 x quiet $q_rss KiB + $nw x 64 MiB pool = $bound KiB"
else
	bad "peak RSS $peak KiB > bound $bound KiB (quiet $q_rss KiB)"
fi
if kill -0 "$gw" 2>/dev/null && [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p_admin/healthz")" = 200 ]; then
	ok "daemon alive, /healthz 200"
else
	bad "daemon gone or unhealthy"; tail -20 "$tmp/gw.log"
fi
pkg_end
