#!/bin/bash
# claim: benchmark (not a test): RPC-with-TLS cost through the gateway over RDMA to nfsd in the Soft-RoCE guest: gw-tlsclient's 4 KiB and 1 MiB WRITE + READ in plaintext, inside TLS without kTLS and inside TLS with kTLS; calls/s, MiB/s, gateway and client CPU per call and per MiB
#
#   gw-tlsclient --bench (NFSv3, one connection, one call at a time) --tcp, plain or TLS 1.3-->
#       rpcrdma-gw 127.0.0.1:20499 (tls = allowed) --rdma 10.99.0.1:20049--> nfsd (tmpfs)
#
# On the host: BUILD=build tests/bench/vm_tls_bench.sh [--doc FILE] boots the
# VM tier's guest and runs itself inside; the guest prints one "BENCH LABEL
# SIZE CALLS SECS CALLS/S MIB/S CLIENT-US/CALL GW-US/CALL GW-US/MIB" line per
# row and size (gw-tlsclient --bench) and "KTLS LABEL TX RX" (the gateway's
# tls_ktls_total after the row), and the host turns them into a table; with
# --doc it writes that table into FILE (docs/benchmarks.md from
# tests/bench/run.sh) between the markers "<!-- tls-bench begin -->" and
# "<!-- tls-bench end -->", appended at the end the first time: after
# vm_nfs_bench's "### Reading these numbers", whose rewrite keeps it.
# BENCH_TLS_SECS (5) per size and row, BENCH_TLS_ROUNDS (3) rounds of the
# three rows in turn, so that the host's drift touches each alike.
#
# kTLS off: the gateway asks OpenSSL for kTLS on every session; without the
# kernel's tls module OpenSSL goes on in user space.  The guest blocks the
# module (modprobe "install tls /bin/false", as the kernel would autoload it
# for TCP_ULP "tls") and unloads it for the TLS row, then loads it for the
# TLS+kTLS row; tls_ktls_total's growth shows which one each row got.
set -u

