// SPDX-License-Identifier: MIT
/*
 * This file contains the SETCLIENTID half of the NFSv4.0 callback relay
 * (cb40_relay.c has the relay itself).  An NFSv4.0 client names its
 * callback service in SETCLIENTID (cb_program, cb_location: RFC 7530
 * 16.33) and the server connects there by itself (RFC 7530 3.3.3); at a
 * rack edge the server usually cannot reach the client.  With
 * v40_callbacks = relay the gateway rewrites cb_location to a listener of
 * its own (on the address it reaches the server from: RFC 5665 universal
 * address) and cb_program to a number of its own per client (the Linux
 * client always says 0x40000000, so the program is what tells clients
 * apart, CB_NULL included).  passthrough leaves cb_location alone; off
 * clears it, and the server then hands out no delegations (its CB_NULL
 * probe fails at once: nfsd marks the callback path down).
 *
 * Registrations: one per client id (the nfs_client_id4 string), in a table
 * of GW_CB40_REGS per worker.  A new id in a full table forgets a
 * registration: the least recently used of its own address once that
 * address holds GW_CB40_PER_SOURCE, else the least recently used of all,
 * so no address can push out more than its share of the others.
 *
 * The SETCLIENTID rewrite changes lengths inside the record: the call
 * (small) is copied once into a pool buffer, counted in copied_bytes.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cb40_int.h"
#include "client.h"
#include "ctx.h"
#include "pool.h"

#define GW_CB40_ID_MAX		1024	/* NFS4_OPAQUE_LIMIT */
#define GW_CB40_TAG_MAX		1024

/* ---- pure pieces ---- */

static bool cb40_string(struct xdr_cur *xc, char *out, size_t cap)
{
	struct xdr_span sp;

	if (!xdr_get_opaque(xc, &sp, (uint32_t)cap - 1))
		return false;
	xdr_span_copy(xc, &sp, out, cap - 1);
	out[sp.xs_len] = '\0';
	return strlen(out) == sp.xs_len;
}

bool gw_cb40_parse_setclientid(const struct iovec *iov, unsigned niov, struct gw_cb40_sci *s)
{
	uint8_t id[GW_CB40_ID_MAX];
	struct rpc_call_hdr h;
	struct xdr_span tag, sp;
	struct xdr_cur xc;
	uint32_t minor, nops, op;

	memset(s, 0, sizeof(*s));
	xdr_cur_init(&xc, iov, niov);
	/* COMPOUND4args: tag, minorversion, argarray; SETCLIENTID4args:
	 * verifier, id, cb_program, cb_location (r_netid, r_addr), ident */
	if (!rpc_call_decode(&xc, &h) || !xdr_get_opaque(&xc, &tag, GW_CB40_TAG_MAX) ||
	    !xdr_get_u32(&xc, &minor) || minor != 0 || !xdr_get_u32(&xc, &nops) || nops < 1 ||
	    !xdr_get_u32(&xc, &op) || op != CHK_OP_SETCLIENTID || !xdr_skip(&xc, 8) ||
	    !xdr_get_opaque(&xc, &sp, GW_CB40_ID_MAX))
		return false;
	xdr_span_copy(&xc, &sp, id, sizeof(id));
	s->sc4_idhash = 14695981039346656037ull;
	for (size_t i = 0; i < sp.xs_len; i++)
		s->sc4_idhash = (s->sc4_idhash ^ id[i]) * 1099511628211ull;
	s->sc4_prog_pos = xdr_pos(&xc);
	if (!xdr_get_u32(&xc, &s->sc4_prog))
		return false;
	s->sc4_loc_pos = xdr_pos(&xc);
	if (!cb40_string(&xc, s->sc4_netid, sizeof(s->sc4_netid)) ||
	    !cb40_string(&xc, s->sc4_addr, sizeof(s->sc4_addr)))
		return false;
	s->sc4_loc_end = xdr_pos(&xc);
	return xdr_get_u32(&xc, &s->sc4_ident);
}

size_t gw_cb40_rewrite(const struct gw_rec *r, const struct gw_cb40_sci *s, uint32_t prog,
		       const char *netid, const char *uaddr, uint8_t *out, size_t cap)
{
	size_t tail = r->rcd_len - s->sc4_loc_end;
	struct xdr_enc xe;

	if (s->sc4_loc_pos > cap || s->sc4_loc_end > r->rcd_len)
		return 0;
	gw_rec_copyout(r, 0, out, s->sc4_loc_pos);
	chk_put_be32(out + s->sc4_prog_pos, prog);
	xdr_enc_init(&xe, out + s->sc4_loc_pos, cap - s->sc4_loc_pos);
	if (!xdr_put_opaque(&xe, netid, (uint32_t)strlen(netid)) ||
	    !xdr_put_opaque(&xe, uaddr, (uint32_t)strlen(uaddr)) ||
	    s->sc4_loc_pos + xe.xe_len + tail > cap)
		return 0;
	gw_rec_copyout(r, s->sc4_loc_end, out + s->sc4_loc_pos + xe.xe_len, tail);
	return s->sc4_loc_pos + xe.xe_len + tail;
}

