// SPDX-License-Identifier: MIT
/*
 * This file contains the gateway glue of the NLM owner map (nlm_map.h):
 * the hooks gw_on_record and gw_call_complete call for NLM and NSM calls,
 * the map's own client (the UNLOCKs and UNSHAREs of a rebooted client go
 * through gw_on_record as its calls, and their replies end here), a
 * server's grant relayed to its client (nlm_grant.c), and a server's
 * reboot relayed to every client host (nlm_notify.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "call.h"
#include "chunking.h"
#include "client.h"
#include "config.h"
#include "ctx.h"
#include "log.h"
#include "nlm_grant.h"
#include "nlm_int.h"
#include "nlm_notify.h"
#include "nlm_share.h"
#include "pool.h"

/* ---- gateway glue: the UNLOCKs go through gw_on_record as the calls of
 * an internal client, and their replies end in nm_done_cb ---- */

static void nm_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gw_nlm *nm = arg;

	(void)fd;
	(void)what;
	while (nm->nm_ndone) {
		struct gw_out *o = nm->nm_done[--nm->nm_ndone];
		struct rpc_reply_hdr r;
		struct xdr_cur xc;
		struct xdr_span cookie = { 0, 0 };
		uint32_t stat = ~0u;
		char ck[4] = { 0 };
		bool share;

		xdr_cur_init(&xc, o->ou_iov, o->ou_niov);
		if (rpc_reply_decode(&xc, &r) && r.rr_stat == RPC_MSG_ACCEPTED &&
		    r.rr_accept_stat == RPC_SUCCESS && xdr_get_opaque(&xc, &cookie, NM_XDR_MAX))
			xdr_get_u32(&xc, &stat);
		share = cookie.xs_len == 4 && xdr_span_copy(&xc, &cookie, ck, 4) == 4 &&
			memcmp(ck, GW_NSH_COOKIE, 4) == 0;	/* an UNSHARE's, not an UNLOCK's */
		gw_stat_inc(nm->nm_st, stat != 0 ? GW_CTR_NLM_RELEASE_FAILED :
			    share ? GW_CTR_NLM_SHARE_RELEASED : GW_CTR_NLM_RELEASED);
		if (stat != 0)
			gw_warn(nm->nm_lg, "NLM: release %s answered %d", share ? "UNSHARE" : "UNLOCK",
				(int)stat);
		gw_on_out_done(nm->nm_cl, o);
	}
}

static void nm_deliver(void *arg, struct gw_out *o)
{
	struct gw_nlm *nm = arg;

	/* Never finalize from here (a transport callback): from the loop. */
	if (nm->nm_ndone < sizeof(nm->nm_done) / sizeof(nm->nm_done[0]))
		nm->nm_done[nm->nm_ndone++] = o;
	if (nm->nm_ev)
		event_active(nm->nm_ev, 0, 0);
	else
		nm_done_cb(-1, 0, nm);
}

static void nm_update(void *arg) { (void)arg; }

static void nm_info(void *arg, struct gw_client_info *ci)
{
	(void)arg;
	snprintf(ci->gci_name, sizeof(ci->gci_name), "nlm-release");
}

static const struct gw_client_ops nm_client_ops = {
	.cop_deliver = nm_deliver, .cop_update = nm_update, .cop_info = nm_info,
};

static bool nm_send(void *arg, const uint8_t *msg, size_t len)
{
	struct gw_nlm *nm = arg;
	struct gw_ctx *gw = nm->nm_gw;
	struct gw_buf *b;
	struct gw_rec rec;

	/* Opened at the first release, so a gateway whose clients never
	 * reboot lists no client of its own. */
	if (!nm->nm_cl)
		nm->nm_cl = gw_client_open(gw, &nm_client_ops, nm, "nlm-release",
					   0x4e4c4d0000000001ull);	/* never a socket's */
	if (!nm->nm_cl)
		return false;

	/* Bounded by nm_done: every UNLOCK in flight has its place there. */
	if (gw_client_ncalls(nm->nm_cl) + nm->nm_ndone >= sizeof(nm->nm_done) / sizeof(nm->nm_done[0]) ||
	    !gw_ctx_calls_avail(gw) || !(b = gw_buf_get(gw->gw_p.gp_pool)))
		return false;
	if (len > b->gb_size) {
		gw_buf_put(gw->gw_p.gp_pool, b);
		return false;
	}
	memcpy(b->gb_data, msg, len);	/* a few hundred bytes, once per reboot and lock */
	b->gb_used = (uint32_t)len;
	gw_rec_init(&rec);
	rec.rcd_iov[0] = (struct iovec){ b->gb_data, len };
	rec.rcd_buf[0] = b;
	rec.rcd_niov = 1;
	rec.rcd_len = len;
	return gw_on_record(nm->nm_cl, &rec) == 0;
}