if [ "${VM_GUEST:-}" != 1 ]; then
	cd "$(dirname "$0")/../.." || exit 1
	export BUILD=${BUILD:-build}
	doc=
	[ "${1:-}" = --doc ] && doc=${2:?--doc FILE}
	why=$(tests/vm/run-vm.sh --probe) || { echo "vm_tls_bench: VM tier unavailable: $why" >&2; exit 1; }
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	t0=$(date +%s)
	out=$(mktemp)
	VM_TIMEOUT=${VM_TIMEOUT:-900} tests/vm/run-vm.sh tests/bench/vm_tls_bench.sh \
		"BENCH_TLS_SECS=${BENCH_TLS_SECS:-5}" "BENCH_TLS_ROUNDS=${BENCH_TLS_ROUNDS:-3}" | tee "$out"
	rc=${PIPESTATUS[0]}
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	secs=$(($(date +%s) - t0))
	table=$(awk '
		# Rows "LABEL.ROUND": the rounds of a label are summed (calls, seconds,
		# CPU), their rates listed (the guest also shows the client output, indented).
		/^BENCH / { r = $2; sub(/\.[0-9]+$/, "", r) }
		/^BENCH / && $3 == 4096 {
			c4[r] += $4; t4[r] += $5; g4[r] += $9 * $4; k4[r] += $8 * $4; n[r] = 1
			if ($9 < 0) bad = 1
			rr4[r] = rr4[r] (rr4[r] == "" ? "" : ", ") sprintf("%.0f", $6)
		}
		/^BENCH / && $3 != 4096 {
			sz = $3 / 1048576; m[r] += $7 * $5; tm[r] += $5; gm[r] += $10 * $7 * $5; km[r] += $8 * $4
			rrm[r] = rrm[r] (rrm[r] == "" ? "" : ", ") sprintf("%.1f", $7)
		}
		/^KTLS / { r = $2; sub(/\.[0-9]+$/, "", r); tx[r] += $3; rx[r] += $4; ns[r]++ }
		END {
			split("plain tls tls-ktls", rows, " ")
			name["plain"] = "plaintext"; name["tls"] = "TLS (no kTLS)"; name["tls-ktls"] = "TLS + kTLS"
			print "| path | 4 KiB calls/s (each round) | gateway CPU µs/call | client CPU µs/call | " sz " MiB MiB/s (each round) | gateway CPU µs/MiB | client CPU µs/MiB | sessions on kTLS |"
			print "|---|---:|---:|---:|---:|---:|---:|---|"
			for (i = 1; i <= 3; i++) {
				r = rows[i]
				if (!(r in n) || m[r] <= 0) continue
				us[r] = g4[r] / c4[r]; usm[r] = gm[r] / m[r]
				kt = r == "plain" ? "-" : "tx " tx[r] ", rx " rx[r] " of " ns[r]
				printf "| %s | %.1f (%s) | %.0f | %.0f | %.2f (%s) | %.0f | %.0f | %s |\n", name[r], c4[r] / t4[r],
					rr4[r], us[r], k4[r] / c4[r], m[r] / tm[r], rrm[r], usm[r], km[r] / m[r], kt
			}
			if (!("plain" in n) || !("tls" in n) || !("tls-ktls" in n) || bad)
				exit
			printf "\nWhat TLS costs the gateway over plaintext (CPU, from the rows above): without kTLS %+.0f µs per 4 KiB call and %+.0f µs per MiB; with kTLS %+.0f µs per call and %+.0f µs per MiB.\n",
				us["tls"] - us["plain"], usm["tls"] - usm["plain"], us["tls-ktls"] - us["plain"],
				usm["tls-ktls"] - usm["plain"]
		}' "$out")
	echo
	echo "$table"
	if [ -n "$doc" ] && [ "$rc" = 0 ] && grep -q '^BENCH tls-ktls' "$out"; then
		rounds=$(grep -c '^BENCH plain\.[0-9]* 4096 ' "$out")
		sec=$(mktemp)
		{
			echo "<!-- tls-bench begin -->"
			echo "## RPC-with-TLS (tests/bench/vm_tls_bench.sh)"
			echo
			echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); whole run ${secs} s; host load (1/5/15 min) before: $load0, after: $load1"
			echo "- guest kernel: $(sed -n 's/^guest kernel: //p' "$out" | head -1); $(sed -n 's/^openssl: //p' "$out" | head -1)"
			echo
			echo "tests/tools/gw-tlsclient \`--bench ${BENCH_TLS_SECS:-5}\`: NFSv3 WRITE (FILE_SYNC) then READ of"
			echo "the same bytes, one call at a time on one connection, for ${BENCH_TLS_SECS:-5} s at 4 KiB and"
			echo "${BENCH_TLS_SECS:-5} s at 1 MiB, through one gateway (\`tls = allowed\`, server certificate"
			echo "only) over RDMA to nfsd; the plaintext row skips the AUTH_TLS probe (\`--plain\`). Calls"
			echo "count WRITEs and READs alike; MiB/s counts both directions. CPU: utime + stime of the"
			echo "gateway process (\`/proc/PID/stat\`, 10 ms ticks) and of the client (\`getrusage\`) over"
			echo "the row, ÷ calls or ÷ MiB moved. The three rows run in turn, $rounds rounds in one boot
(other VMs share the host's 2 cores: the rates of each round show the drift); the CPU
figures are over all rounds. TLS without kTLS: the guest's \`tls\` module"
			echo "unloaded and blocked; with kTLS: loaded (\`rpcrdma_gw_tls_ktls_total\` in the last column)."
			echo
			echo "$table"
			echo
			echo "<!-- tls-bench end -->"
		} >"$sec"
		if grep -q '^<!-- tls-bench begin -->' "$doc"; then
			awk -v f="$sec" '
				/^<!-- tls-bench begin -->/ { while ((getline l < f) > 0) print l; skip = 1; next }
				/^<!-- tls-bench end -->/ { skip = 0; next }
				!skip' "$doc" >"$doc.new" && mv "$doc.new" "$doc"
		else
			{ echo; cat "$sec"; } >>"$doc"
		fi
		rm -f "$sec"
		echo "vm_tls_bench: wrote the RPC-with-TLS section of $doc"
	fi
	rm -f "$out"
	exit "$rc"
fi

# --- inside the guest ---------------------------------------------------------
for a in "$@"; do	# run-vm.sh passes arguments, not the environment
	case $a in BENCH_TLS_*=*) export "${a?}" ;; esac
