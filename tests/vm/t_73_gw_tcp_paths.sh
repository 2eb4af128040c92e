#!/bin/bash
# claim: two TCP paths of rpcrdma-gw to one server port (nfs and nfs_acl, both to nfsd's 2049) both connect, each from a reserved source port of its own, and a vers=3 mount through the gateway reads a file and asks its POSIX ACL (NFSACL GETACL) over them (the gateway with secure_port = yes admits the kernel client, which connects from a reserved port); before, both took port 1023 and the second looped on EADDRNOTAVAIL
#
#   kernel client (vers=3) --tcp--> rpcrdma-gw 127.0.0.1:20499 --tcp 10.99.0.1:2049 (nfs, source port A < 1024)--> nfsd
#                                                               --tcp 10.99.0.1:2049 (nfs_acl, port B < 1024, B != A)-->
#                                                               --tcp mountd (mount)-->
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

PORT=20499
out=/tmp/t73
mkdir -p "$out"

bed_nfsd_up
bed_nfs_client_modules
gw_start "$PORT" "$out" gateway.secure_port=yes gateway.log_level=info backend.port="$BED_NFS_PORT" nfs.transport=tcp \
	nfs_acl.transport=tcp
bed_wait 10 "the nfs_acl path up too" grep -q 'path nfs_acl/nfsd: transport tcp up' "$out/gw.log"

# Two per worker: every worker has its own connection per route.
nconn=$((2 * ${GW_WORKERS:-1}))
step "$nconn connections from the gateway to $BED_IP:$BED_NFS_PORT, reserved source ports, distinct"
bed_wait 10 "$nconn connections to $BED_IP:$BED_NFS_PORT" \
	sh -c "[ \$(ss -tnH state established 'dst $BED_IP:$BED_NFS_PORT' | wc -l) -ge $nconn ]"
ss -tnH state established "dst $BED_IP:$BED_NFS_PORT" | awk '{ print $3 }' | sed 's/.*://' | sort -n >"$out/ports"
sed 's/^/  source port /' "$out/ports"
assert_eq "$nconn" "$(wc -l <"$out/ports")" "gateway connections to nfsd's port"
assert_eq "$nconn" "$(sort -u "$out/ports" | awk '$1 < 1024' | wc -l)" "distinct reserved source ports"

step "vers=3 mount through the gateway: read a file, its ACL"
echo "acl test" >"$BED_EXPORT/acl.txt"
gw_mount 3 /mnt/t73 nolock
assert_eq "acl test" "$(cat /mnt/t73/acl.txt)" "file read through the gateway"
# The client asks NFSACL for system.posix_acl_access; tmpfs has none set,
# so ENODATA is the answer; EOPNOTSUPP or a hang would mean no nfs_acl path.
timeout 30 python3 -c '
import errno, os, sys
try:
    os.getxattr(sys.argv[1], "system.posix_acl_access")
    print("acl: present")
except OSError as e:
    if e.errno != errno.ENODATA:
        raise
    print("acl: none (ENODATA)")' /mnt/t73/acl.txt >"$out/acl" 2>&1 || bed_fail "ACL query through the gateway: $(cat "$out/acl")"
sed 's/^/  /' "$out/acl"
umount /mnt/t73
gw_alive
gw_log_clean
if grep -q 'Cannot assign requested address' "$out/gw.log"; then
	gw_log_tail 20
	bed_fail "a source port collision in the gateway log"
fi
step "PASS"
