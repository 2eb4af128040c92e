#!/bin/bash
# claim: the kernel NFS client (vers=3, through rpcrdma-gw) writes 32 MiB with O_DIRECT while nfsd is down for 3 s and then back, once with the NFS route over RDMA and once over the TCP fallback; the gateway holds the calls meanwhile and sends them when nfsd is back, each file arrives with its sha256 unchanged and no I/O error reaches the client
#
#   dd 32 MiB --> /mnt/gw (vers=3) --tcp--> rpcrdma-gw 127.0.0.1:2049x --rdma 20049 / tcp 2049--> nfsd
#                                                    ^ calls held and re-sent     rpc.nfsd 0 ... rpc.nfsd 4
#
# Backend outage: calls in flight are re-sent on the new connection with the
# same gateway XID, new calls wait in the hold queue; nothing is turned into
# an RPC error (a client would map it to EIO).
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

out=/tmp/t62
mkdir -p "$out"

bed_nfsd_up
bed_nfs_client_modules

head -c $((32 << 20)) /dev/urandom >/tmp/big.bin
sum=$(sha256sum /tmp/big.bin | cut -d' ' -f1)

run_case() {
	local transport=$1 port=$2 mnt=/mnt/gw-$1 log=$out/$1/gw.log rc
	mkdir -p "$out/$transport"
	gw_start "$port" "$out/$transport" gateway.reconnect_interval=200ms "nfs.transport=$transport"
	gw_mount 3 "$mnt" nolock hard

	# Warm up (LOOKUP, GETATTR...) so the outage hits WRITEs.
	touch "$mnt/warm-$transport"
	step "[$transport] rpc.nfsd 0, then write 32 MiB with O_DIRECT in the background"
	rpc.nfsd 0
	rc=0
	timeout 300 dd if=/tmp/big.bin of="$mnt/big-$transport.bin" bs=256k oflag=direct \
		>"$out/cp-$transport.log" 2>&1 &
	local cp_pid=$!
	sleep 3
	step "[$transport] rpc.nfsd 4; rdma $BED_RDMA_PORT"
	rpc.nfsd 4
	echo "rdma $BED_RDMA_PORT" >/proc/fs/nfsd/portlist 2>/dev/null || true
	wait "$cp_pid" || rc=$?
	sed 's/^/  cp: /' "$out/cp-$transport.log"
	assert_eq 0 "$rc" "[$transport] dd exit status (an I/O error would fail it)"
	timeout 120 umount "$mnt"
	assert_file_sum "$BED_EXPORT/big-$transport.bin" "$sum"

	step "[$transport] SIGTERM"
	gw_stop
	grep -v 'rpcrdma-gw\[debug\]' "$log" | sed 's/^/  gw: /' | tail -30
	assert_grep 'counter backend_disconnects = ' "$log"
	assert_grep 'counter calls_held = ' "$log"
	grep -E 'counter (calls_held|backend_resent) ' "$log" | sed 's/^/  /'
	gw_log_clean failed-calls
}

run_case tcp 20491
run_case rdma 20492