done
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/../vm/lib.sh"

SECS=${BENCH_TLS_SECS:-5}
ROUNDS=${BENCH_TLS_ROUNDS:-3}
PORT=20499
W=/tmp/tlsbench
pki=$W/pki
mkdir -p "$pki"
echo "guest kernel: $(uname -r)"
echo "openssl: $(openssl version | cut -d' ' -f1-2)"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=bench CA" \
	-keyout "$pki/ca.key" -out "$pki/ca.crt" -days 2 2>/dev/null || bed_fail "openssl: CA"
if ! openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=gateway.bench" \
	-addext "subjectAltName=DNS:gateway.bench" -keyout "$pki/gw.key" -out "$pki/gw.csr" 2>/dev/null ||
	! openssl x509 -req -in "$pki/gw.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
		-copy_extensions copy -days 2 -out "$pki/gw.crt" 2>/dev/null; then
	bed_fail "openssl: certificate"
fi

BED_NFSD_MAX_BLOCK=1048576 bed_nfsd_up
: >"$BED_EXPORT/tlsbench.bin"
chmod 666 "$BED_EXPORT/tlsbench.bin"
gw_conf "$PORT" "$W" gateway.tls=allowed "gateway.tls_cert=$pki/gw.crt" "gateway.tls_key=$pki/gw.key"
gw_port=$PORT
gw_out=$W
gw_run "127.0.0.1:$PORT (tls = allowed)" "path nfs/nfsd: transport rdma up"

ktls() { # tx|rx: the gateway's tls_ktls_total{dir}
	gw_metric "rpcrdma_gw_tls_ktls_total{dir=\"$1\"}"
}
# ktls_off: the tls module unloaded and blocked; ktls_on: loaded.
ktls_off() {
	echo "install tls /bin/false" >/etc/modprobe.d/zz-no-ktls.conf
	# (the last kTLS session holds the module until the gateway closes it)
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		if [ ! -d /sys/module/tls ] || modprobe -r tls 2>/dev/null; then
			break
		fi
		sleep 0.5
	done
	[ ! -d /sys/module/tls ] || step "tls is built in or busy: this TLS row may use kTLS too (see its KTLS line)"
}
ktls_on() {
	rm -f /etc/modprobe.d/zz-no-ktls.conf
	modprobe tls || step "no tls module: this TLS + kTLS row runs without kTLS"
}
row() { # LABEL CLIENT-ARGS...
	local label=$1 rc=0 tx0 rx0
	shift
	step "row $label: 4 KiB and 1 MiB WRITE + READ, $SECS s each"
	tx0=$(ktls tx)
	rx0=$(ktls rx)
	timeout $((SECS * 4 + 120)) "$BUILD/tools/gw-tlsclient" "$@" --bench "$SECS" --gw-pid "$gw_pid" \
		--label "$label" -n 1048576 127.0.0.1 "$PORT" "$BED_EXPORT" tlsbench.bin >"$W/$label.txt" 2>&1 || rc=$?
	sed 's/^/  /' "$W/$label.txt"
	assert_eq 0 "$rc" "gw-tlsclient --bench ($label)"
	grep '^BENCH ' "$W/$label.txt"
	[ "${label#plain}" != "$label" ] || echo "KTLS $label $(($(ktls tx) - tx0)) $(($(ktls rx) - rx0))"
}
# A warm-up (TCG translation, nfsd threads), not reported.
timeout 120 "$BUILD/tools/gw-tlsclient" --plain --bench 1 -n 1048576 127.0.0.1 "$PORT" "$BED_EXPORT" \
	tlsbench.bin >/dev/null 2>&1 || true
for i in $(seq "$ROUNDS"); do
	row "plain.$i" --plain
	ktls_off
	row "tls.$i" --ca "$pki/ca.crt"
	ktls_on
	row "tls-ktls.$i" --ca "$pki/ca.crt"
done
gw_alive
step "done"