bool gw_cb40_uaddr_parse(const char *netid, const char *uaddr, struct sockaddr_storage *ss,
			 socklen_t *len)
{
	char host[GW_CB40_UADDR_MAX];
	const char *p2 = strrchr(uaddr, '.'), *p1;
	unsigned hi, lo;
	int n = 0;

	memset(ss, 0, sizeof(*ss));
	if (!p2 || p2 == uaddr)
		return false;
	for (p1 = p2 - 1; p1 > uaddr && *p1 != '.'; p1--)
		;
	if (*p1 != '.' || (size_t)(p1 - uaddr) >= sizeof(host) ||
	    sscanf(p1, ".%3u.%3u%n", &hi, &lo, &n) != 2 || p1[n] || hi > 255 || lo > 255)
		return false;
	memcpy(host, uaddr, (size_t)(p1 - uaddr));
	host[p1 - uaddr] = '\0';
	if (!strcmp(netid, "tcp")) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)(hi << 8 | lo));
		*len = sizeof(*sin);
		return inet_pton(AF_INET, host, &sin->sin_addr) == 1;
	}
	if (!strcmp(netid, "tcp6")) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)(hi << 8 | lo));
		*len = sizeof(*sin6);
		return inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1;
	}
	return false;
}

bool gw_cb40_uaddr_fmt(const struct sockaddr *sa, char *netid, char *uaddr)
{
	char host[INET6_ADDRSTRLEN];
	const void *a;
	uint16_t port;

	if (sa->sa_family == AF_INET) {
		a = &((const struct sockaddr_in *)sa)->sin_addr;
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
		strcpy(netid, "tcp");
	} else if (sa->sa_family == AF_INET6) {
		a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
		strcpy(netid, "tcp6");
	} else {
		return false;
	}
	if (!inet_ntop(sa->sa_family, a, host, sizeof(host)))
		return false;
	snprintf(uaddr, GW_CB40_UADDR_MAX, "%s.%u.%u", host, port >> 8, port & 0xff);
	return true;
}

bool gw_cb40_parse_reply(const struct iovec *iov, unsigned niov, uint64_t *clientid)
{
	struct rpc_reply_hdr rh;
	struct xdr_span tag;
	struct xdr_cur xc;
	uint32_t status, nres, op, opstatus;

	xdr_cur_init(&xc, iov, niov);
	/* COMPOUND4res: status, tag, resarray; SETCLIENTID4resok: clientid, verifier */
	return rpc_reply_decode(&xc, &rh) && rh.rr_stat == RPC_MSG_ACCEPTED &&
	       rh.rr_accept_stat == RPC_SUCCESS && xdr_get_u32(&xc, &status) && status == 0 &&
	       xdr_get_opaque(&xc, &tag, GW_CB40_TAG_MAX) && xdr_get_u32(&xc, &nres) && nres >= 1 &&
	       xdr_get_u32(&xc, &op) && op == CHK_OP_SETCLIENTID && xdr_get_u32(&xc, &opstatus) &&
	       opstatus == 0 && xdr_get_u64(&xc, clientid);
}

/* ---- the context's side ---- */

struct gw_cb40 *gw_cb40_new(struct gw_ctx *gw)
{
	struct gw_cb40 *c4 = calloc(1, sizeof(*c4));

	if (!c4)
		return NULL;
	c4->c4_gw = gw;
	for (unsigned i = 0; i < GW_CB40_REGS; i++)
		c4->c4_reg[i].r4_c4 = c4;
	if (!gw_cb40_relay_init(c4)) {
		free(c4);
		return NULL;
	}
	return c4;
}

void gw_cb40_free(struct gw_cb40 *c4)
{
	if (!c4)
		return;
	gw_cb40_relay_close(c4);
	free(c4);
}

bool gw_cb40_addr16(const struct sockaddr *sa, uint8_t out[16])
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff };

	if (sa->sa_family == AF_INET) {
		memcpy(out, v4map, sizeof(v4map));
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return true;
	}
	return false;
}

