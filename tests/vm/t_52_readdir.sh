#!/bin/bash
# claim: backend-rdma lists a directory of 5000 files through the kernel nfsd with NFSv3 READDIR replies in a reply chunk (RDMA_NOMSG), every entry seen once
#
#   rpcrdma-call --- READDIR (count 65536, Reply chunk 69632 B offered) ---> kernel nfsd
#                <-- RDMA Write of the reply into the Reply chunk, RDMA_NOMSG --
#          rxe0 on d0 (10.99.0.1); /srv/nfs/d5000 made on the server's tmpfs
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

TOOL=${BUILD:-build}/tools/rpcrdma-call
out=/tmp/t52
mkdir -p "$out"

bed_nfsd_up
step "5000 files in $BED_EXPORT/d5000"
mkdir -p "$BED_EXPORT/d5000"
seq -f "$BED_EXPORT/d5000/file-with-a-longish-name-%05g" 1 5000 | xargs touch
assert_eq 5000 "$(find "$BED_EXPORT/d5000" -type f | wc -l)" "files made"

step "READDIR over RDMA"
rc=0
timeout 120 "$TOOL" --timeout 60 "$BED_IP" "$BED_RDMA_PORT" readdir "$BED_EXPORT" d5000 5000 \
	>"$out/log" 2>&1 || rc=$?
sed 's/^/  /' "$out/log"
assert_eq 0 "$rc" "rpcrdma-call exit status"
assert_grep 'READDIR reply: rdma proc NOMSG (reply chunk)' "$out/log"
assert_grep '^readdir: 5000 entries' "$out/log"
