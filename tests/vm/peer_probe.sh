#!/bin/bash
# claim: the reference peer of the booted kernel (VM_KERNEL) was probed: credits and private data of nfsd's svcrdma, invalidation of a 1 MiB READ, 256 concurrent NULLs, delegations on NFSv4.1 opens through rpcrdma-gw and nfsd's callback state, NFSv4.2 user xattrs through it
#
# This file contains a measurement, not a test (no t_ prefix: check.sh does
# not run it): it prints what the kernel nfsd does for the kernel the guest
# boots, so two kernels can be compared line by line:
#   VM_KERNEL=6.1  tests/vm/run-vm.sh tests/vm/peer_probe.sh
#   VM_KERNEL=6.12 tests/vm/run-vm.sh tests/vm/peer_probe.sh
# It fails only when a probe could not run at all.  docs/protocol.md
# ("Kernel 6.12 as a second peer") records the results.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

TOOL=${BUILD:-build}/tools/rpcrdma-call
PORT=20489
out=/tmp/probe
mkdir -p "$out"

step "kernel $(uname -r)"
bed_nfsd_up
bed_nfs_client_modules

probe_tool() {
	local name=$1
	shift
	step "rpcrdma-call $*"
	timeout 90 "$TOOL" "$@" >"$out/$name" 2>&1 || echo "  (exit $?)"
	grep -E '^(credits granted|server private data|inline thresholds|receives posted|concurrent|stats|READ|WRITE|NULL reply)' \
		"$out/$name" | sed 's/^/  /'
}
probe_tool rw "$BED_IP" "$BED_RDMA_PORT" rw "$BED_EXPORT" probe.bin 1048576
probe_tool conc "$BED_IP" "$BED_RDMA_PORT" concurrent 256
assert_grep '^credits granted' "$out/rw"

gw_start "$PORT" "$out"

cat >"$out/open.py" <<'PY'
import os, sys, time
path, how, flag = sys.argv[1:4]
fd = os.open(path, {"r": os.O_RDONLY, "w": os.O_WRONLY, "rw": os.O_RDWR}[how])
print("open", flush=True)
while not os.path.exists(flag):
    time.sleep(0.05)
os.close(fd)
PY
# Delegations nfsd hands out for one open of a file not changed recently.
deleg_lines() { cat /proc/fs/nfsd/clients/*/states 2>/dev/null | grep "type: deleg" | grep "$1" || true; }
gw_mount 4.1 /mnt/p41
# nfsd offers delegations only once the client's back channel is up.
bed_wait 20 "the session's back channel bound to the client's connection" \
	grep -q 'back channel on client' "$out/gw.log"
for how in r w rw; do
	echo "delegate $how" >"$BED_EXPORT/d-$how"
done
sleep 1 # nfsd refuses delegations on files changed very recently
for how in r w rw; do
	rm -f "$out/close"
	python3 "$out/open.py" "/mnt/p41/d-$how" "$how" "$out/close" >"$out/open-$how" &
	pid=$!
	bed_wait 10 "the $how open" grep -q open "$out/open-$how"
	for _ in $(seq 15); do	# up to 3 s for the delegation
		[ -z "$(deleg_lines "d-$how")" ] || break
		sleep 0.2
	done
	step "NFSv4.1 open ($how): delegations in nfsd's client states:"
	d=$(deleg_lines "d-$how")
	printf '%s\n' "${d:-(none)}" | while read -r l; do echo "  $l"; done
	touch "$out/close"
	wait "$pid"
done
step "nfsd's view of the client (callback state) and the gateway's backchannel counters"
cat /proc/fs/nfsd/clients/*/info 2>/dev/null | grep -iE 'callback|minor|name' | sed 's/^/  /' || true
for ev in calls replies dropped; do
	echo "  backchannel $ev: $(gw_metric "rpcrdma_gw_rdma_backchannel_total{backend=\"nfsd\",event=\"$ev\"}")"
done
echo "  callback replies relayed: $(gw_metric 'rpcrdma_gw_callbacks_total{event="relayed"}')"
grep -E 'callback|back channel' "$out/gw.log" | head -5 | sed 's/^/  gw: /' || true
timeout 60 umount /mnt/p41

gw_mount 4.2 /mnt/p42
step "NFSv4.2 user xattrs through the gateway (RFC 8276)"
echo x >"$BED_EXPORT/xa"
python3 - /mnt/p42/xa "$BED_EXPORT/xa" <<'PY' | sed 's/^/  /'
import os, sys
client, server = sys.argv[1:3]
try:
    os.setxattr(server, "user.local", b"1")
    print("server-side setxattr on the export: ok")
except OSError as e:
    print("server-side setxattr on the export:", e)
try:
    os.setxattr(client, "user.probe", b"through-the-gateway")
    print("setxattr: ok")
    print("getxattr:", os.getxattr(client, "user.probe"))
    print("listxattr:", os.listxattr(client))
    print("on the server:", os.getxattr(server, "user.probe"))
except OSError as e:
    print("xattr:", e)
PY
timeout 60 umount /mnt/p42
gw_stop
grep -E 'conn_established|credits' "$out/gw.log" | head -5 | sed 's/^/  gw: /'
gw_log_clean
