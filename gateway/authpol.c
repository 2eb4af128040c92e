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
#include <string.h>

#include "authpol.h"
#include "log.h"

#define AP_MACHINE_MAX	255
#define AP_GIDS_MAX	16

static uint32_t ap_squash_id(const struct cfg *cf, uint32_t id, uint32_t anon)
{
	if (cf->cf_squash == CFG_SQUASH_ALL || (cf->cf_squash == CFG_SQUASH_ROOT && id == 0))
		return anon;
	return id;
}

/* Rewrite the AUTH_SYS body at [pos, pos + len) of rec.  false: the body
 * is not an authsys_parms. */
static bool ap_squash(const struct cfg *cf, struct gw_rec *rec, size_t pos, size_t len, bool *changed)
{
	uint8_t b[RPC_AUTH_MAX_BODY];
	size_t off, mlen, n;

	if (len > sizeof(b) || len < 8 || gw_rec_copyout(rec, pos, b, len) != len)
		return false;
	mlen = chk_be32(b + 4);
	if (mlen > AP_MACHINE_MAX)
		return false;
	off = 8 + ((mlen + 3) & ~(size_t)3);
	if (off + 12 > len)
		return false;
	n = chk_be32(b + off + 8);
	if (n > AP_GIDS_MAX || off + 12 + 4 * n != len)
		return false;
	*changed = false;
	/* uid, gid, then the n gids after their count word */
	for (size_t i = 0; i < 2 + n; i++) {
		size_t at = i < 2 ? off + 4 * i : off + 12 + 4 * (i - 2);
		uint32_t v = chk_be32(b + at);
		uint32_t nv = ap_squash_id(cf, v, i == 0 ? cf->cf_anonuid : cf->cf_anongid);

		if (nv != v) {
			gw_rec_put_be32(rec, pos + at, nv);
			*changed = true;
		}
	}
	return true;
}

uint32_t gw_authpol_apply(const struct cfg *cf, struct gw_rec *rec, const struct rpc_call_hdr *hdr,
			  struct gw_stats *st)
{
	bool changed = false;

	switch (hdr->rc_cred.oa_flavor) {
	case RPC_AUTH_NONE:
		if (cf->cf_reject_auth_none && hdr->rc_proc != 0) {
			gw_stat_inc(st, GW_CTR_AUTHPOL_AUTH_NONE);
			return RPC_AUTH_TOOWEAK;
		}
		return RPC_AUTH_OK;
	case RPC_AUTH_SYS:
		if (cf->cf_squash == CFG_SQUASH_NONE)
			return RPC_AUTH_OK;
		if (!ap_squash(cf, rec, hdr->rc_cred.oa_body.xs_pos, hdr->rc_cred.oa_body.xs_len,
			       &changed)) {
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
