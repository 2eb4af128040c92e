#!/bin/bash
# claim: a client that writes every RPC record in small fragments (RFC 5531 section 11: any number) gets the same service through rpcrdma-gw as from nfsd directly: NFSv3 and NFSv4.0 WRITE and READ of 1 MiB (nfsd's max_block_size raised to it) sent in 2 KiB, 512 B and mixed 1..4096 B fragments go through the gateway over RDMA to nfsd, the server's file equals the data written, and the gateway keeps the connection; gw-fragclient connects from a reserved port (bindresvport_sa) and the gateway runs with secure_port = yes
#
#   gw-fragclient (tests/tools, records in N-byte fragments) --tcp--> rpcrdma-gw 127.0.0.1:20498
#       --rdma 10.99.0.1:20049--> kernel nfsd (tmpfs /srv/nfs)      (MOUNT over tcp to mountd)
#   control: the same client straight to nfsd on tcp 2049 (v4.0: no MOUNT needed)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

BUILD=${BUILD:-build}
PORT=20498
out=/tmp/t72
mkdir -p "$out"

BED_NFSD_MAX_BLOCK=1048576 bed_nfsd_up
gw_start "$PORT" "$out" gateway.secure_port=yes
SIZE=$(cat /proc/fs/nfsd/max_block_size)
assert_eq 1048576 "$SIZE" "nfsd's max_block_size"

frag_run() { # label port vers frag file
	local rc=0
	step "$1: NFSv$3 WRITE + READ of $SIZE bytes in fragments of $4 B (file $5)"
	: >"$BED_EXPORT/$5"
	chmod 666 "$BED_EXPORT/$5"
	timeout 180 "$BUILD/tools/gw-fragclient" -v "$3" -f "$4" -n "$SIZE" -s "$RANDOM" 127.0.0.1 "$2" \
		"$BED_EXPORT" "$5" "$out/$5.copy" >"$out/$5.txt" 2>&1 || rc=$?
	sed 's/^/  /' "$out/$5.txt"
	assert_eq 0 "$rc" "gw-fragclient exit status ($1, v$3, $4-byte fragments)"
	assert_same_file "$out/$5.copy" "$BED_EXPORT/$5"
}

# The client itself is right: nfsd takes the same fragments directly.
frag_run direct "$BED_NFS_PORT" 4.0 512 direct40.bin

for f in 2048 512 mixed; do
	frag_run gateway "$PORT" 3 "$f" "gw3-$f.bin"
	frag_run gateway "$PORT" 4.0 "$f" "gw40-$f.bin"
done

step "the gateway kept every connection and logged no error"
gw_alive
if grep -q 'ERROR: AddressSanitizer\|runtime error\|illegal_transition\|too_fragmented\|using the TCP fallback' "$gw_out/gw.log"; then
	gw_log_tail 20
	bed_fail "sanitizer report, a refused record or TCP fallback in the gateway log"
fi
step "PASS"
