#!/bin/bash
# Runs every benchmark binary ($BUILD/tests/bench/bench_*) in turn; each
# prints its own table.  Benchmarks are not tests: no pass/fail here.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
found=0
for b in "$BUILD"/tests/bench/bench_*; do
	[ -x "$b" ] || continue
	case "$b" in *.o|*.d) continue;; esac
	found=1
	echo "== $(basename "$b")"
	"$b" "$@"
	echo
done
[ "$found" -eq 1 ] || echo "run.sh: no benchmark built in $BUILD/tests/bench" >&2

# NFS over six paths in the Soft-RoCE guest (~10-15 min under TCG); writes
# docs/benchmarks.md and docs/bench.png.  BENCH_VM=0 skips it.
if [ "${BENCH_VM:-1}" != 0 ]; then
	echo "== vm_nfs_bench (qemu TCG guest)"
	tests/bench/vm_nfs_bench.sh --doc docs/benchmarks.md
fi

# RPC-with-TLS through the gateway: plaintext, TLS, TLS + kTLS (~3 min under
# TCG); writes its own section of docs/benchmarks.md.  BENCH_TLS=0 (or
# BENCH_VM=0) skips it.
if [ "${BENCH_VM:-1}" != 0 ] && [ "${BENCH_TLS:-1}" != 0 ]; then
	echo "== vm_tls_bench (qemu TCG guest)"
	tests/bench/vm_tls_bench.sh --doc docs/benchmarks.md
fi
