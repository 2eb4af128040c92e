// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the pre-TLS state machine of RPC-with-TLS
 * (frontend-tcp/fe_tls_pre.c: fe_tls_pre_record), what a client's first
 * bytes lead to on a listener with tls = off, allowed or required.  The
 * first input byte picks the mode (bits 0-1) and whether the connection
 * has calls in flight (bit 2); the rest is the client's byte stream, cut
 * into records as the receiver does (rm_dec_feed), each judged in turn
 * with "more" telling whether bytes follow it, until the connection would
 * leave plaintext (STARTTLS: then the next byte must open a TLS handshake
 * record, or fe_tls.c refuses it) or close.  Invariants:
 *  - off passes every record; required never passes one;
 *  - STARTTLS only for a well-formed probe (CALL, NULL procedure, empty
 *    AUTH_TLS credential, empty AUTH_NONE verifier), on a quiet connection
 *    with nothing behind it, and its reply is the RFC 9289 4.1 one: the
 *    call's XID, MSG_ACCEPTED, AUTH_NONE verifier "STARTTLS", SUCCESS;
 *  - REFUSE only on required, with MSG_DENIED, AUTH_ERROR, AUTH_TOOWEAK
 *    or AUTH_BADCRED for the call's XID; REFUSE and CLOSE give a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chunking.h"
#include "fe_tls.h"

#define FZ_MAX_RECORD	65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Word i of the record (0 past its end). */
static uint32_t fz_word(const uint8_t *rec, size_t len, size_t i)
{
	return 4 * i + 4 <= len ? chk_be32(rec + 4 * i) : 0;
}

static bool fz_is_probe(const uint8_t *rec, size_t len)
{
	/* xid, CALL, rpcvers, prog, vers, proc 0, AUTH_TLS, 0, AUTH_NONE, 0 */
	return len >= 40 && fz_word(rec, len, 1) == RPC_CALL && fz_word(rec, len, 5) == 0 &&
	       fz_word(rec, len, 6) == RPC_AUTH_TLS && fz_word(rec, len, 7) == 0 &&
	       fz_word(rec, len, 8) == RPC_AUTH_NONE && fz_word(rec, len, 9) == 0;
}

static void fz_judge(enum cfg_tls mode, bool quiet, const uint8_t *rec, size_t len, bool more,
		     bool *go_on)
{
	static const uint8_t starttls[] = { 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8,
					    'S', 'T', 'A', 'R', 'T', 'T', 'L', 'S', 0, 0, 0, 0 };
	uint8_t reply[FE_TLS_REPLY_MAX];
	struct iovec iov = { (void *)rec, len };
	enum fe_tls_reason why = FE_TLS_R__COUNT;
	size_t rl = 0;
	enum fe_tls_verdict v = fe_tls_pre_record(mode, &iov, 1, quiet, more, reply, &rl, &why);

	*go_on = v == FE_TLS_PASS;
	if (mode == CFG_TLS_OFF && v != FE_TLS_PASS)
		__builtin_trap();
	if (mode == CFG_TLS_REQUIRED && v == FE_TLS_PASS)
		__builtin_trap();
	switch (v) {
	case FE_TLS_PASS:
		if (rl != 0)
			__builtin_trap();
		break;
	case FE_TLS_STARTTLS:
		if (!fz_is_probe(rec, len) || !quiet || more || rl != 36 ||
		    (chk_be32(reply) & RM_LEN_MASK) != 32 || !(chk_be32(reply) & RM_LAST_FRAG) ||
		    memcmp(reply + 4, rec, 4) || memcmp(reply + 8, starttls, sizeof(starttls)))
			__builtin_trap();
		break;
	case FE_TLS_REFUSE: {
		uint32_t st = chk_be32(reply + 20);

		if (mode != CFG_TLS_REQUIRED || rl != 24 || memcmp(reply + 4, rec, 4) ||
		    fz_word(rec, len, 1) != RPC_CALL || chk_be32(reply + 8) != RPC_REPLY ||
		    chk_be32(reply + 12) != RPC_MSG_DENIED || chk_be32(reply + 16) != RPC_AUTH_ERROR ||
		    (st != RPC_AUTH_TOOWEAK && st != RPC_AUTH_BADCRED) || why >= FE_TLS_R__COUNT)
			__builtin_trap();
		break;
	}
	case FE_TLS_CLOSE:
		if (mode == CFG_TLS_OFF || why >= FE_TLS_R__COUNT)
			__builtin_trap();
		break;
	default:
		__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t rec[FZ_MAX_RECORD];
	enum cfg_tls mode;
	bool quiet, go_on = true;
	struct rm_dec d;
	size_t off = 1, len = 0;

	if (size < 1)
		return 0;
	mode = (enum cfg_tls)((data[0] & 3) % 3);
	quiet = !(data[0] & 4);
	rm_dec_init(&d, FZ_MAX_RECORD);
	while (off < size && go_on) {
		size_t consumed, dlen;
		bool done;

		if (rm_dec_feed(&d, data + off, size - off, &consumed, &dlen, &done) != RM_OK)
			return 0;	/* record above max_record: the receiver closes */
		if (dlen) {
			memcpy(rec + len, data + off, dlen);
			len += dlen;
		}
		off += consumed;
		if (!done)
			continue;
		fz_judge(mode, quiet, rec, len, off < size, &go_on);
		len = 0;
	}
	return 0;
}