int gw_nlm_attach(struct gw_ctx *gw)
{
	struct gw_nlm *nm = gw_nlm_new(gw->gw_p.gp_stats, gw->gw_p.gp_log);

	if (!nm)
		return -ENOMEM;
	nm->nm_gw = gw;
	if (gw->gw_p.gp_nworkers > 1)
		gw_nlm_set_slice(nm, gw->gw_p.gp_worker, gw->gw_p.gp_nworkers);
	nm->nm_names = gw->gw_p.gp_nlm_names;
	if (gw->gw_p.gp_base) {
		nm->nm_ev = event_new(gw->gw_p.gp_base, -1, 0, nm_done_cb, nm);
		nm->nm_ng = gw_ng_new(gw->gw_p.gp_base, gw->gw_p.gp_stats, gw->gw_p.gp_log);
		nm->nm_sn = gw_sn_new(gw->gw_p.gp_base, gw->gw_p.gp_stats, gw->gw_p.gp_log);
	}
	if (gw->gw_p.gp_base && (!nm->nm_ev || !nm->nm_ng || !nm->nm_sn)) {
		if (nm->nm_ev)
			event_free(nm->nm_ev);
		gw_ng_free(nm->nm_ng);
		gw_sn_free(nm->nm_sn);
		gw_nlm_free(nm);
		return -ENOMEM;
	}
	gw_nlm_set_sender(nm, nm_send, nm);
	nm->nm_pool = gw->gw_p.gp_pool;
	gw->gw_nlm = nm;
	return 0;
}

void gw_nlm_detach(struct gw_ctx *gw)
{
	struct gw_nlm *nm = gw->gw_nlm;

	if (!nm)
		return;
	nm->nm_ndone = 0;	/* their calls end with the client */
	if (nm->nm_cl)
		gw_client_close(nm->nm_cl);
	if (nm->nm_ev)
		event_free(nm->nm_ev);
	gw_ng_free(nm->nm_ng);
	gw_sn_free(nm->nm_sn);
	gw_nlm_free(nm);
	gw->gw_nlm = NULL;
}

/* The client's host: its name without ":port" ("[v6]:port" too), an
 * IPv4-mapped address as IPv4 (a dual-stack listener's peer is the same
 * host as that address's datagrams on the IPv4 NSM socket). */
static const char *nm_host_of(const struct gw_call *c, char *buf, size_t len)
{
	const char *n = gw_client_name(c->ca_cl), *colon = strrchr(n, ':');
	size_t l = colon ? (size_t)(colon - n) : strlen(n);

	if (n[0] == '[' && l >= 2 && n[l - 1] == ']') {
		n++;
		l -= 2;
	}
	if (l > 7 && strncmp(n, "::ffff:", 7) == 0 && memchr(n + 7, '.', l - 7)) {
		n += 7;
		l -= 7;
	}
	if (l >= len)
		l = len - 1;
	memcpy(buf, n, l);
	buf[l] = '\0';
	return buf;
}

/* The client's source port (a connection is named "address:port#id");
 * 65535 when its name has none. */
static unsigned nm_port_of(const struct gw_call *c)
{
	const char *colon = strrchr(gw_client_name(c->ca_cl), ':');
	char *end = NULL;
	unsigned long p = colon ? strtoul(colon + 1, &end, 10) : 65535;

	return colon && end != colon + 1 && (*end == '\0' || *end == '#') && p <= 65535 ?
	       (unsigned)p : 65535;
}

struct gw_ng *gw_nlm_grants(struct gw_nlm *nm)
{
	return nm->nm_ng;
}

struct gw_sn *gw_nlm_notifier(struct gw_nlm *nm)
{
	return nm->nm_sn;
}

/* Is host (an address) one of the servers?  Compared with the backends'
 * addresses as configured: a backend named by DNS name never matches. */
