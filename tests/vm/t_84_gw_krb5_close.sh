#!/bin/bash
# claim: a Kerberos client that makes nfsd close its connection (RPCSEC_GSS sequence numbers below the window or seen before) costs only itself through rpcrdma-gw: while a kernel client with sec=krb5 copies 64 MiB through the gateway, the offender's connection is closed at each such call, its malformed credentials (bad gss_proc, GSS version 0) get nfsd's own answers, the copy completes with its sha256 equal and no major timeout, and the gateway's shared RDMA connection is lost at most once (its repeats go on a connection of its own)
#
#   kernel client (sec=krb5, 127.0.0.1) ----tcp----\
#                                                   rpcrdma-gw 127.0.0.1:20499 --rdma--> nfsd (rpc.svcgssd)
#   gssbad.py (principal evil, from 127.0.0.2) -tcp-/         \--rdma (its own, once quarantined)
#   control: gssbad.py straight to nfsd over TCP (127.0.0.1:2049)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20499
out=/tmp/t84
REALM=GW.TEST
HOST=nfsgw.test
BIG_MIB=64
mkdir -p "$out"

bed_krb5_up "$out" "$REALM" "$HOST"
bed_nfsd_up
bed_nfs_client_modules
rpc.idmapd -f -v >"$out/idmapd.log" 2>&1 &
step "bed: export $BED_EXPORT with sec=krb5:sys; principal evil with its own keytab"
echo "$BED_EXPORT *(rw,fsid=0,no_root_squash,insecure,no_subtree_check,sync,sec=krb5:sys)" >/etc/exports
exportfs -ra
kadmin.local -q "addprinc -randkey evil" >>"$out/kdb.log" 2>&1
kadmin.local -q "ktadd -k $out/evil.keytab evil" >>"$out/kdb.log" 2>&1
export KRB5CCNAME=FILE:$out/evil.cc
kinit -k -t "$out/evil.keytab" "evil@$REALM" || bed_fail "kinit evil"
gw_start "$PORT" "$out"

# gssbad TARGET-PORT STEP...: the offender from 127.0.0.2, one line per step.
gssbad() {
	local port=$1
	shift
	timeout 300 python3 "$(dirname "$0")/gssbad.py" 127.0.0.1 "$port" 127.0.0.2 "nfs@$HOST" "$@" \
		2>>"$out/gssbad.err" || { sed 's/^/  gssbad: /' "$out/gssbad.err" >&2; return 1; }
}
# The steps, and the answer of the step named $2 in the output $1.
steps=(good:3 badproc0 badproc1 vers0 good:130 lowseq)
answer() { sed -n "s/^$2: //p" <<<"$1" | head -1; }

step "control: the offender straight to nfsd over TCP"
direct=$(gssbad "$BED_NFS_PORT" "${steps[@]}") || bed_fail "gssbad against nfsd: $direct"
sed 's/^/  nfsd: /' <<<"$direct"
assert_eq "closed" "$(answer "$direct" lowseq)" "nfsd's answer to a sequence number below its window"

step "test data: $BIG_MIB MiB random file"
head -c "${BIG_MIB}M" /dev/urandom >"$out/big"
dis0=$(gw_metric 'rpcrdma_gw_rdma_disconnects_total{backend="nfsd"}')
GW_HOST=$HOST gw_mount 4.1 /mnt/t84 sec=krb5
dmesg -c >/dev/null
step "the kernel client copies $BIG_MIB MiB through the gateway (background)"
cp "$out/big" /mnt/t84/big &
cp_pid=$!
bed_wait 60 "the copy under way" sh -c "[ \"\$(stat -c %s $BED_EXPORT/big 2>/dev/null || echo 0)\" -gt 0 ]"

step "the offender through the gateway, while the copy runs"
gw=$(gssbad "$PORT" "${steps[@]}" reconnect good:2 lowseq reconnect good:2 stale) ||
	bed_fail "gssbad through the gateway: $gw"
sed 's/^/  gw: /' <<<"$gw"
for s in badproc0 badproc1 vers0 lowseq; do
	assert_eq "$(answer "$direct" $s)" "$(answer "$gw" $s)" "the gateway's answer to $s (nfsd's)"
done
assert_eq "closed" "$(sed -n 's/^stale: //p' <<<"$gw")" "a sequence number seen before: connection closed"
assert_eq 2 "$(grep -c '^lowseq: closed' <<<"$gw")" "each low sequence number closes the offender"

step "the copy completes, equal, with no major timeout"
wait "$cp_pid" || bed_fail "cp of $BIG_MIB MiB through the gateway failed"
umount /mnt/t84
GW_HOST=$HOST gw_mount 4.1 /mnt/t84 sec=krb5
assert_same_file "$out/big" /mnt/t84/big
assert_same_file "$out/big" "$BED_EXPORT/big"
umount /mnt/t84
if dmesg | grep -E "not responding|timed out"; then
	bed_fail "the krb5 mount saw a major timeout"
fi

step "what the gateway logged of the closes"
grep -E "closed it with|the server closed the RDMA|of their own|connection [0-9]+ (lost|up)" \
	"$gw_out/gw.log" | cut -c1-240 | sed 's/^/  gw.log: /'
step "counters: the shared connection lost at most once, the offender kept apart"
dis1=$(gw_metric 'rpcrdma_gw_rdma_disconnects_total{backend="nfsd"}')
echo "  rdma_disconnects_total +$((dis1 - dis0)), server_closed_for_client_total" \
	"$(gw_metric rpcrdma_gw_server_closed_for_client_total)," \
	"isolated disconnects $(gw_metric 'rpcrdma_gw_rdma_isolated_disconnects_total{backend="nfsd"}')," \
	"quarantine entered $(gw_metric 'rpcrdma_gw_gss_quarantine_total{event="entered"}')," \
	"calls there $(gw_metric 'rpcrdma_gw_gss_quarantine_total{event="calls"}')"
[ $((dis1 - dis0)) -le 1 ] || bed_fail "the shared RDMA connection was lost $((dis1 - dis0)) times for one offending client"
[ "$(gw_metric rpcrdma_gw_server_closed_for_client_total)" -ge 3 ] ||
	bed_fail "server_closed_for_client_total should count the offender's three closes"
[ "$(gw_metric 'rpcrdma_gw_gss_quarantine_total{event="calls"}')" -ge 4 ] ||
	bed_fail "the offender's later calls should go on its own connection"
gw_alive
gw_log_clean leak failed-calls illegal-transition tcp-fallback
step "PASS"