/*
 * Where the server calls back: the source address the host uses toward
 * the backend (a UDP connect sends nothing) with the port of the relay's
 * listener on it; every address the backend resolves to is admitted on
 * the listeners from now on.  The name is resolved here, on the loop: a
 * backend named by address (the common case) costs no lookup.
 */
static bool cb40_our_uaddr(struct gw_cb40 *c4, const struct gw_path *pa, char *netid,
			   char *uaddr)
{
	const struct cfg_backend *bk = pa->pa_backend->bk_cfg;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	bool ok = false;
	int fd;

	if (getaddrinfo(bk->cb_host, "2049", &hints, &ai) != 0 || !ai)
		return false;
	for (const struct addrinfo *p = ai; p; p = p->ai_next)
		gw_cb40_peer_add(c4, p->ai_addr);
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
	    getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 && gw_cb40_listen(c4, &ss, sl))
		ok = gw_cb40_uaddr_fmt((struct sockaddr *)&ss, netid, uaddr);
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return ok;
}

/* A number in the transient range no registration had in this slot last
 * (RFC 5531 A.4): the slot in its low bits, random bits above. */
static uint32_t cb40_new_prog(const struct gw_cb40 *c4, const struct gw_cb40_reg *rg)
{
	uint32_t slot = (uint32_t)(rg - c4->c4_reg), r, prog;

	do {
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint32_t)gw_now_ms() ^ (uint32_t)c4->c4_clock * 2654435761u;
		prog = GW_CB40_PROG_BASE +
		       (((r << GW_CB40_REGS_BITS) | slot) & (GW_CB40_PROG_SPAN - 1));
	} while (prog == rg->r4_prog);
	return prog;
}

/* The slot a new client id from src takes: a free one, else the least
 * recently used of src's own once src holds GW_CB40_PER_SOURCE, else the
 * least recently used of all. */
static struct gw_cb40_reg *cb40_reg_slot(struct gw_cb40 *c4, const uint8_t src[16])
{
	struct gw_cb40_reg *any = NULL, *own = NULL;
	unsigned nown = 0;

	for (unsigned i = 0; i < GW_CB40_REGS; i++) {
		struct gw_cb40_reg *rg = &c4->c4_reg[i];

		if (!rg->r4_used)
			return rg;
		if (!any || rg->r4_stamp < any->r4_stamp)
			any = rg;
		if (!memcmp(rg->r4_src, src, 16)) {
			nown++;
			if (!own || rg->r4_stamp < own->r4_stamp)
				own = rg;
		}
	}
	return nown >= GW_CB40_PER_SOURCE ? own : any;
}

/* The client's entry (same id: same entry, same program), else a new one
 * (cb40_reg_slot). */
static struct gw_cb40_reg *cb40_register(struct gw_cb40 *c4, const struct gw_cb40_sci *s,
					 const struct gw_client *cl,
					 const struct sockaddr_storage *ss, socklen_t sl)
{
	const char *name = gw_client_name(cl);
	struct gw_cb40_reg *rg = NULL;
	uint8_t src[16] = { 0 };

	gw_client_src(cl, src);
	for (unsigned i = 0; i < GW_CB40_REGS && !rg; i++)
		if (c4->c4_reg[i].r4_used && c4->c4_reg[i].r4_idhash == s->sc4_idhash)
			rg = &c4->c4_reg[i];
	if (!rg) {
		rg = cb40_reg_slot(c4, src);
		if (rg->r4_used) {
			gw_stat_inc(ST(c4->c4_gw), GW_CTR_CB40_EVICTED);
			gw_log_client(LG(c4->c4_gw), CFG_LOG_WARN, name,
				      "SETCLIENTID from %s: no room for another v4.0 client id: "
				      "the least recently used%s (callbacks prog %#x to %s) forgotten",
				      name, memcmp(rg->r4_src, src, 16) ? "" : " of its own address",
				      rg->r4_prog, rg->r4_uaddr);
		}
		gw_cb40_reg_close(rg, GW_CTR_CB40_FAIL_FULL);
		rg->r4_prog = cb40_new_prog(c4, rg);
		rg->r4_used = true;
		rg->r4_idhash = s->sc4_idhash;
		rg->r4_clientid = 0;
	} else if (rg->r4_alen != sl || memcmp(&rg->r4_addr, ss, sl)) {
		gw_cb40_reg_close(rg, GW_CTR_CB40_FAIL_CONNECT);	/* moved: reconnect */
	}
	memcpy(rg->r4_src, src, 16);
	rg->r4_cprog = s->sc4_prog;
	rg->r4_addr = *ss;
	rg->r4_alen = sl;
	rg->r4_stamp = ++c4->c4_clock;
	snprintf(rg->r4_uaddr, sizeof(rg->r4_uaddr), "%s", s->sc4_addr);
	snprintf(rg->r4_name, sizeof(rg->r4_name), "%s", name);
	return rg;
}

