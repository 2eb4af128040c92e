// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the backchannel relay decoders (gateway/callback.c):
 * a server's callback CALL (RFC 8167 backchannel, CB_COMPOUND/CB_SEQUENCE)
 * and a client's COMPOUND call/reply (SEQUENCE, CREATE_SESSION,
 * BIND_CONN_TO_SESSION), all untrusted.  The input is split in up to three
 * segments at positions taken from its first two bytes, so the decoders'
 * reads across iovec boundaries are exercised too.  Invariants: no decoder
 * reads out of bounds (ASan), a decoded session id lands in the session map
 * and is found again with its owner.
 */
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "callback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gw_cb_sessions *map;
	uint8_t sid[GW_CB_SESSIONID_LEN];
	struct gw_cb_msg m;
	struct iovec iov[3];
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
	if (!map && !(map = gw_cbs_new(64)))
		__builtin_trap();

	if (gw_cb_parse_call(iov, niov, &m) && m.cm_has_sid) {
		/* bound (or already ours): found with its owner, until it goes */
		if (gw_cbs_bind(map, m.cm_sid, &owner, 1) || gw_cbs_owner(map, m.cm_sid)) {
			if (gw_cbs_owner(map, m.cm_sid) != &owner)
				__builtin_trap();
			gw_cbs_owner_gone(map, &owner);
			if (gw_cbs_owner(map, m.cm_sid) != NULL)
				__builtin_trap();
		}
	}
	memset(sid, 0, sizeof(sid));
	(void)gw_cb_parse_bind_reply(iov, niov, sid);
	(void)gw_cb_parse_sequence(iov, niov, sid);
	return 0;
}