static bool nm_from_backend(const struct gw_ctx *gw, const char *host)
{
	if (strncmp(host, "::ffff:", 7) == 0 && strchr(host + 7, '.'))
		host += 7;	/* v4-mapped: the backend is written as IPv4 */
	for (unsigned i = 0; i < CFG_MAX_BACKENDS; i++)
		if (gw->gw_backends[i] && strcmp(gw->gw_backends[i]->bk_cfg->cb_host, host) == 0)
			return true;
	return false;
}

/* A GRANTED_MSG (XNFS NLM: the server grants a blocked lock, answer in
 * GRANTED_RES) sent by the server's lockd to the gateway, the host it knows:
 * for an owner the gateway mapped, restored and relayed to that client's
 * NLM service, answered here (void, as a _MSG call is).  Only a server may
 * grant: a client that forges a grant (GRANTED_MSG or GRANTED) could make
 * another client, or the server's host, believe it holds a lock, and no
 * host behind the gateway is a lock server the gateway's clients lock
 * at; so a grant from any other address is answered here and dropped.
 * A server's GRANTED_MSG for no mapped owner, and its GRANTED, go the
 * route as before. */
static enum gw_nlm_act nm_grant(struct gw_ctx *gw, struct gw_call *c, const char *from)
{
	struct gw_nlm *nm = gw->gw_nlm;
	uint32_t vers = c->ca_hdr.rc_vers;
	struct gw_nlm_alock a;
	struct gw_nlm_host *h;
	struct xdr_cur xc;
	char to[48];
	int32_t svid;

	if (!nm_from_backend(gw, from)) {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_GRANT_REFUSED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, from, "NLM: %s from %s, which is no "
			      "backend: dropped", c->ca_hdr.rc_proc == NM_GRANTED ? "GRANTED" :
			      "GRANTED_MSG", from);
		return c->ca_hdr.rc_proc == NM_GRANTED ? GW_NLM_NOLOCKS : GW_NLM_ANSWER;
	}
	if (c->ca_hdr.rc_proc == NM_GRANTED || !nm->nm_ng ||
	    !gw_nlm_call_alock(&c->ca_rec, c->ca_hdr.rc_args_pos, vers, NM_GRANTED_MSG, &xc, &a) ||
	    a.na_svid < 0 || ((uint32_t)a.na_svid >> GW_NLM_SVID_BITS) == 0)
		return GW_NLM_FORWARD;	/* no owner the gateway mapped */
	h = gw_nlm_owner(nm, a.na_svid, &svid);
	if (h) {
		gw_nlm_track(nm, h->nh_name, &a, &xc, vers, true);	/* released if the client reboots */
		snprintf(to, sizeof(to), "%s", h->nh_name);
	} else if (gw_nlm_names_get(nm->nm_names, ((uint32_t)a.na_svid >> GW_NLM_SVID_BITS) - 1, to,
				sizeof(to))) {
		/* another worker's client: relayed from here, not tracked */
		svid = (int32_t)((uint32_t)a.na_svid & NM_SVID_MASK);
	} else {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_GRANT_FAILED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, from, "NLM: GRANTED_MSG from %s for svid %#x: "
			      "no client holds it", from, (unsigned)a.na_svid);
		return GW_NLM_ANSWER;
	}
	gw_rec_put_be32(&c->ca_rec, a.na_svid_pos, (uint32_t)svid);
	gw_ng_relay(nm->nm_ng, to, vers, c->ca_rec.rcd_iov, c->ca_rec.rcd_niov, c->ca_rec.rcd_len);
	return GW_NLM_ANSWER;
}

/* ---- a server's reboot ---- */

/* SM_NOTIFY from a backend's address: the server rebooted (nsm.x: its
 * statd notifies each host its lockd monitored - the gateway only) and
 * its lockd lost every lock.  The gateway forgets the locks it tracked (a
 * later client reboot would release what the server no longer has; every
 * worker's, through the epoch) and notifies every client host in the
 * table (every worker's): each that sent a mapped NLM call and kept its
 * slot, not only those with tracked locks - a blocked lock, one granted on
 * another worker or past the tracking cap is held or awaited all the same,
 * and a host that monitors no such server ignores the call.  At most
 * GW_NLM_MAX_HOSTS, each once.  Their lockd then reclaims (LOCK with
 * reclaim set) through the gateway, mapped like any other call. */
static enum gw_nlm_act nm_server_reboot(struct gw_ctx *gw, struct xdr_cur *xc, const char *from)
{
	struct gw_nlm *nm = gw->gw_nlm;
	char mon[256], name[48];
	unsigned n = 0;
	int32_t state;