enum cb40_aim { CB40_AIM_NONE, CB40_AIM_GIVEN, CB40_AIM_OWN, CB40_AIM_SELF };

/* a is an address of this host: loopback, or one a socket can bind to. */
static bool cb40_is_local(const uint8_t a[16])
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff }, lo6[16] = { [15] = 1 };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	bool local;
	int fd;

	if ((!memcmp(a, v4map, 12) && a[12] == 127) || !memcmp(a, lo6, 16))
		return true;
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memcpy(&s6.sin6_addr, a, 16);
	local = fd >= 0 && bind(fd, (struct sockaddr *)&s6, sizeof(s6)) == 0;
	if (fd >= 0)
		close(fd);
	return local;
}

/*
 * Where the relay may connect for a cb_location parsed into ss.  The
 * unspecified address or port 0 names no service (a client that wants no
 * callbacks).  cb_location is the client's own callback service (RFC 7530
 * §16.33), so a host other than the client's address as admitted becomes
 * that address at the named port: a client must not aim the gateway's
 * connections at other hosts.  On the gateway's own host (loopback, or a
 * client admitted from one of the host's addresses: the gateway's own
 * listener addresses) a port the gateway listens on is the gateway
 * itself, never a callback service (CB40_AIM_SELF).  A client without an
 * address (an adopted socket) keeps what it named.
 */
static enum cb40_aim cb40_aim(const struct gw_cb40 *c4, const struct gw_client *cl,
			      struct sockaddr_storage *ss, socklen_t *sl)
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff }, zero[16];
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	uint8_t a[16], own[16];
	uint16_t port = ss->ss_family == AF_INET ? sin->sin_port : sin6->sin6_port;
	enum cb40_aim aim = CB40_AIM_GIVEN;

	if (!gw_cb40_addr16((struct sockaddr *)ss, a) || !port || !memcmp(a, zero, 16) ||
	    (!memcmp(a, v4map, 12) && !memcmp(a + 12, zero, 4)))
		return CB40_AIM_NONE;
	if (gw_client_src(cl, own) && memcmp(a, own, 16)) {
		memset(ss, 0, sizeof(*ss));
		if (!memcmp(own, v4map, 12)) {
			sin->sin_family = AF_INET;
			sin->sin_port = port;
			memcpy(&sin->sin_addr, own + 12, 4);
			*sl = sizeof(*sin);
		} else {
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = port;
			memcpy(&sin6->sin6_addr, own, 16);
			*sl = sizeof(*sin6);
		}
		memcpy(a, own, 16);
		aim = CB40_AIM_OWN;
	}
	if (gw_cb40_own_port(c4, ntohs(port)) && cb40_is_local(a))
		return CB40_AIM_SELF;
	return aim;
}

/* The new cb_program and cb_location of a SETCLIENTID, or false to leave
 * it as it is. */
