#!/bin/bash
# claim: workers = 0 on a guest of two NUMA nodes: with no RDMA device naming a node the gateway runs a worker per vCPU on both; once a Soft-RoCE device sits on a NIC of node 1 it runs one worker, every thread of the daemon stays on node 1's CPU, its pool pages are on node 1, and NFS (vers=3 and 4.1) works through it with files unchanged
# vm-numa: 2
#
#   node 0: vCPU 0, 1 GiB                    node 1: vCPU 1, 1 GiB, PCI expander bridge
#   rxe0 on d0 (dummy, no node) <- nfsd      eth0 (virtio NIC) <- rxe1 (Soft-RoCE)
#
# A software RDMA device has no device of its own: the gateway takes the
# node of the netdev its `parent` names (gateway/worker.c).  NFS still goes
# over rxe0 (the bed's address); rxe1 only says where the RDMA device is.
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

GW_PORT=20490
out=/tmp/t83
mkdir -p "$out"

step "the guest: two NUMA nodes, vCPU 1 on node 1"
assert_eq 1 "$(cat /sys/devices/system/node/node1/cpulist)" "node 1's CPUs"
bed_nfsd_up
bed_nfs_client_modules

# Every thread's allowed CPUs, sorted and unique, one line.
gw_thread_cpus() {
	cat /proc/"$gw_pid"/task/*/status | sed -n 's/^Cpus_allowed_list:\s*//p' | sort -u | paste -sd' '
}

step "no RDMA device names a node: a worker per vCPU, threads on both"
gw_start_checked "$GW_PORT" "$out" gateway.workers=0 gateway.log_level=info backend.port="$BED_NFS_PORT"
assert_grep 'workers = 0: 2, one per core it may run on (no RDMA device names a NUMA node)' "$out/gw.log"
assert_eq "0-1" "$(gw_thread_cpus)" "the threads' CPUs"
gw_stop

step "rxe1 on eth0, a virtio NIC behind the PCI expander bridge of node 1"
modprobe virtio_net
bed_wait 10 "eth0" test -e /sys/class/net/eth0
assert_eq 1 "$(cat /sys/class/net/eth0/device/../numa_node)" "eth0's PCI function's node"
ip link set eth0 up
rdma link add rxe1 type rxe netdev eth0
assert_eq eth0 "$(cat /sys/class/infiniband/rxe1/parent)" "rxe1's parent"
[ ! -e /sys/class/infiniband/rxe1/device ] || bed_fail "rxe1 has a device of its own: this scenario expects none"

step "the device names node 1: one worker, every thread on vCPU 1"
gw_start_checked "$GW_PORT" "$out" gateway.workers=0 gateway.log_level=info backend.port="$BED_NFS_PORT"
assert_grep "workers = 0: 1, one per core of NUMA node 1 of RDMA device rxe1; the threads stay on that node's CPUs (1)" "$out/gw.log"
assert_eq 1 "$(gw_thread_cpus)" "the threads' CPUs"
gw_rw_files
gw_rw_check 3 /mnt/gw3
gw_rw_check 4.1 /mnt/gw41
assert_eq 1 "$(gw_thread_cpus)" "the threads' CPUs after the traffic"

step "the daemon's anonymous pages (pools, calls) are on node 1"
read -r n0 n1 < <(awk '/anon=/ { for (i = 1; i <= NF; i++) { if ($i ~ /^N0=/) a += substr($i, 4); if ($i ~ /^N1=/) b += substr($i, 4) } }
	END { print a + 0, b + 0 }' /proc/"$gw_pid"/numa_maps)
echo "  anonymous pages: node 0 $n0, node 1 $n1"
if [ "$n1" -eq 0 ] || [ "$n1" -lt $((9 * n0)) ]; then
	bed_fail "anonymous pages not on node 1: node 0 $n0, node 1 $n1 (want 90 % or more on node 1)"
fi
gw_alive
