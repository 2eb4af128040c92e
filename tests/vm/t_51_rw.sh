#!/bin/bash
# claim: backend-rdma WRITEs then READs 1 B, 4095 B and 1 MiB through the kernel nfsd (inline, read chunk, position-zero read chunk, write chunk; MW and per-call MR registration) with SHA-256 unchanged, file contents on the server equal
#
#   rpcrdma-call --- WRITE (read chunk / inline / RDMA_NOMSG) --->  kernel nfsd
#                <-- READ reply (write chunk, lengths read back) --  tmpfs /srv/nfs
#          all over rxe0 on d0 (10.99.0.1); MOUNT and rpcbind over TCP
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

TOOL=${BUILD:-build}/tools/rpcrdma-call
out=/tmp/t51
mkdir -p "$out"

bed_nfsd_up

run() {
	local name=$1
	shift
	step "rpcrdma-call $*"
	local rc=0
	timeout 90 "$TOOL" "$@" >"$out/$name" 2>&1 || rc=$?
	sed 's/^/  /' "$out/$name"
	assert_eq 0 "$rc" "rpcrdma-call $* exit status"
}

for size in 1 4095 1048576; do
	run "mw-$size" "$BED_IP" "$BED_RDMA_PORT" rw "$BED_EXPORT" "f-mw-$size" "$size"
	assert_eq "$size" "$(stat -c %s "$BED_EXPORT/f-mw-$size")" "size on the server"
	# The tool fills the buffer from srandom(size); the server's copy must match.
	assert_eq "$(grep '^sha256 written' "$out/mw-$size" | awk '{print $3}')" \
		"$(sha256sum "$BED_EXPORT/f-mw-$size" | cut -d' ' -f1)" "sha256 of the server's file"
done
assert_grep 'WRITE 1 bytes at 0: inline' "$out/mw-1"
assert_grep 'WRITE 4095 bytes at 0: read chunk' "$out/mw-4095"
assert_grep 'WRITE [0-9]* bytes at 0: read chunk' "$out/mw-1048576"
assert_grep '^sha256 read' "$out/mw-1048576"

# Small DDP threshold: the 1-byte write goes in a read chunk (pad handling).
run "mw-1-ddp" --ddp-min 1 "$BED_IP" "$BED_RDMA_PORT" rw "$BED_EXPORT" f-ddp-1 1
assert_grep 'WRITE 1 bytes at 0: read chunk' "$out/mw-1-ddp"
# Long call without DDP items: RDMA_NOMSG with a position-zero read chunk.
run "nomsg-4095" --nomsg "$BED_IP" "$BED_RDMA_PORT" rw "$BED_EXPORT" f-nomsg 4095
assert_grep 'position-zero read chunk' "$out/nomsg-4095"
# Per-call MRs and segment splitting (64 KiB segments: 16 per MiB).
run "mr-1m" --mode mr --max-seg 65536 "$BED_IP" "$BED_RDMA_PORT" rw "$BED_EXPORT" f-mr 1048576
assert_grep 'registration mode mr' "$out/mr-1m"
run "mw-split" --max-seg 65536 "$BED_IP" "$BED_RDMA_PORT" rw "$BED_EXPORT" f-split 1048576
