#!/bin/bash
# claim: RPC-with-TLS (RFC 9289) on the client leg: with tls = required and mutual TLS (tls_client_cert = require, tls_allow_identity), gw-tlsclient's AUTH_TLS probe gets STARTTLS, its TLS 1.3 handshake (ALPN sunrpc, client certificate) succeeds, and NFSv3 NULL, MOUNT, LOOKUP, a 1 MiB WRITE (FILE_SYNC) and its READ go inside TLS through the gateway over RDMA to nfsd, whose file equals the data written; so do NFSv4.1 EXCHANGE_ID (SP4_NONE), CREATE_SESSION, SEQUENCE+PUTROOTFH+GETATTR, OPEN (create) of a file, a 1 MiB WRITE (FILE_SYNC4) and its READ, CLOSE, DESTROY_SESSION and DESTROY_CLIENTID on a second mutual-TLS connection; plaintext on the required listener, TLS 1.2 only, no ALPN, a client certificate of another CA, an expired one and one outside tls_allow_identity are each refused and counted in tls_refused_total; kTLS use is reported, not required
#
#   gw-tlsclient (tests/tools: OpenSSL + record marking) --TLS over tcp--> rpcrdma-gw 127.0.0.1:20499
#       --rdma 10.99.0.1:20049--> kernel nfsd (tmpfs /srv/nfs)      (MOUNT over tcp to mountd)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

BUILD=${BUILD:-build}
PORT=20499
out=/tmp/t75
pki=$out/pki
mkdir -p "$pki"

# ---- certificates (openssl CLI, as docs/operations.md shows) ----
ec() { echo -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes; }
mkca() { # NAME CN
	# shellcheck disable=SC2046
	openssl req -x509 $(ec) -subj "/CN=$2" -keyout "$pki/$1.key" -out "$pki/$1.crt" -days 2 \
		2>/dev/null || bed_fail "openssl: CA $1"
}
mkcert() { # NAME CN CA DAYS
	# shellcheck disable=SC2046
	if ! openssl req $(ec) -subj "/CN=$2" -addext "subjectAltName=DNS:$2" -keyout "$pki/$1.key" \
		-out "$pki/$1.csr" 2>/dev/null ||
		! openssl x509 -req -in "$pki/$1.csr" -CA "$pki/$3.crt" -CAkey "$pki/$3.key" \
			-CAcreateserial -copy_extensions copy -days "$4" -out "$pki/$1.crt" 2>/dev/null; then
		bed_fail "openssl: certificate $1"
	fi
}
step "make a CA, a second CA, the gateway's certificate and five client certificates"
mkca ca "t75 CA"
mkca other "t75 other CA"
mkcert gw gateway.t75 ca 2
mkcert client1 client1.t75 ca 2
mkcert stranger client1.t75 other 2	# the allowed name, from a CA the gateway does not know
mkcert expired client1.t75 ca -1	# notAfter before now
mkcert nobody client9.t75 ca 2		# verifies, but not in tls_allow_identity

modprobe tls 2>/dev/null || step "no tls module: kTLS cannot be used (the gateway goes on without it)"
BED_NFSD_MAX_BLOCK=1048576 bed_nfsd_up
gw_conf "$PORT" "$out" gateway.tls=required "gateway.tls_cert=$pki/gw.crt" \
	"gateway.tls_key=$pki/gw.key" "gateway.tls_ca=$pki/ca.crt" gateway.tls_client_cert=require \
	"gateway.tls_allow_identity=client1.t75"
step "--check-config: the configuration and its files are fine"
"$BUILD/rpcrdma-gw" --check-config "$out/gw.conf" || bed_fail "--check-config refused the configuration"
sed "s|$pki/gw.key|$pki/client1.key|" "$out/gw.conf" >"$out/bad.conf"
if "$BUILD/rpcrdma-gw" --check-config "$out/bad.conf" 2>"$out/bad.txt"; then
	bed_fail "--check-config accepted a key that does not match the certificate"
fi
assert_grep "tls_key $pki/client1.key" "$out/bad.txt"
gw_port=$PORT
gw_out=$out
gw_run "127.0.0.1:$PORT (tls = required, mutual TLS)" "path nfs/nfsd: transport rdma up"

tls() { # ARGS...: gw-tlsclient against the gateway with the test CA
	timeout 180 "$BUILD/tools/gw-tlsclient" --ca "$pki/ca.crt" "$@"
}

step "mutual TLS: probe, handshake, NULL, MOUNT, LOOKUP, 1 MiB WRITE + READ inside TLS"
: >"$BED_EXPORT/tls.bin"
chmod 666 "$BED_EXPORT/tls.bin"
rc=0
tls --cert "$pki/client1.crt" --key "$pki/client1.key" -n 1048576 -s "$RANDOM" 127.0.0.1 "$PORT" \
	"$BED_EXPORT" tls.bin "$out/tls.copy" >"$out/ok.txt" 2>&1 || rc=$?
