// SPDX-License-Identifier: MIT
/* XDR builders for backchannel test messages (cb_enc.h). */
#include "chunking.h"
#include "cb_enc.h"

void cbe_32(struct cbe_buf *w, uint32_t v)
{
	chk_put_be32(w->b + w->n, v);
	w->n += 4;
}
void cbe_sid(struct cbe_buf *w, uint8_t seed)
{
	for (unsigned i = 0; i < 16; i++)
		w->b[w->n++] = (uint8_t)(seed + i);
}
void cbe_call(struct cbe_buf *w, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	w->n = 0;
	cbe_32(w, xid), cbe_32(w, 0), cbe_32(w, 2), cbe_32(w, prog), cbe_32(w, vers), cbe_32(w, proc);
	cbe_32(w, 0), cbe_32(w, 0), cbe_32(w, 0), cbe_32(w, 0);	/* AUTH_NONE cred and verf */
}
void cbe_reply_ok(struct cbe_buf *w, uint32_t xid)
{
	w->n = 0;
	cbe_32(w, xid), cbe_32(w, 1), cbe_32(w, 0), cbe_32(w, 0), cbe_32(w, 0), cbe_32(w, 0);
}
/* CB_COMPOUND: tag "", minorversion, ident, CB_SEQUENCE(sid) + CB_RECALL */
void cbe_cb_compound(struct cbe_buf *w, uint32_t xid, uint32_t minor, uint8_t seed)
{
	cbe_call(w, xid, CBE_CB_PROG, 1, 1);
	cbe_32(w, 0), cbe_32(w, minor), cbe_32(w, 0), cbe_32(w, 2);
	if (minor) {
		cbe_32(w, 11);
		cbe_sid(w, seed);
		cbe_32(w, 1), cbe_32(w, 0), cbe_32(w, 0), cbe_32(w, 0), cbe_32(w, 0);
	}
	cbe_32(w, 4), cbe_32(w, 0);	/* CB_RECALL (args cut short: not decoded) */
}
/* COMPOUND reply with one op: CREATE_SESSION (flags) or BIND_CONN (dir) */
void cbe_bind_reply(struct cbe_buf *w, uint32_t xid, uint32_t op, uint32_t opstatus, uint8_t seed,
			uint32_t flags_or_dir)
{
	cbe_reply_ok(w, xid);
	cbe_32(w, opstatus), cbe_32(w, 0), cbe_32(w, 1), cbe_32(w, op), cbe_32(w, opstatus);
	if (opstatus)
		return;
	cbe_sid(w, seed);
	if (op == 43)
		cbe_32(w, 1);	/* csr_sequence */
	cbe_32(w, flags_or_dir);
	cbe_32(w, 0);
}
void cbe_seq_cs_reply(struct cbe_buf *w, uint32_t xid, uint8_t seed, uint32_t flags)
{
	cbe_reply_ok(w, xid);
	cbe_32(w, 0), cbe_32(w, 0), cbe_32(w, 2), cbe_32(w, 53), cbe_32(w, 0);
	cbe_sid(w, (uint8_t)(seed + 0x20));
	cbe_32(w, 7), cbe_32(w, 0), cbe_32(w, 3), cbe_32(w, 3), cbe_32(w, 0);
	cbe_32(w, 43), cbe_32(w, 0);
	cbe_sid(w, seed);
	cbe_32(w, 1), cbe_32(w, flags), cbe_32(w, 0);
}
struct iovec cbe_io(struct cbe_buf *w)
{
	return (struct iovec){ w->b, w->n };
}

