// SPDX-License-Identifier: MIT
/*
 * This file contains the credential policy of client calls (authpol.h).
 *
 * The gateway reaches the server over RPC-over-RDMA, which nfsd treats as
 * coming from a privileged port, and with one identity for every client:
 * the server's own root_squash/all_squash then see the client's AUTH_SYS
 * credential as sent.  squash = root (uid 0 and gid 0 become anonuid and
 * anongid, in the group list too, as nfsd's root_squash) or all (every id)
 * rewrites the credential in the received record, in place: the same
 * length, so no byte of the call moves.  AUTH_SYS (RFC 5531 appendix A):
 *   stamp, machinename<255>, uid, gid, gids<16>
 */

#include "authpol.h"
#include "ctx.h"
#include "log.h"

static uint32_t ap_squash_id(enum cfg_squash sq, uint32_t id, uint32_t anon)
{
	if (sq == CFG_SQUASH_ALL || (sq == CFG_SQUASH_ROOT && id == 0))
		return anon;
	return id;
}

/* Rewrite the AUTH_SYS body of hdr in rec.  false: the body is not an
 * authsys_parms (rpc_auth_sys_decode). */
static bool ap_squash(const struct cfg_policy *pol, enum cfg_squash sq, struct gw_rec *rec,
		      const struct rpc_call_hdr *hdr, bool *changed)
{
	struct rpc_auth_sys as;
	struct xdr_cur xc;
	size_t at;

	xdr_cur_init(&xc, rec->rcd_iov, rec->rcd_niov);
	if (!rpc_auth_sys_decode(&xc, &hdr->rc_cred.oa_body, &as))
		return false;
	/* uid after the stamp and the padded machine name, then gid, the
	 * count, the gids */
	at = hdr->rc_cred.oa_body.xs_pos + 8 + ((as.as_namelen + 3) & ~3u);
	*changed = false;
	for (uint32_t i = 0; i < 2 + as.as_ngids; i++) {
		uint32_t v = i == 0 ? as.as_uid : i == 1 ? as.as_gid : as.as_gids[i - 2];
		uint32_t nv = ap_squash_id(sq, v, i == 0 ? pol->pol_anonuid : pol->pol_anongid);
		size_t off = at + 4 * i + (i >= 2 ? 4 : 0);

		if (nv != v) {
			gw_rec_put_be32(rec, off, nv);
			*changed = true;
		}
	}
	return true;
}

uint32_t gw_authpol_apply(const struct cfg *cf, const struct gw_client *cl, struct gw_rec *rec,
			  const struct rpc_call_hdr *hdr, struct gw_stats *st)
{
	/* A reload keeps the listeners (else it is refused): the index holds. */
	const struct cfg_policy *pol = &cf->cf_listeners[cl->gcl_listener < cf->cf_nlisteners
							 ? cl->gcl_listener : 0].li_pol;
	enum cfg_squash sq = cl->gcl_squash >= 0 ? (enum cfg_squash)cl->gcl_squash : pol->pol_squash;
	bool changed = false;

	switch (hdr->rc_cred.oa_flavor) {
	case RPC_AUTH_NONE:
		if (pol->pol_reject_auth_none && hdr->rc_proc != 0) {
			gw_stat_inc(st, GW_CTR_AUTHPOL_AUTH_NONE);
			return RPC_AUTH_TOOWEAK;
		}
		return RPC_AUTH_OK;
	case RPC_AUTH_SYS:
		if (sq == CFG_SQUASH_NONE)
			return RPC_AUTH_OK;
		if (!ap_squash(pol, sq, rec, hdr, &changed)) {
			gw_stat_inc(st, GW_CTR_AUTHPOL_BADCRED);
			return RPC_AUTH_BADCRED;
		}
		if (changed)
			gw_stat_inc(st, GW_CTR_AUTHPOL_SQUASHED);
		return RPC_AUTH_OK;
	default:	/* RPCSEC_GSS: the server authenticates it */
		return RPC_AUTH_OK;
	}
}