	if (!nm->nm_sn || !xc || !gw_sn_decode(xc, mon, sizeof(mon), &state)) {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_NOTIFY_FAILED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, from, "NLM: SM_NOTIFY from server %s "
			      "undecodable (or mon_name over 255 bytes): not relayed", from);
		return GW_NLM_ANSWER;
	}
	for (char *p = mon; *p; p++)
		if (*p < 0x21 || *p > 0x7e)
			*p = '?';	/* logged */
	gw_stat_inc(nm->nm_st, GW_CTR_NLM_SERVER_REBOOT);
	gw_nlm_forget_all(nm);
	if (nm->nm_names)
		nm->nm_epoch = __atomic_add_fetch(&nm->nm_names->nn_epoch, 1, __ATOMIC_ACQ_REL);
	for (unsigned i = 0; i < GW_NLM_MAX_HOSTS; i++) {
		if (nm->nm_names ? !gw_nlm_names_get(nm->nm_names, i, name, sizeof(name))
				 : !nm->nm_hosts[i].nh_used)
			continue;
		n += gw_sn_queue(nm->nm_sn, nm->nm_names ? name : nm->nm_hosts[i].nh_name, state);
	}
	gw_log_client(nm->nm_lg, CFG_LOG_WARN, from, "NLM: SM_NOTIFY from server %s (mon_name %s, "
		      "state %d): it rebooted and lost its locks; notifying %u client host(s) to "
		      "reclaim them", from, mon, (int)state, n);
	return GW_NLM_ANSWER;
}

/* SM_NOTIFY from host, source port port, arguments at xc (NULL: none):
 * from a backend's address the server rebooted - believed from a reserved
 * port only, as nfs-utils' sm-notify sends from one (bindresvport) and
 * only root on the server's host can; from another port it is refused,
 * answered AUTH_TOOWEAK (nfsd's answer to a request from an insecure port),
 * counted and logged, and acts on nothing.  GW_NLM_FORWARD: not a
 * server's. */
static enum gw_nlm_act nm_server_notify(struct gw_ctx *gw, const char *host, unsigned port,
					struct xdr_cur *xc)
{
	struct gw_nlm *nm = gw->gw_nlm;

	if (!nm_from_backend(gw, host))
		return GW_NLM_FORWARD;
	if (port >= 1024) {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_SERVER_NOTIFY_REFUSED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, host, "NLM: SM_NOTIFY from server %s, port %u "
			      "(not below 1024): not the server's statd; refused (AUTH_TOOWEAK), "
			      "nothing forgotten or relayed", host, port);
		return GW_NLM_TOOWEAK;
	}
	return nm_server_reboot(gw, xc, host);
}

enum gw_nlm_act gw_nlm_call(struct gw_ctx *gw, struct gw_call *c, struct xdr_cur *xc)
{
	const struct rpc_call_hdr *hdr = &c->ca_hdr;
	enum gw_nlm_act act;
	char host[48];

	if (!gw->gw_nlm || !c->ca_cl || c->ca_cl == gw->gw_nlm->nm_cl)
		return GW_NLM_FORWARD;
	gw_nlm_epoch_check(gw->gw_nlm);
	if (hdr->rc_prog == CFG_PROG_NLM &&
	    (hdr->rc_proc == NM_GRANTED_MSG || hdr->rc_proc == NM_GRANTED))
		return nm_grant(gw, c, nm_host_of(c, host, sizeof(host)));
	/* Only a server's reboot fans out; from anyone else it is that
	 * host's own (gw_nlm_on_call), or a client could make every other
	 * client re-send its locks. */
	if (hdr->rc_prog == CFG_PROG_NSM && hdr->rc_vers == 1 && hdr->rc_proc == NM_NSM_NOTIFY) {
		struct xdr_cur args;

		xdr_cur_init(&args, c->ca_rec.rcd_iov, c->ca_rec.rcd_niov);
		act = nm_server_notify(gw, nm_host_of(c, host, sizeof(host)), nm_port_of(c),
				       xdr_seek(&args, hdr->rc_args_pos) ? &args : NULL);
		if (act != GW_NLM_FORWARD)
			return act;
	}
	if (hdr->rc_prog == CFG_PROG_NLM && hdr->rc_vers >= 3 && hdr->rc_cred.oa_flavor ==
	    RPC_RPCSEC_GSS && (hdr->rc_proc == GW_NSH_PROC_SHARE || hdr->rc_proc == GW_NSH_PROC_UNSHARE)) {
		/* its body cannot be re-encoded under GSS (checksums, RFC 2203
		 * 5.3.2), and forwarded as it came its oh could be another's */
		gw_stat_inc(gw->gw_nlm->nm_st, GW_CTR_NLM_SHARE_REFUSED);
		return GW_NLM_REFUSE;
	}
	act = gw_nlm_on_call(gw->gw_nlm, nm_host_of(c, host, sizeof(host)), hdr->rc_prog,
			     hdr->rc_vers, hdr->rc_proc, &c->ca_rec, hdr->rc_args_pos);
	/* a SHARE's record may be a new one: xc (at the arguments) follows */
	xdr_cur_init(xc, c->ca_rec.rcd_iov, c->ca_rec.rcd_niov);
	xdr_seek(xc, hdr->rc_args_pos);
	return act;
}