static bool cb40_target(struct gw_cb40 *c4, struct gw_call *c, const struct gw_cb40_sci *s,
			uint32_t *prog, char *netid, char *uaddr)
{
	struct gw_ctx *gw = c4->c4_gw;
	enum cfg_v40cb mode = gw->gw_p.gp_cfg->cf_v40_callbacks;
	enum cb40_aim aim = CB40_AIM_GIVEN;
	struct sockaddr_storage ss;
	struct gw_cb40_reg *rg;
	bool parsed = false;
	socklen_t sl;

	if (mode == CFG_V40CB_PASSTHROUGH)
		return false;
	if (mode == CFG_V40CB_RELAY) {
		parsed = gw_cb40_uaddr_parse(s->sc4_netid, s->sc4_addr, &ss, &sl);
		if (parsed)
			aim = cb40_aim(c4, c->ca_cl, &ss, &sl);
	}
	if (aim == CB40_AIM_SELF) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_FAIL_SELF);
		gw_log_client(LG(gw), CFG_LOG_WARN, gw_client_name(c->ca_cl),
			      "SETCLIENTID from %s: callback %s %s is a port of the gateway's own: "
			      "cleared", gw_client_name(c->ca_cl), s->sc4_netid, s->sc4_addr);
	}
	if (mode == CFG_V40CB_OFF || aim == CB40_AIM_NONE || aim == CB40_AIM_SELF) {
		/* nfsd: no address, callback path down at once (no probe) */
		*prog = s->sc4_prog;
		netid[0] = uaddr[0] = '\0';
		gw_stat_inc(ST(gw), GW_CTR_CB40_CLEARED);
		return true;
	}
	if (!parsed || !cb40_our_uaddr(c4, c->ca_path, netid, uaddr)) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_FAIL_UNPARSED);
		gw_log_client(LG(gw), CFG_LOG_WARN, gw_client_name(c->ca_cl),
			      "SETCLIENTID from %s: callback %s %s not relayed: left as it is",
			      gw_client_name(c->ca_cl), s->sc4_netid, s->sc4_addr);
		return false;
	}
	if (aim == CB40_AIM_OWN) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_READDRESSED);
		gw_log_client(LG(gw), CFG_LOG_WARN, gw_client_name(c->ca_cl),
			      "SETCLIENTID from %s: callback host of %s %s is not the client's: "
			      "relayed to the client's own address", gw_client_name(c->ca_cl),
			      s->sc4_netid, s->sc4_addr);
	}
	rg = cb40_register(c4, s, c->ca_cl, &ss, sl);
	*prog = rg->r4_prog;
	gw_stat_inc(ST(gw), GW_CTR_CB40_REWRITTEN);
	gw_log_client(LG(gw), CFG_LOG_INFO, gw_client_name(c->ca_cl),
		      "SETCLIENTID from %s: callback %s %s prog %#x -> %s %s prog %#x",
		      gw_client_name(c->ca_cl), s->sc4_netid, s->sc4_addr, s->sc4_prog, netid,
		      uaddr, *prog);
	return true;
}

bool gw_cb40_on_call(struct gw_cb40 *c4, struct gw_call *c)
{
	struct gw_ctx *gw = c4->c4_gw;
	struct gw_pool *pool = gw->gw_p.gp_pool;
	char netid[GW_CB40_NETID_MAX], uaddr[GW_CB40_UADDR_MAX];
	struct gw_cb40_sci s;
	struct gw_buf *b;
	uint32_t prog;
	size_t n = 0;

	if (gw->gw_p.gp_cfg->cf_v40_callbacks == CFG_V40CB_PASSTHROUGH)
		return false;
	if (!gw_cb40_parse_setclientid(c->ca_rec.rcd_iov, c->ca_rec.rcd_niov, &s)) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_FAIL_UNPARSED);
		return false;
	}
	if (!cb40_target(c4, c, &s, &prog, netid, uaddr))
		return false;
	b = gw_buf_get(pool);
	if (b)
		n = gw_cb40_rewrite(&c->ca_rec, &s, prog, netid, uaddr, b->gb_data, b->gb_size);
	if (!n) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_FAIL_FULL);
		gw_log_client(LG(gw), CFG_LOG_WARN, gw_client_name(c->ca_cl),
			      "SETCLIENTID from %s: no buffer to rewrite it: left as it is",
			      gw_client_name(c->ca_cl));
		if (b)
			gw_buf_put(pool, b);
		return false;
	}
	b->gb_used = (uint32_t)n;
	gw_rec_release(pool, &c->ca_rec);
	c->ca_rec.rcd_niov = 1;
	c->ca_rec.rcd_len = n;
	c->ca_rec.rcd_iov[0] = (struct iovec){ b->gb_data, n };
	c->ca_rec.rcd_buf[0] = b;
	gw_stat_add(ST(gw), GW_CTR_BYTES_COPIED, n);
	return true;
}

void gw_cb40_on_reply(struct gw_cb40 *c4, struct gw_call *c, const struct iovec *iov,
		      unsigned niov)
{
	struct gw_ctx *gw = c4->c4_gw;
	struct gw_cb40_sci s;
	uint64_t clientid;

	if (gw->gw_p.gp_cfg->cf_v40_callbacks != CFG_V40CB_RELAY ||
	    !gw_cb40_parse_reply(iov, niov, &clientid) ||
	    !gw_cb40_parse_setclientid(c->ca_rec.rcd_iov, c->ca_rec.rcd_niov, &s))
		return;
	for (unsigned i = 0; i < GW_CB40_REGS; i++) {
		struct gw_cb40_reg *rg = &c4->c4_reg[i];

		if (rg->r4_used && rg->r4_prog == s.sc4_prog && rg->r4_clientid != clientid) {
			rg->r4_clientid = clientid;
			gw_log_client(LG(gw), CFG_LOG_INFO, gw_client_name(c->ca_cl),
				      "clientid %#llx: callbacks prog %#x relayed to %s",
				      (unsigned long long)clientid, rg->r4_prog, rg->r4_uaddr);
		}
	}
}
