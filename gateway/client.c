// SPDX-License-Identifier: MIT
/*
 * This file contains the gateway's side of the client seam (client.h):
 * the clients the frontend registers, what each has in flight (counted
 * against its caps), the hold a full hold queue puts on it, and the
 * output items the gateway delivers to it.
 *
 * The gateway calls the frontend only through the client's ops table
 * (cop_deliver, cop_update, cop_info).  cop_update is not called while
 * the client is closing: the frontend is tearing the connection down.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "chunking.h"
#include "client.h"
#include "ctx.h"
#include "log.h"

/* ---- output items ---- */

void gw_out_set(struct gw_out *o, const struct iovec *msg, unsigned niov, uint32_t xid)
{
	size_t len = 0;

	for (unsigned i = 0; i < niov; i++)
		len += msg[i].iov_len;
	o->ou_iov = msg;
	o->ou_niov = niov;
	o->ou_len = len;
	rm_encode_hdr(o->ou_mark, (uint32_t)len, true);
	chk_put_be32(o->ou_mark + 4, xid);
}

unsigned gw_out_iov(const struct gw_out *o, struct iovec *iov, unsigned max)
{
	unsigned n = 0;
	size_t skip = 4;	/* the gateway XID: replaced by ou_mark[4..7] */

	if (max == 0)
		return 0;
	iov[n++] = (struct iovec){ (void *)o->ou_mark, sizeof(o->ou_mark) };
	for (unsigned i = 0; i < o->ou_niov && n < max; i++) {
		size_t l = o->ou_iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		iov[n++] = (struct iovec){ (uint8_t *)o->ou_iov[i].iov_base + skip, l - skip };
		skip = 0;
	}
	return n;
}

size_t gw_out_bytes(const struct gw_out *o)
{
	return o->ou_len < 4 ? 0 : o->ou_len + 4;
}

/* ---- clients ---- */

struct gw_client *gw_client_open(struct gw_ctx *gw, const struct gw_client_ops *ops, void *arg,
				 const char *name, uint64_t key)
{
	struct gw_client *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return NULL;
	cl->gcl_gw = gw;
	cl->gcl_ops = ops;
	cl->gcl_arg = arg;
	cl->gcl_name = name;
	cl->gcl_key = key;
	cl->gcl_gen = ++gw->gw_client_gens;	/* from 1: 0 is no client */
	cl->gcl_squash = -1;
	TAILQ_INIT(&cl->gcl_calls);
	gw_src_attach(gw->gw_srcs, cl, key);	/* its own, until its address is known */
	TAILQ_INSERT_TAIL(&gw->gw_clients, cl, gcl_link);
	gw->gw_nclients++;
	return cl;
}

void gw_client_close(struct gw_client *cl)
{
	struct gw_ctx *gw = cl->gcl_gw;
	struct gw_call *c;

	cl->gcl_closing = true;
	gw_relay_client_gone(gw->gw_relay, cl);
	while ((c = TAILQ_FIRST(&cl->gcl_calls)))
		gw_call_finalize(c, GW_END_CLIENT_GONE);	/* calls gw_client_call_remove() */
	gw_src_detach(gw->gw_srcs, cl);
	TAILQ_REMOVE(&gw->gw_clients, cl, gcl_link);
	gw->gw_nclients--;
	free(cl);
}

unsigned gw_client_ncalls(const struct gw_client *cl) { return cl->gcl_ncalls; }
size_t gw_client_bytes(const struct gw_client *cl) { return cl->gcl_bytes; }
bool gw_client_held(const struct gw_client *cl) { return cl->gcl_hold; }
const char *gw_client_name(const struct gw_client *cl) { return cl->gcl_name; }
uint64_t gw_client_key(const struct gw_client *cl) { return cl->gcl_key; }
uint64_t gw_client_gen(const struct gw_client *cl) { return cl->gcl_gen; }

void gw_client_set_policy(struct gw_client *cl, unsigned listener, int squash)
{
	cl->gcl_listener = listener;
	cl->gcl_squash = squash;
}

