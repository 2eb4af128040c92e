// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the backchannel decoders (chunking/nfs_cb.c):
 * a server's callback CALL (RFC 8167 backchannel, CB_COMPOUND/CB_SEQUENCE)
 * and a client's COMPOUND call/reply (SEQUENCE, CREATE_SESSION,
 * BIND_CONN_TO_SESSION), all untrusted.  The input is split in up to three
 * segments at positions taken from its first two bytes, so the decoders'
 * reads across iovec boundaries are exercised too.  Invariants: no decoder
 * reads out of bounds (ASan); each decoder answers the same for the split
 * message as for the same bytes in one buffer (result, fields, session
 * id); a decoded session id lands in the relay's session map
 * (gateway/callback.c) and is found again with its owner.
 */
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "callback.h"
#include "chunking.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_msg(const struct chk_cb_msg *x, const struct chk_cb_msg *y)
{
	return x->cm_xid == y->cm_xid && x->cm_prog == y->cm_prog && x->cm_vers == y->cm_vers &&
	       x->cm_proc == y->cm_proc && x->cm_minorversion == y->cm_minorversion &&
	       x->cm_has_sid == y->cm_has_sid &&
	       (!x->cm_has_sid || !memcmp(x->cm_sid, y->cm_sid, sizeof(x->cm_sid)));
}

/* A sid decoder on the split message and on one buffer: same answer. */
static void same_sid(bool (*dec)(const struct iovec *, unsigned, uint8_t *),
		     const struct iovec *iov, unsigned niov, const struct iovec *whole)
{
	uint8_t sid[CHK_NFS4_SESSIONID_SIZE] = { 0 }, sidw[CHK_NFS4_SESSIONID_SIZE] = { 0 };
	bool ok = dec(iov, niov, sid);

	if (ok != dec(whole, 1, sidw) || (ok && memcmp(sid, sidw, sizeof(sid))))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gw_cb_sessions *map;
	struct chk_cb_msg m, mw;
	struct iovec iov[3], whole;
	unsigned niov = 0;
	size_t a, b;
	int owner;

	if (size < 2)
		return 0;
	a = data[0] % (size - 1);
	b = a + data[1] % (size - 1 - a + 1);
	data += 2;
	size -= 2;
	if (a > size)
		a = size;
	if (b > size)
		b = size;
	if (a)
		iov[niov++] = (struct iovec){ (void *)data, a };
	if (b > a)
		iov[niov++] = (struct iovec){ (void *)(data + a), b - a };
	if (size > b)
		iov[niov++] = (struct iovec){ (void *)(data + b), size - b };
	whole = (struct iovec){ (void *)data, size };
	if (!map && !(map = gw_cbs_new(64)))
		__builtin_trap();

	if (chk_cb_parse_call(iov, niov, &m) != chk_cb_parse_call(&whole, 1, &mw) ||
	    !same_msg(&m, &mw))
		__builtin_trap();
	if (chk_cb_parse_call(iov, niov, &m) && m.cm_has_sid) {
		/* bound (or already ours): found with its owner, until it goes */
		if (gw_cbs_bind(map, m.cm_sid, &owner, 1) || gw_cbs_owner(map, m.cm_sid)) {
			if (gw_cbs_owner(map, m.cm_sid) != &owner)
				__builtin_trap();
			gw_cbs_owner_gone(map, &owner);
			if (gw_cbs_owner(map, m.cm_sid) != NULL)
				__builtin_trap();
		}
	}
	same_sid(chk_cb_parse_bind_reply, iov, niov, &whole);
	same_sid(chk_cb_parse_sequence, iov, niov, &whole);
	return 0;
}
