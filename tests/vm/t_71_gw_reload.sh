#!/bin/bash
# claim: a SIGHUP with a changed limit (calls_per_client 128 -> 2) takes effect while the kernel NFS client (vers=4.1) copies 128 MiB (dd, O_DIRECT, 4 MiB writes, fed through a FIFO so that it spans the reload) through rpcrdma-gw: gwctl status shows the new value, the client never has more calls in flight than that afterwards and its reading pauses at that cap, the copy ends intact (sha256 equal on the server side) and no client connection was accepted or closed meanwhile; a reload that adds backend nfsd2 with an RDMA route connects it (gwctl backends: up with credits), a reload that removes it drains it and it disappears; a file with an error is refused with file:line, so is a listen change (restart needed), and the running configuration stays
#
#   dd 128 MiB                    rpcrdma-gw 127.0.0.1:20497              kernel nfsd
#   /mnt/gw71 (vers=4.1) --tcp--> nfs/nfsd    --rdma 10.99.0.1:20049-->  tmpfs /srv/nfs
#                                 mount/nfsd  --tcp------------------->
#            SIGHUP + gw.conf -->  (+ acl/nfsd2 --rdma 20049--> by reload, then removed)
#   rpcrdma-gwctl -----unix-----> /run/rpcrdma-gw/control
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20497
MIB=128
out=/tmp/t71
CTL=${BUILD:-build}/rpcrdma-gwctl
mkdir -p "$out" /run/rpcrdma-gw

bed_nfsd_up
bed_nfs_client_modules
gw_start "$PORT" "$out"
conf=$out/gw.conf
cp_pid=
# On failure a hard mount whose gateway is gone would hang the guest's exit.
t71_cleanup() {
	local rc=$?
	if [ "$rc" != 0 ]; then
		[ -z "$cp_pid" ] || kill "$cp_pid" 2>/dev/null || true
		umount -f -l /mnt/gw71 2>/dev/null || true
	fi
	return "$rc"
}
trap 't71_cleanup; gw_stop; bed_on_exit' EXIT

ctl() { "$CTL" "$@"; }
jget() {	# JSON-COMMAND PY-EXPR -> value (python3 reads gwctl --json)
	ctl --json "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"
}
ctl_limit() {	# calls_per_client as gwctl status (text) shows it
	ctl status | sed -n 's/^limits: calls_per_client \([0-9]*\),.*/\1/p'
}
max_client_calls() {	# most calls in flight of one client now (gwctl clients, text)
	ctl clients | awk 'NR > 1 && $3 ~ /^[0-9]+$/ && $3 > m { m = $3 } END { print m + 0 }'
}
paused() {	# rpcrdma_gw_flow_control_total{cause="client_paused"}
	ctl metrics | awk '$1 == "rpcrdma_gw_flow_control_total{cause=\"client_paused\"}" { print $2 }'
}
conn_counter() {	# accepted|closed -> rpcrdma_gw_client_connections_total{event=...}
	ctl metrics | awk -v e="rpcrdma_gw_client_connections_total{event=\"$1\"}" '$1 == e { print $2 }'
}
# The configuration of gw_start (gw_conf) with extra [gateway] lines
# "KEY = VALUE" ($1) and extra sections ($2) appended; routes name their
# backend (required with two).
write_conf() {
	local -a opts=(nfs.backend=nfsd mount.backend=nfsd)
	local l
	while read -r l; do
		[ -z "$l" ] || opts+=("gateway.${l/ = /=}")
	done <<<"${1:-}"
	mkdir -p "$out/next"
	gw_conf "$PORT" "$out/next" "${opts[@]}"
	printf '%s\n' "${2:-}" >>"$out/next/gw.conf"
	mv "$out/next/gw.conf" "$conf"
}

bed_wait 10 "the control socket" test -S /run/rpcrdma-gw/control
assert_eq 128 "$(jget status 'd["limits"]["calls_per_client"]')" "calls_per_client at start"