void gw_client_set_src(struct gw_client *cl, const uint8_t addr[16])
{
	struct gw_srcs *ss = cl->gcl_gw->gw_srcs;

	memcpy(cl->gcl_src, addr, sizeof(cl->gcl_src));
	cl->gcl_has_src = true;
	if (cl->gcl_ncalls)	/* set before the first call (fe_admit) */
		return;
	gw_src_detach(ss, cl);
	gw_src_attach(ss, cl, gw_src_addr_key(ss, addr));
}

bool gw_client_share_ok(struct gw_client *cl)
{
	return gw_src_may_read(cl->gcl_gw->gw_srcs, cl->gcl_src_ent);
}

bool gw_client_src(const struct gw_client *cl, uint8_t addr[16])
{
	if (cl->gcl_has_src)
		memcpy(addr, cl->gcl_src, sizeof(cl->gcl_src));
	return cl->gcl_has_src;
}

unsigned gw_ctx_nclients(const struct gw_ctx *gw) { return gw->gw_nclients; }

void gw_ctx_own_port(struct gw_ctx *gw, uint16_t port)
{
	if (gw->gw_nown_ports < sizeof(gw->gw_own_ports) / sizeof(gw->gw_own_ports[0]))
		gw->gw_own_ports[gw->gw_nown_ports++] = port;
}

unsigned gw_ctx_client_list(const struct gw_ctx *gw, struct gw_client_info *out, unsigned max)
{
	const struct gw_client *cl;
	unsigned n = 0;

	TAILQ_FOREACH(cl, &gw->gw_clients, gcl_link) {
		if (n < max) {
			struct gw_client_info *ci = &out[n];

			memset(ci, 0, sizeof(*ci));
			ci->gci_calls = cl->gcl_ncalls;
			ci->gci_bytes = cl->gcl_bytes;
			ci->gci_done = cl->gcl_done;
			ci->gci_done_bytes = cl->gcl_done_bytes;
			ci->gci_done_us = cl->gcl_done_us;
			cl->gcl_ops->cop_info(cl->gcl_arg, ci);
		}
		n++;
	}
	return n;
}

void gw_client_call_add(struct gw_client *cl, struct gw_call *c)
{
	c->ca_cl = cl;
	c->ca_client = cl->gcl_key;
	c->ca_src = cl->gcl_src_key;
	c->ca_owner = cl->gcl_gen;
	c->ca_bytes = c->ca_rec.rcd_len;
	TAILQ_INSERT_TAIL(&cl->gcl_calls, c, ca_cl_link);
	cl->gcl_ncalls++;
	cl->gcl_bytes += c->ca_bytes;
	gw_src_call_add(cl->gcl_gw->gw_srcs, cl->gcl_src_ent);
}

void gw_client_call_remove(struct gw_client *cl, struct gw_call *c)
{
	TAILQ_REMOVE(&cl->gcl_calls, c, ca_cl_link);
	cl->gcl_ncalls--;
	cl->gcl_bytes -= c->ca_bytes;
	c->ca_cl = NULL;
	/* First: cl and its source's other connections may read again. */
	gw_src_call_remove(cl->gcl_gw->gw_srcs, cl->gcl_src_ent);
	if (!cl->gcl_closing)
		cl->gcl_ops->cop_update(cl->gcl_arg);
}

void gw_client_deliver(struct gw_client *cl, struct gw_out *o)
{
	cl->gcl_ops->cop_deliver(cl->gcl_arg, o);
}

void gw_client_hold(struct gw_client *cl)
{
	if (cl->gcl_hold)
		return;
	cl->gcl_hold = true;
	cl->gcl_ops->cop_update(cl->gcl_arg);
}

void gw_clients_resume(struct gw_ctx *gw)
{
	struct gw_client *cl;

	TAILQ_FOREACH(cl, &gw->gw_clients, gcl_link)
		if (cl->gcl_hold) {
			cl->gcl_hold = false;
			cl->gcl_ops->cop_update(cl->gcl_arg);
		}
}

void gw_on_out_done(struct gw_client *cl, struct gw_out *o)
{
	if (o->ou_kind == GW_OUT_CALLBACK)
		gw_relay_out_done(cl->gcl_gw->gw_relay, o);
	else
		gw_call_finalize((struct gw_call *)((char *)o - offsetof(struct gw_call, ca_out)),
				 GW_END_REPLIED);
}
