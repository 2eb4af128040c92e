#!/bin/bash
# claim: a scenario that exits 3 in the guest makes run-vm.sh exit 3 on the host
# (tests/check.sh runs this first as "vm runner propagates failure"; it is
# not a t_*.sh scenario, so nothing else picks it up)
echo "selftest_fail: exiting 3 on purpose"
exit 3