step "mount vers=4.1 through the gateway; start copying $MIB MiB"
gw_mount 4.1 /mnt/gw71
head -c $((MIB << 20)) /dev/urandom >"$out/src.bin"
want=$(sha256sum "$out/src.bin" | cut -d' ' -f1)
accepted0=$(conn_counter accepted)
closed0=$(conn_counter closed)
echo "  client connections: accepted $accepted0, closed $closed0"
# The copy is one dd (O_DIRECT, 4 MiB writes: four 1 MiB WRITEs in parallel,
# so a cap of 2 must pause the client) reading a FIFO that this script feeds
# in three parts: A before the reload, B while the SIGHUP lands, C after the
# checks.  The copy therefore spans the reload by construction; a plain
# background cp raced the SIGHUP (page cache) and lost 2 of 4 loaded runs.
write_conf "calls_per_client = 2"	# read only at the SIGHUP below
mkfifo "$out/feed"
t0=$(bed_now)
dd if="$out/feed" of=/mnt/gw71/big.bin bs=4M iflag=fullblock oflag=direct status=none &
cp_pid=$!
exec 7>"$out/feed"
quarter=$((MIB / 16))	# in 4 MiB blocks
dd if="$out/src.bin" bs=4M count=$quarter status=none >&7
dd if="$out/src.bin" bs=4M skip=$quarter count=$quarter status=none >&7 &
feed_b=$!
step "SIGHUP with calls_per_client = 2 while the copy runs"
line=$(gw_reload)
t_reload=$(bed_now)
paused0=$(paused)
at=$(stat -c %s "$BED_EXPORT/big.bin")
echo "  $line"
echo "  the copy was at $((at >> 20)) of $MIB MiB on the server when the reload was applied, $(awk -v a="$t0" -v b="$t_reload" 'BEGIN { printf "%.1f", b - a }') s after it started"
case $line in *"applied"*) ;; *) bed_fail "reload not applied: $line" ;; esac
assert_eq 2 "$(ctl_limit)" "calls_per_client (gwctl status) after the reload, copy running"
wait "$feed_b"
kill -0 "$cp_pid" 2>/dev/null || bed_fail "the copy (dd) is gone before its last part was fed"
dd if="$out/src.bin" bs=4M skip=$((2 * quarter)) status=none >&7 &
exec 7>&-
# Calls admitted before the reload drain first: count samples from 1 s on.
maxc=0
samples=0
while kill -0 "$cp_pid" 2>/dev/null; do
	c=$(max_client_calls)
	if awk -v a="$t_reload" -v b="$(bed_now)" 'BEGIN { exit !(b - a > 1) }'; then
		[ "$c" -gt "$maxc" ] && maxc=$c
		samples=$((samples + 1))
	fi
done
rc=0
wait "$cp_pid" || rc=$?
assert_eq 0 "$rc" "dd exit status"
t1=$(bed_now)
echo "  copy of $MIB MiB took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; most calls in flight of one client after the reload: $maxc ($samples samples)"
[ "$samples" -gt 0 ] || bed_fail "no sample of the clients while the copy ran"
[ "$maxc" -le 2 ] || bed_fail "a client had $maxc calls in flight with calls_per_client = 2"
paused1=$(paused)
echo "  client reading paused at a cap: $((paused1 - paused0)) times after the reload"
[ "$paused1" -gt "$paused0" ] || bed_fail "the client was never paused at calls_per_client = 2"
assert_eq 1 "$(jget status 'd["reloads"]["applied"]')" "reloads applied"
sync
assert_file_sum "$BED_EXPORT/big.bin" "$want"
assert_eq "$accepted0" "$(conn_counter accepted)" "client connections accepted across the reload"
assert_eq "$closed0" "$(conn_counter closed)" "client connections closed across the reload"