enum gw_nlm_act gw_nlm_server_notify(struct gw_ctx *gw, const char *host, unsigned port,
				     struct xdr_cur *xc)
{
	if (!gw->gw_nlm)
		return GW_NLM_FORWARD;
	gw_nlm_epoch_check(gw->gw_nlm);
	return nm_server_notify(gw, host, port, xc);
}

void gw_nlm_host_rebooted(struct gw_ctx *gw, const char *host)
{
	if (!gw->gw_nlm)
		return;
	gw_nlm_epoch_check(gw->gw_nlm);
	gw_nlm_release_host(gw->gw_nlm, host, "SM_NOTIFY over UDP");
}

void gw_nlm_answer(struct gw_call *c, enum gw_nlm_act act)
{
	struct rpc_reply_hdr st = { .rr_stat = RPC_MSG_ACCEPTED, .rr_accept_stat = RPC_SUCCESS };
	uint8_t res[sizeof(c->ca_local) - 24];	/* after an accepted header, AUTH_NONE verifier */
	size_t n = 0;

	switch (act) {
	case GW_NLM_ANSWER:
		gw_call_local_reply(c, &st, GW_CTR_LOCAL_NLM_NOTIFY, NULL, 0);	/* void result */
		return;
	case GW_NLM_NOLOCKS:
		n = gw_nlm_nolocks_res(&c->ca_rec, c->ca_hdr.rc_args_pos, c->ca_hdr.rc_proc, res,
				       sizeof(res));
		if (n)
			break;
		st.rr_accept_stat = RPC_SYSTEM_ERR;	/* a _MSG form, a cookie too long to echo */
		gw_call_local_reply(c, &st, GW_CTR_LOCAL_SYSTEM_ERR, NULL, 0);
		return;
	case GW_NLM_FORWARD:
	case GW_NLM_REFUSE:
		st.rr_accept_stat = RPC_SYSTEM_ERR;
		gw_call_local_reply(c, &st, GW_CTR_LOCAL_SYSTEM_ERR, NULL, 0);	/* a SHARE refused */
		return;
	case GW_NLM_GARBAGE:
		st.rr_accept_stat = RPC_GARBAGE_ARGS;
		break;
	case GW_NLM_PROC_UNAVAIL:
		st.rr_accept_stat = RPC_PROC_UNAVAIL;
		break;
	case GW_NLM_TOOWEAK:	/* RFC 5531 9: the credential (here: the port) too weak */
		st = (struct rpc_reply_hdr){ .rr_stat = RPC_MSG_DENIED,
					     .rr_reject_stat = RPC_AUTH_ERROR,
					     .rr_auth_stat = RPC_AUTH_TOOWEAK };
		break;
	}
	gw_call_local_reply(c, &st, GW_CTR_LOCAL_NLM_REFUSED, res, n);
}

void gw_nlm_reply(struct gw_ctx *gw, struct gw_call *c, const struct iovec *iov, unsigned niov)
{
	const struct rpc_call_hdr *hdr = &c->ca_hdr;
	char host[48];

	if (!gw->gw_nlm || !c->ca_cl || c->ca_cl == gw->gw_nlm->nm_cl || hdr->rc_prog != CFG_PROG_NLM)
		return;
	gw_nlm_epoch_check(gw->gw_nlm);
	gw_nlm_on_reply(gw->gw_nlm, nm_host_of(c, host, sizeof(host)), hdr->rc_vers, hdr->rc_proc,
			&c->ca_rec, hdr->rc_args_pos, iov, niov);
}
