#!/bin/bash
# claim: a scenario that exits 3 in the guest makes run-vm.sh exit 3 on the host
# (tests/check.sh runs this first as "vm runner propagates failure and
# VM_APPEND"; it is not a t_*.sh scenario, so nothing else picks it up).  It
# also prints the guest's kernel parameters, where check.sh looks for the
# parameter it passed in VM_APPEND.
echo "selftest_fail: kernel parameters: $(cat /proc/cmdline)"
echo "selftest_fail: exiting 3 on purpose"
exit 3