step "reload adds backend nfsd2 with route acl (nfs_acl over rdma): it connects"
write_conf "calls_per_client = 2" "[backend nfsd2]
address = $BED_IP
credits = 16
[route acl]
program = nfs_acl
transport = rdma
backend = nfsd2"
line=$(gw_reload)
echo "  $line"
case $line in *"backends +1 -0, routes +1 -0"*) ;; *) bed_fail "unexpected reload result: $line" ;; esac
bed_wait 30 "acl/nfsd2 up with its credits in gwctl backends" \
	sh -c "'$CTL' backends | grep -Eq '^acl/nfsd2 +nfsd2 +rdma +up .* 0:up credits [1-9]'"
ctl backends | sed 's/^/  /'
grep -Eq '^nfs/nfsd +nfsd +rdma +up ' <(ctl backends) || bed_fail "nfs/nfsd not up after adding nfsd2"

step "reload removes nfsd2: its path drains and disappears"
write_conf "calls_per_client = 2"
line=$(gw_reload)
echo "  $line"
case $line in *"backends +0 -1, routes +0 -1"*) ;; *) bed_fail "unexpected reload result: $line" ;; esac
bed_wait 15 "acl/nfsd2 gone from gwctl backends" sh -c "! '$CTL' backends | grep -q nfsd2"
assert_grep 'path acl/nfsd2: drained; transport closed' "$gw_out/gw.log"
assert_grep 'backend nfsd2: removed' "$gw_out/gw.log"
ctl backends | sed 's/^/  /'

step "a file with an error is refused with file:line; the running configuration stays"
write_conf "calls_per_client = 2" "[backend broken]
address = $BED_IP
credits = lots"
bad_line=$(grep -n 'credits = lots' "$conf" | cut -d: -f1)
line=$(gw_reload)
echo "  $line"
case $line in *"$conf:$bad_line: "*"keeping the running configuration"*) ;;
*) bed_fail "expected '$conf:$bad_line: ... keeping the running configuration', got: $line" ;; esac
ctl reload >"$out/ctl-reload" 2>&1 && bed_fail "gwctl reload of a bad file succeeded"
grep -q "$conf:$bad_line: " "$out/ctl-reload" || bed_fail "gwctl reload does not name $conf:$bad_line: $(cat "$out/ctl-reload")"
assert_eq 2 "$(jget status 'd["limits"]["calls_per_client"]')" "calls_per_client after the refused reload"

step "a listen change is refused (restart needed), counted"
write_conf "calls_per_client = 8
listen = 127.0.0.1:$((PORT + 1))"
line=$(gw_reload)
echo "  $line"
case $line in *"listen changed, which needs a restart"*) ;; *) bed_fail "listen change not refused: $line" ;; esac
assert_eq 2 "$(ctl_limit)" "calls_per_client after the refused listen change"
ctl metrics | grep '^rpcrdma_gw_reloads_total' | sed 's/^/  /'
v=$(ctl metrics | awk '$1 == "rpcrdma_gw_reloads_total{result=\"restart_needed\"}" { print $2 }')
assert_eq 1 "$v" "reloads_total{result=restart_needed}"
v=$(ctl metrics | awk '$1 == "rpcrdma_gw_reloads_total{result=\"invalid\"}" { print $2 }')
assert_eq 2 "$v" "reloads_total{result=invalid} (SIGHUP and gwctl reload)"

step "IO still goes through: write and read back 4 MiB"
head -c $((4 << 20)) /dev/urandom >"$out/small.bin"
cp "$out/small.bin" /mnt/gw71/small.bin
sync
echo 3 >/proc/sys/vm/drop_caches
assert_same_file "$out/small.bin" /mnt/gw71/small.bin
assert_same_file "$out/small.bin" "$BED_EXPORT/small.bin"
assert_eq "$accepted0" "$(conn_counter accepted)" "client connections accepted over the whole test"
timeout 60 umount /mnt/gw71
if grep -q 'ERROR: AddressSanitizer\|runtime error' "$gw_out/gw.log"; then
	bed_fail "sanitizer report in the gateway log"
fi