sed 's/^/  /' "$out/ok.txt"
assert_eq 0 "$rc" "gw-tlsclient exit status (mutual TLS)"
assert_grep "AUTH_TLS probe: STARTTLS" "$out/ok.txt"
assert_grep "TLS: TLSv1.3" "$out/ok.txt"
assert_same_file "$out/tls.copy" "$BED_EXPORT/tls.bin"
assert_eq 1 "$(gw_metric 'rpcrdma_gw_tls_total{event="handshake"}')" "TLS sessions established"
step "mutual TLS, NFSv4.1: NULL, EXCHANGE_ID, CREATE_SESSION, GETATTR, OPEN, 1 MiB WRITE + READ, CLOSE inside TLS"
rm -f "$BED_EXPORT/tls41.bin"
rc=0
tls --v41 --cert "$pki/client1.crt" --key "$pki/client1.key" -n 1048576 -s "$RANDOM" 127.0.0.1 "$PORT" \
	/ tls41.bin "$out/tls41.copy" >"$out/ok41.txt" 2>&1 || rc=$?
sed 's/^/  /' "$out/ok41.txt"
assert_eq 0 "$rc" "gw-tlsclient --v41 exit status (mutual TLS)"
assert_grep "AUTH_TLS probe: STARTTLS" "$out/ok41.txt"
assert_grep "TLS: TLSv1.3" "$out/ok41.txt"
for l in "EXCHANGE_ID: ok" "CREATE_SESSION: ok" "GETATTR: ok, root: type 2" "OPEN+GETFH: ok" \
	"NFSv4.1 WRITE: ok, 1048576 bytes" "NFSv4.1 READ: ok, 1048576 bytes" "CLOSE: ok" \
	"DESTROY_SESSION: ok" "DESTROY_CLIENTID: ok"; do
	assert_grep "$l" "$out/ok41.txt"
done
step "sha256 of the file on the server: $(sha256sum <"$BED_EXPORT/tls41.bin" | cut -c1-16)..."
assert_same_file "$out/tls41.copy" "$BED_EXPORT/tls41.bin"
assert_eq 2 "$(gw_metric 'rpcrdma_gw_tls_total{event="handshake"}')" "TLS sessions established"
step "kTLS: tx $(gw_metric 'rpcrdma_gw_tls_ktls_total{dir="tx"}'), rx $(gw_metric 'rpcrdma_gw_tls_ktls_total{dir="rx"}') of 2 sessions"

refused() { # REASON LABEL ARGS...: the gateway refuses, tls_refused_total{reason} + 1
	local reason=$1 label=$2 before after rc=0
	shift 2
	step "refused: $label"
	before=$(gw_metric "rpcrdma_gw_tls_refused_total{reason=\"$reason\"}")
	"$@" --expect-refused 127.0.0.1 "$PORT" >"$out/$reason.txt" 2>&1 || rc=$?
	sed 's/^/  /' "$out/$reason.txt"
	assert_eq 0 "$rc" "gw-tlsclient --expect-refused ($label)"
	after=$(gw_metric "rpcrdma_gw_tls_refused_total{reason=\"$reason\"}")
	assert_eq $((before + 1)) "$after" "tls_refused_total{reason=\"$reason\"}"
}
refused plaintext "plaintext call on tls = required (AUTH_TOOWEAK)" \
	timeout 60 "$BUILD/tools/gw-tlsclient" --plain
refused version "TLS 1.2 only" tls --tls12 --cert "$pki/client1.crt" --key "$pki/client1.key"
refused alpn "no ALPN" tls --no-alpn --cert "$pki/client1.crt" --key "$pki/client1.key"
refused client_cert "client certificate of another CA" \
	tls --cert "$pki/stranger.crt" --key "$pki/stranger.key"
refused client_cert "expired client certificate" tls --cert "$pki/expired.crt" --key "$pki/expired.key"
refused client_cert "no client certificate" tls
refused identity "client certificate outside tls_allow_identity" \
	tls --cert "$pki/nobody.crt" --key "$pki/nobody.key"

step "the gateway is alive, established two sessions and refused the rest"
gw_alive
assert_eq 2 "$(gw_metric 'rpcrdma_gw_tls_total{event="handshake"}')" "TLS sessions established"
assert_grep "TLS refused: client certificate not in tls_allow_identity" "$gw_out/gw.log"
if grep -q 'ERROR: AddressSanitizer\|runtime error\|illegal_transition' "$gw_out/gw.log"; then
	gw_log_tail 20
	bed_fail "sanitizer report or illegal transition in the gateway log"
fi
step "PASS"
