// SPDX-License-Identifier: MIT
/*
 * This file contains the gateway's metrics: the per-procedure call table
 * and the latency histograms kept in struct gw_stats (plain integers in the
 * per-loop context, no allocation on the call path), and their exposition
 * in the Prometheus text format (version 0.0.4) for the admin listener
 * (admin.c) and the control socket (control.c).
 *
 * Names: rpcrdma_gw_<what>_total for counters, _seconds for durations,
 * _bytes for sizes; every family has one HELP and one TYPE line and its
 * samples together, as the format requires.  docs/operations.md lists them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "backend.h"
#include "call.h"
#include "chunking.h"
#include "config.h"
#include "client.h"
#include "ctx.h"
#include "gateway.h"
#include "log.h"
#include "ops.h"
#include "pool.h"
#include "transport.h"

/* 5 us to 10 s in 1-2-5 steps: a Soft-RoCE or LAN round trip is tens of
 * microseconds, a COMMIT to a slow disk seconds. */
const uint64_t gw_hist_bound_us[GW_HIST_NBUCKETS - 1] = {
	5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000,
	500000, 1000000, 2000000, 5000000, 10000000,
};

/* By bit length L of a value (2^(L-1) <= usec < 2^L): the first bucket
 * that can hold it.  A power-of-two range spans at most one 1-2-5 bound,
 * so the search from there moves at most one step, not up to twenty at
 * every observation (four per call).  Derived from gw_hist_bound_us[]:
 * test_gw_latency's bucket_edges checks the two agree. */
static const uint8_t hist_first[65] = {
	0,  0,  0,  0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  9,  10, 11, 12,
	13, 14, 15, 16, 17, 18, 18, 19, 20, 20, 20, 20, 20, 20, 20, 20, 20,
	20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20,
	20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20,
};

void gw_hist_add(struct gw_hist *gh, uint64_t usec)
{
	unsigned i = hist_first[usec ? 64 - __builtin_clzll(usec) : 0];

	/* Bucket i holds bound[i - 1] < usec <= bound[i] (Prometheus "le"). */
	while (i < GW_HIST_NBUCKETS - 1 && usec > gw_hist_bound_us[i])
		i++;
	gh->gh_bucket[i]++;
	gh->gh_count++;
	gh->gh_sum_us += usec;
}

void gw_stats_observe(struct gw_stats *st, enum gw_hist_id h, uint64_t usec)
{
	if (st && (unsigned)h < GW_HIST__COUNT)
		gw_hist_add(&st->gs_hist[h], usec);
}

double gw_hist_quantile(const uint64_t *bucket, double q)
{
	uint64_t total = 0, cum = 0;
	double rank, lo, hi;
	unsigned i;

	for (i = 0; i < GW_HIST_NBUCKETS; i++)
		total += bucket[i];
	if (!total)
		return 0;
	rank = (q < 0 ? 0 : q > 1 ? 1 : q) * (double)total;
	for (i = 0; i < GW_HIST_NBUCKETS - 1; i++) {
		if (bucket[i] && (double)(cum + bucket[i]) >= rank)
			break;
		cum += bucket[i];
	}
	if (i == GW_HIST_NBUCKETS - 1)	/* +Inf: nothing to interpolate to */
		return (double)gw_hist_bound_us[GW_HIST_NBUCKETS - 2];
	lo = i ? (double)gw_hist_bound_us[i - 1] : 0;
	hi = (double)gw_hist_bound_us[i];
	return lo + (hi - lo) * (rank - (double)cum) / (double)bucket[i];
}

/* ---- per operation, per path, per client ---- */

static unsigned gw_nfs4_op_index(uint16_t op)
{
	return op >= 3 && op < GW_NFS4_OPS ? op : 0;
}

/* The main operation of a COMPOUND: the first one that only sets up the
 * request (SEQUENCE, the PUT*FH, SAVEFH, RESTOREFH) is skipped, so that
 * SEQUENCE PUTFH READ counts as READ and SEQUENCE PUTFH SAVEFH PUTFH RENAME
 * as RENAME; a COMPOUND of such operations only counts as its first. */
static int gw_nfs4_main_op(const struct chk_call_walk *cw)
{
	unsigned n = cw ? cw->cw_nops_listed : 0;

	if (n > CHK_WALK_MAX_OPS)
		n = CHK_WALK_MAX_OPS;
	for (unsigned i = 0; i < n; i++) {
		switch (cw->cw_op[i]) {
		case CHK_OP_SEQUENCE: case CHK_OP_PUTFH: case CHK_OP_PUTPUBFH:
		case CHK_OP_PUTROOTFH: case CHK_OP_SAVEFH: case CHK_OP_RESTOREFH:
			continue;
		default:
			return (int)gw_nfs4_op_index(cw->cw_op[i]);
		}
	}
	return n ? (int)gw_nfs4_op_index(cw->cw_op[0]) : -1;
}

int gw_op_slot(uint32_t prog, uint32_t vers, uint32_t proc, const struct chk_call_walk *cw)
{
	int op;

	if (prog != CFG_PROG_NFS)
		return -1;
	if (vers == 2 && proc < GW_OPH_NFS3 - GW_OPH_NFS2)
		return GW_OPH_NFS2 + (int)proc;
	if (vers == 3 && proc < GW_OPH_NFS4 - GW_OPH_NFS3)
		return GW_OPH_NFS3 + (int)proc;
	if (vers != 4 || proc > 1)
		return -1;
	if (proc == 0)
		return GW_OPH_NFS4;
	/* No operation read (none, or RPCSEC_GSS privacy): COMPOUND. */
	op = gw_nfs4_main_op(cw);
	return op < 0 ? GW_OPH_NFS4 + 1 : GW_OPH_NFS4 + 2 + op;
}

static const char *const gw_nfs2_ops[] = {
	"NULL", "GETATTR", "SETATTR", "ROOT", "LOOKUP", "READLINK", "READ", "WRITECACHE",
	"WRITE", "CREATE", "REMOVE", "RENAME", "LINK", "SYMLINK", "MKDIR", "RMDIR", "READDIR",
	"STATFS",
};
static const char *const gw_nfs3_ops[] = {
	"NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE", "CREATE",
	"MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK", "READDIR",
	"READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT",
};
_Static_assert(sizeof(gw_nfs2_ops) / sizeof(gw_nfs2_ops[0]) == GW_OPH_NFS3 - GW_OPH_NFS2, "v2");
_Static_assert(sizeof(gw_nfs3_ops) / sizeof(gw_nfs3_ops[0]) == GW_OPH_NFS4 - GW_OPH_NFS3, "v3");

const char *gw_op_slot_name(unsigned slot, const char **vers)
{
	const char *on;

	*vers = slot < GW_OPH_NFS3 ? "2" : slot < GW_OPH_NFS4 ? "3" : "4";
	if (slot < GW_OPH_NFS3)
		return gw_nfs2_ops[slot - GW_OPH_NFS2];
	if (slot < GW_OPH_NFS4)
		return gw_nfs3_ops[slot - GW_OPH_NFS3];
	if (slot == GW_OPH_NFS4)
		return "NULL";
	if (slot == GW_OPH_NFS4 + 1 || slot >= GW_OPH_SLOTS)
		return "COMPOUND";
	on = slot > GW_OPH_NFS4 + 2 ? chk_nfs4_op_name(slot - GW_OPH_NFS4 - 2) : NULL;
	return on ? on : "OTHER";
}

const struct gw_hist *gw_path_hist(struct gw_path *pa)
{
	return &pa->pa_hist;
}

void gw_call_observe(struct gw_call *c, uint64_t now_us)
{
	struct gw_stats *st = gw_ctx_stats(c->ca_gw);
	uint64_t us = now_us - c->ca_start_us;
	int slot = gw_op_slot(c->ca_hdr.rc_prog, c->ca_hdr.rc_vers, c->ca_hdr.rc_proc, &c->ca_walk);

	gw_stats_observe(st, GW_HIST_CALL, us);
	if (st && slot >= 0)
		gw_hist_add(&st->gs_op_hist[slot], us);
	/* A call on a route's TCP fallback counts on the route's path: the
	 * one operators see (the fallback path has no series of its own). */
	if (c->ca_path && c->ca_sent_us)
		gw_hist_add(c->ca_path->pa_fb_of ? &c->ca_path->pa_fb_of->pa_hist :
			    &c->ca_path->pa_hist, now_us - c->ca_sent_us);
	if (c->ca_cl) {
		c->ca_cl->gcl_done++;
		c->ca_cl->gcl_done_bytes += c->ca_bytes + c->ca_out.ou_len;
		c->ca_cl->gcl_done_us += us;
	}
}

void gw_stats_nfs4_ops(struct gw_stats *st, const struct chk_call_walk *cw)
{
	if (!st || cw->cw_prog != CFG_PROG_NFS || cw->cw_vers != 4 || cw->cw_proc != 1)
		return;
	for (unsigned i = 0; i < cw->cw_nops_listed && i < CHK_WALK_MAX_OPS; i++)
		st->gs_nfs4_op[cw->cw_op[i] >= 3 && cw->cw_op[i] < GW_NFS4_OPS ? cw->cw_op[i] : 0]++;
	/* Ops past the list, or past an unknown one: not read, not counted. */
	if (cw->cw_nops > cw->cw_nops_listed)
		gw_stat_inc(st, GW_CTR_NFS4_OPS_UNCOUNTED);
}

void gw_stats_proc_add(struct gw_stats *st, uint32_t prog, uint32_t vers, uint32_t proc,
		       uint64_t calls)
{
	uint32_t h;

	if (!st)
		return;
	h = (prog * 2654435761u) ^ (vers * 40503u) ^ (proc * 2246822519u);
	for (unsigned n = 0; n < GW_STATS_PROCS; n++) {
		struct gw_proc_stat *ps = &st->gs_proc[(h + n) % GW_STATS_PROCS];

		if (!ps->ps_calls) {
			*ps = (struct gw_proc_stat){ prog, vers, proc, calls };
			return;
		}
		if (ps->ps_prog == prog && ps->ps_vers == vers && ps->ps_proc == proc) {
			ps->ps_calls += calls;
			return;
		}
	}
	st->gs_proc_overflow += calls;
}

void gw_stats_proc(struct gw_stats *st, uint32_t prog, uint32_t vers, uint32_t proc)
{
	gw_stats_proc_add(st, prog, vers, proc, 1);
}

/* ---- exposition ---- */

/* Counters of enum gw_ctr grouped in families with one label.  One fact,
 * one family: a counter whose fact another family already shows stays in
 * F_NONE (GW_CTR_CALLS: calls_total has them by procedure). */
struct gw_fam {
	const char *f_name;	/* without the rpcrdma_gw_ prefix */
	const char *f_help;
	const char *f_label;	/* NULL: one sample, no label */
};
enum {
	F_NONE, F_CONN, F_CLIENT_ERR, F_FLOW, F_REPLIES, F_LOCAL, F_RETRANS, F_XMAP, F_HELD,
	F_ENDED, F_BACKEND, F_RPCBIND, F_ILLEGAL, F_BYTES, F_COPIED, F_SCRUBBED, F_LOGSUP, F_ADMIN, F_CTL,
	F_RPCB_REG, F_RELOAD, F_NFS4_UNCOUNTED, F_CB, F_ADMIN_REFUSED, F_SERVER_BAD,
	F_CALL_TIMEOUT, F_ADMISSION, F_AUTHPOL, F_GSS_WAIT, F_TLS, F_TLS_KTLS, F_TLS_REFUSED, F_NLM,
	F_CB40_RELAYED, F_CB40_SCI, F_CB40_FAILED, F_SERVER_CLOSED_FOR, F_GSS_QUAR, F_XMAP_SHARE,
	F__COUNT
};
static const struct gw_fam gw_fams[F__COUNT] = {
	[F_CONN] = { "client_connections_total", "Client TCP connections by event.", "event" },
	[F_CLIENT_ERR] = { "client_errors_total", "Client-side errors by kind (the client is "
			   "closed, except not_a_call).", "kind" },
	[F_FLOW] = { "flow_control_total", "Times reading from clients was deferred, by cause.", "cause" },
	[F_REPLIES] = { "replies_total", "RPC replies written to clients.", NULL },
	[F_LOCAL] = { "local_replies_total", "Calls answered by the gateway itself, by reason.", "reason" },
	[F_RETRANS] = { "retransmissions_total", "Client retransmissions by what the gateway did.", "action" },
	[F_XMAP] = { "xid_map_evictions_total", "Answered XIDs forgotten before drc_window ended (map full).", NULL },
	[F_HELD] = { "calls_held_total", "Calls that waited in a hold queue for their backend.",
		     NULL },
	[F_ENDED] = { "calls_not_replied_total", "Calls that ended without a reply, by why.",
		      "why" },
	[F_BACKEND] = { "backend_events_total", "Backend transport events seen by the gateway.",
			"event" },
	[F_RPCBIND] = { "rpcbind_failures_total", "Failed rpcbind look-ups (TCP transport).", NULL },
	[F_ILLEGAL] = { "illegal_transitions_total", "Refused call state changes (bugs).", NULL },
	[F_BYTES] = { "payload_bytes_total", "RPC-over-RDMA bytes by the way they travelled.",
		      "path" },
	[F_COPIED] = { "copied_bytes_total", "Payload bytes copied by the gateway.", NULL },
	[F_SCRUBBED] = { "scrubbed_bytes_total", "Bytes of write and reply chunk targets zeroed "
			 "before a server could write them: they might hold another client's data.",
			 NULL },
	[F_LOGSUP] = { "log_suppressed_total", "Log lines dropped by the per-peer rate limit.",
		       NULL },
	[F_ADMIN] = { "admin_requests_total", "HTTP requests on the admin listener.", NULL },
	[F_CTL] = { "control_commands_total", "Control socket commands by result.", "result" },
	[F_RPCB_REG] = { "rpcbind_registrations_total",
			 "Local rpcbind registrations (rpcbind_register) by result.", "result" },
	[F_RELOAD] = { "reloads_total", "Configuration reloads (SIGHUP, rpcrdma-gwctl reload) by "
		       "result; all but applied kept the running configuration.", "result" },
	[F_NFS4_UNCOUNTED] = { "nfs4_compounds_cut_total", "COMPOUNDs whose operations past the "
			       "first 32 (or past an unknown one) are not in nfs4_ops_total.", NULL },
	[F_CB] = { "callbacks_total", "NFSv4.1 backchannel callbacks (RFC 8167) by event.", "event" },
	[F_ADMIN_REFUSED] = { "admin_refused_total", "Admin listener refusals: method (not GET or "
			      "HEAD), connection_limit (accepting paused at the cap), unserved "
			      "(closed with a request unanswered: too large, malformed, timed out), "
			      "unauthorized (no or wrong bearer token: 401).",
			      "reason" },
	[F_SERVER_BAD] = { "server_bad_reply_total", "RPC-over-RDMA replies refused because they "
			   "report more than the server placed or than the call offered, by reason; "
			   "the client gets SYSTEM_ERR.", "reason" },
	[F_CALL_TIMEOUT] = { "call_timeouts_total", "Calls with no server reply within "
			     "call_timeout: cancelled, their client's connection closed.", NULL },
	[F_ADMISSION] = { "admission_refused_total", "Client connections refused at admission, by "
			  "reason: deny, not_allowed (allow = set), insecure_port (secure_port), "
			  "per_source_cap (max_conns_per_source), proxy (PROXY v2 header).", "reason" },
	[F_AUTHPOL] = { "auth_policy_total", "Calls the credential policy acted on: squashed "
			"(AUTH_SYS rewritten), auth_none (AUTH_TOOWEAK), badcred (AUTH_SYS "
			"undecodable under squash).", "action" },
	[F_CB40_RELAYED] = { "cb40_relayed_total", "NFSv4.0 callback replies relayed from a client's "
			     "callback service back to the server (v40_callbacks = relay).", NULL },
	[F_CB40_SCI] = { "cb40_setclientid_total", "NFSv4.0 SETCLIENTID calls whose cb_location the "
			 "gateway rewrote to its callback listener or cleared (v40_callbacks).",
			 "action" },
	[F_CB40_FAILED] = { "cb40_failed_total", "NFSv4.0 callbacks (or SETCLIENTID rewrites) that "
			    "failed, by reason; a failed callback is answered SYSTEM_ERR.", "reason" },
	[F_SERVER_CLOSED_FOR] = { "server_closed_for_client_total", "GSS clients closed after a server close.", NULL },
	[F_GSS_QUAR] = { "gss_quarantine_total", "GSS client hosts kept apart, by event.", "event" },
	[F_GSS_WAIT] = { "gss_xid_waits_total", "RPCSEC_GSS calls that waited because their XID "
			 "(kept to the server) was busy on the backend.", NULL },
	[F_TLS] = { "tls_total", "RPC-with-TLS (RFC 9289) on the client leg: probe (AUTH_TLS probes "
		    "answered STARTTLS), handshake (TLS sessions established).", "event" },
	[F_TLS_KTLS] = { "tls_ktls_total", "TLS sessions whose records the kernel (kTLS) sends (tx) "
			 "or receives (rx); the rest go through OpenSSL in user space.", "dir" },
	[F_TLS_REFUSED] = { "tls_refused_total", "Client connections closed by the RPC-with-TLS rules, "
			    "by reason: plaintext (call before TLS on tls = required), early_data (bytes "
			    "after the probe), probe_busy (probe with calls in flight), not_tls (no "
			    "ClientHello), version (no TLS 1.3), alpn (no \"sunrpc\"), client_cert, "
			    "handshake (other), identity (not in tls_allow_identity).", "reason" },
	[F_NLM] = { "nlm_owners_total", "NFSv3 lock owners kept per client (NLM through the gateway), by event.", "event" },
	[F_XMAP_SHARE] = { "xid_map_share_evictions_total", "Answered XIDs forgotten early (map full), by whose: own (the adding client host held its share), largest (the host holding the most).", "whose" },
};
static const struct { unsigned m_fam; const char *m_value; } gw_ctr_map[GW_CTR__COUNT] = {
	[GW_CTR_CLIENTS_ACCEPTED] = { F_CONN, "accepted" },
	[GW_CTR_CLIENTS_CLOSED] = { F_CONN, "closed" },
	[GW_CTR_CLIENTS_REFUSED] = { F_CONN, "refused" },
	[GW_CTR_CLIENT_GARBAGE] = { F_CLIENT_ERR, "garbage" },
	[GW_CTR_CLIENT_TOO_BIG] = { F_CLIENT_ERR, "record_too_big" },
	[GW_CTR_CLIENT_TOO_FRAGMENTED] = { F_CLIENT_ERR, "record_too_fragmented" },
	[GW_CTR_CLIENT_IDLE_TIMEOUT] = { F_CLIENT_ERR, "idle_timeout" },
	[GW_CTR_CLIENT_RECORD_TIMEOUT] = { F_CLIENT_ERR, "record_timeout" },
	[GW_CTR_CLIENT_IO_ERROR] = { F_CLIENT_ERR, "io_error" },
	[GW_CTR_CLIENT_PAUSED] = { F_FLOW, "client_paused" },
	[GW_CTR_POOL_EMPTY] = { F_FLOW, "pool_empty" },
	[GW_CTR_CALLS_EMPTY] = { F_FLOW, "calls_empty" },
	[GW_CTR_REPLIES] = { F_REPLIES, NULL },
	[GW_CTR_LOCAL_PROG_UNAVAIL] = { F_LOCAL, "prog_unavail" },
	[GW_CTR_LOCAL_PROG_MISMATCH] = { F_LOCAL, "prog_mismatch" },
	[GW_CTR_LOCAL_RPC_MISMATCH] = { F_LOCAL, "rpc_mismatch" },
	[GW_CTR_NOT_A_CALL] = { F_CLIENT_ERR, "not_a_call" },
	[GW_CTR_RETRANS_INFLIGHT] = { F_RETRANS, "dropped_in_flight" },
	[GW_CTR_RETRANS_RESENT] = { F_RETRANS, "resent_same_xid" },
	[GW_CTR_XMAP_EVICTED] = { F_XMAP, NULL },
	[GW_CTR_CALLS_HELD] = { F_HELD, NULL },
	[GW_CTR_HOLD_FULL] = { F_FLOW, "hold_full" },
	[GW_CTR_CALLS_CANCELLED] = { F_ENDED, "cancelled" },
	[GW_CTR_CALLS_FAILED] = { F_ENDED, "failed" },
	[GW_CTR_BACKEND_CONNECTS] = { F_BACKEND, "connect" },
	[GW_CTR_BACKEND_DISCONNECTS] = { F_BACKEND, "disconnect" },
	[GW_CTR_BACKEND_CONNECT_FAILED] = { F_BACKEND, "connect_failed" },
	[GW_CTR_BACKEND_READDRESSED] = { F_BACKEND, "readdressed" },
	[GW_CTR_BACKEND_RESENT] = { F_BACKEND, "resent" },
	[GW_CTR_BACKEND_GARBAGE] = { F_BACKEND, "invalid_reply" },
	[GW_CTR_BACKEND_UNMATCHED] = { F_BACKEND, "unmatched_reply" },
	[GW_CTR_BACKEND_NOT_REPLY] = { F_BACKEND, "not_a_reply" },
	[GW_CTR_PATH_FALLBACKS] = { F_BACKEND, "fallback" },
	[GW_CTR_RPCBIND_FAILED] = { F_RPCBIND, NULL },
	[GW_CTR_ILLEGAL_TRANSITION] = { F_ILLEGAL, NULL },
	[GW_CTR_LOCAL_AUTH_ERROR] = { F_LOCAL, "auth_error" },
	[GW_CTR_BYTES_INLINE_CALL] = { F_BYTES, "inline_call" },
	[GW_CTR_BYTES_READ_CHUNK] = { F_BYTES, "read_chunk" },
	[GW_CTR_BYTES_LONG_CALL] = { F_BYTES, "long_call" },
	[GW_CTR_BYTES_INLINE_REPLY] = { F_BYTES, "inline_reply" },
	[GW_CTR_BYTES_WRITE_CHUNK] = { F_BYTES, "write_chunk" },
	[GW_CTR_BYTES_REPLY_CHUNK] = { F_BYTES, "reply_chunk" },
	[GW_CTR_BYTES_COPIED] = { F_COPIED, NULL },
	[GW_CTR_BYTES_SCRUBBED] = { F_SCRUBBED, NULL },
	[GW_CTR_LOG_SUPPRESSED] = { F_LOGSUP, NULL },
	[GW_CTR_ADMIN_REQUESTS] = { F_ADMIN, NULL },
	[GW_CTR_CTL_COMMANDS] = { F_CTL, "ok" },
	[GW_CTR_CTL_ERRORS] = { F_CTL, "error" },
	[GW_CTR_RPCB_REGISTERED] = { F_RPCB_REG, "registered" },
	[GW_CTR_RPCB_CONFLICT] = { F_RPCB_REG, "conflict" },
	[GW_CTR_RPCB_FAILED] = { F_RPCB_REG, "failed" },
	[GW_CTR_RPCB_UNREGISTERED] = { F_RPCB_REG, "unregistered" },
	[GW_CTR_RELOAD_APPLIED] = { F_RELOAD, "applied" },
	[GW_CTR_RELOAD_INVALID] = { F_RELOAD, "invalid" },
	[GW_CTR_RELOAD_RESTART] = { F_RELOAD, "restart_needed" },
	[GW_CTR_RELOAD_FAILED] = { F_RELOAD, "failed" },
	[GW_CTR_NFS4_OPS_UNCOUNTED] = { F_NFS4_UNCOUNTED, NULL },
	[GW_CTR_CB_CALLS] = { F_CB, "calls" },
	[GW_CTR_CB_RELAYED] = { F_CB, "relayed" },
	[GW_CTR_CB_NULL_LOCAL] = { F_CB, "null_local" },
	[GW_CTR_CB_NO_OWNER] = { F_CB, "no_owner" },
	[GW_CTR_CB_TIMEOUT] = { F_CB, "timeout" },
	[GW_CTR_CB_CLIENT_GONE] = { F_CB, "client_gone" },
	[GW_CTR_CB_BAD] = { F_CB, "bad" },
	[GW_CTR_CB_FAILED] = { F_CB, "failed" },
	[GW_CTR_CB_SESSIONS_BOUND] = { F_CB, "sessions_bound" },
	[GW_CTR_ADMIN_BAD_METHOD] = { F_ADMIN_REFUSED, "method" },
	[GW_CTR_GSS_XID_WAIT] = { F_GSS_WAIT, NULL },
	[GW_CTR_TLS_PROBES] = { F_TLS, "probe" },
	[GW_CTR_TLS_HANDSHAKES] = { F_TLS, "handshake" },
	[GW_CTR_TLS_KTLS_TX] = { F_TLS_KTLS, "tx" },
	[GW_CTR_TLS_KTLS_RX] = { F_TLS_KTLS, "rx" },
	[GW_CTR_TLS_REFUSED_PLAINTEXT] = { F_TLS_REFUSED, "plaintext" },
	[GW_CTR_TLS_REFUSED_EARLY_DATA] = { F_TLS_REFUSED, "early_data" },
	[GW_CTR_TLS_REFUSED_PROBE_BUSY] = { F_TLS_REFUSED, "probe_busy" },
	[GW_CTR_TLS_REFUSED_NOT_TLS] = { F_TLS_REFUSED, "not_tls" },
	[GW_CTR_TLS_REFUSED_VERSION] = { F_TLS_REFUSED, "version" },
	[GW_CTR_TLS_REFUSED_ALPN] = { F_TLS_REFUSED, "alpn" },
	[GW_CTR_TLS_REFUSED_CLIENT_CERT] = { F_TLS_REFUSED, "client_cert" },
	[GW_CTR_TLS_REFUSED_HANDSHAKE] = { F_TLS_REFUSED, "handshake" },
	[GW_CTR_TLS_REFUSED_IDENTITY] = { F_TLS_REFUSED, "identity" },
	[GW_CTR_ADMIN_CONN_LIMIT] = { F_ADMIN_REFUSED, "connection_limit" },
	[GW_CTR_ADMIN_UNSERVED] = { F_ADMIN_REFUSED, "unserved" },
	[GW_CTR_ADMIN_UNAUTHORIZED] = { F_ADMIN_REFUSED, "unauthorized" },
	[GW_CTR_LOCAL_SYSTEM_ERR] = { F_LOCAL, "system_err" },
	[GW_CTR_SERVER_BAD_OVERRUN] = { F_SERVER_BAD, "overrun" },
	[GW_CTR_SERVER_BAD_SHAPE] = { F_SERVER_BAD, "shape" },
	[GW_CTR_SERVER_BAD_LENGTH] = { F_SERVER_BAD, "length_mismatch" },
	[GW_CTR_SERVER_BAD_DECODE] = { F_SERVER_BAD, "undecodable" },
	[GW_CTR_SERVER_BAD_HEADER] = { F_SERVER_BAD, "bad_header" },
	[GW_CTR_CALL_TIMEOUTS] = { F_CALL_TIMEOUT, NULL },
	[GW_CTR_ADM_DENY] = { F_ADMISSION, "deny" },
	[GW_CTR_ADM_NOT_ALLOWED] = { F_ADMISSION, "not_allowed" },
	[GW_CTR_ADM_INSECURE_PORT] = { F_ADMISSION, "insecure_port" },
	[GW_CTR_ADM_PER_SOURCE_CAP] = { F_ADMISSION, "per_source_cap" },
	[GW_CTR_ADM_PROXY] = { F_ADMISSION, "proxy" },
	[GW_CTR_AUTHPOL_SQUASHED] = { F_AUTHPOL, "squashed" },
	[GW_CTR_AUTHPOL_AUTH_NONE] = { F_AUTHPOL, "auth_none" },
	[GW_CTR_AUTHPOL_BADCRED] = { F_AUTHPOL, "badcred" },
	[GW_CTR_CLIENT_WRITE_TIMEOUT] = { F_CLIENT_ERR, "write_timeout" },
	[GW_CTR_CLIENT_EVICTED] = { F_CLIENT_ERR, "evicted" },
	[GW_CTR_CB40_RELAYED] = { F_CB40_RELAYED, NULL },
	[GW_CTR_CB40_REWRITTEN] = { F_CB40_SCI, "rewritten" },
	[GW_CTR_CB40_CLEARED] = { F_CB40_SCI, "cleared" },
	[GW_CTR_CB40_READDRESSED] = { F_CB40_SCI, "readdressed" },
	[GW_CTR_CB40_EVICTED] = { F_CB40_SCI, "evicted" },
	[GW_CTR_CB40_FAIL_UNPARSED] = { F_CB40_FAILED, "unparsed" },
	[GW_CTR_CB40_FAIL_NO_CLIENT] = { F_CB40_FAILED, "no_client" },
	[GW_CTR_CB40_FAIL_CONNECT] = { F_CB40_FAILED, "connect" },
	[GW_CTR_CB40_FAIL_TIMEOUT] = { F_CB40_FAILED, "timeout" },
	[GW_CTR_CB40_FAIL_FULL] = { F_CB40_FAILED, "full" },
	[GW_CTR_CB40_FAIL_BAD] = { F_CB40_FAILED, "bad" },
	[GW_CTR_CB40_FAIL_PEER] = { F_CB40_FAILED, "peer" },
	[GW_CTR_CB40_FAIL_SELF] = { F_CB40_FAILED, "self" },
	/* GW_CTR_SYS_*: syscalls_total{worker,call}, gw_cpu_render */
	[GW_CTR_NLM_MAPPED] = { F_NLM, "mapped" },
	[GW_CTR_NLM_OWNER_REFUSED] = { F_NLM, "owner_refused" },
	[GW_CTR_NLM_HOLDER_MAPPED] = { F_NLM, "holder_mapped" },
	[GW_CTR_NLM_REBOOTS] = { F_NLM, "client_reboot" },
	[GW_CTR_NLM_RELEASED] = { F_NLM, "lock_released" },
	[GW_CTR_NLM_RELEASE_FAILED] = { F_NLM, "release_failed" },
	[GW_CTR_NLM_TRACK_FULL] = { F_NLM, "track_full" },
	[GW_CTR_NLM_GRANT_RELAYED] = { F_NLM, "grant_relayed" },
	[GW_CTR_NLM_GRANT_REFUSED] = { F_NLM, "grant_refused" },
	[GW_CTR_NLM_GRANT_FAILED] = { F_NLM, "grant_failed" },
	[GW_CTR_NLM_SHARE_MAPPED] = { F_NLM, "share_mapped" },
	[GW_CTR_NLM_SHARE_REFUSED] = { F_NLM, "share_refused" },
	[GW_CTR_NLM_SHARE_RELEASED] = { F_NLM, "share_released" },
	[GW_CTR_NLM_SERVER_REBOOT] = { F_NLM, "server_reboot" },
	[GW_CTR_NLM_NOTIFY_RELAYED] = { F_NLM, "notify_relayed" },
	[GW_CTR_NLM_NOTIFY_FAILED] = { F_NLM, "notify_failed" },
	[GW_CTR_LOCAL_NLM_NOTIFY] = { F_LOCAL, "nlm_notify" },
	[GW_CTR_NSM_UDP_NOTIFY] = { F_NLM, "nsm_udp_notify" },
	[GW_CTR_NSM_UDP_DUPLICATE] = { F_NLM, "nsm_udp_duplicate" },
	[GW_CTR_NSM_UDP_REFUSED] = { F_NLM, "nsm_udp_refused" },
	[GW_CTR_NSM_UDP_DROPPED] = { F_NLM, "nsm_udp_dropped" },
	[GW_CTR_SERVER_CLOSED_FOR_CLIENT] = { F_SERVER_CLOSED_FOR, NULL },
	[GW_CTR_GSS_QUAR_ENTERED] = { F_GSS_QUAR, "entered" },
	[GW_CTR_GSS_QUAR_CALLS] = { F_GSS_QUAR, "calls" },
	[GW_CTR_GSS_QUAR_FULL] = { F_GSS_QUAR, "full" },
	[GW_CTR_NLM_HOSTS_FULL] = { F_NLM, "hosts_full" },
	[GW_CTR_NLM_SOURCE_FULL] = { F_NLM, "source_full" },
	[GW_CTR_NLM_CALLER_REFUSED] = { F_NLM, "caller_refused" },
	[GW_CTR_NLM_NSM_REFUSED] = { F_NLM, "nsm_refused" },
	[GW_CTR_NSM_UDP_NOT_ADMITTED] = { F_NLM, "nsm_udp_not_admitted" },
	[GW_CTR_NLM_SERVER_NOTIFY_REFUSED] = { F_NLM, "server_notify_refused" },
	[GW_CTR_LOCAL_NLM_REFUSED] = { F_LOCAL, "nlm_refused" },
	[GW_CTR_SRC_CALL_SHARE] = { F_FLOW, "source_call_share" },
	[GW_CTR_SRC_SPILL] = { F_CONN, "source_spill" },
	[GW_CTR_CLIENT_EVICTED_CALLS] = { F_CLIENT_ERR, "evicted_calls" },
	[GW_CTR_SRC_GSS_WAITS] = { F_FLOW, "source_gss_waits" },
	[GW_CTR_CLIENT_GONE_UNREAD] = { F_CONN, "gone_unread" },
	[GW_CTR_XMAP_EVICT_OWN] = { F_XMAP_SHARE, "own" },
	[GW_CTR_XMAP_EVICT_LARGEST] = { F_XMAP_SHARE, "largest" },
};

#define P "rpcrdma_gw_"

static void gw_head(struct evbuffer *o, const char *name, const char *type, const char *help)
{
	evbuffer_add_printf(o, "# HELP " P "%s %s\n# TYPE " P "%s %s\n", name, help, name, type);
}

/* The samples of one histogram; labels: NULL, or "k=\"v\",..." put before le. */
static void gw_hist_samples(struct evbuffer *o, const char *name, const char *labels,
			    const struct gw_hist *gh)
{
	const char *sep = labels ? "," : "";
	uint64_t cum = 0;

	if (!labels)
		labels = "";
	for (unsigned i = 0; i < GW_HIST_NBUCKETS; i++) {
		cum += gh->gh_bucket[i];
		if (i < GW_HIST_NBUCKETS - 1)
			evbuffer_add_printf(o, P "%s_bucket{%s%sle=\"%g\"} %" PRIu64 "\n", name, labels,
					    sep, (double)gw_hist_bound_us[i] / 1e6, cum);
		else
			evbuffer_add_printf(o, P "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name,
					    labels, sep, cum);
	}
	if (*labels)
		evbuffer_add_printf(o, P "%s_sum{%s} %.6f\n" P "%s_count{%s} %" PRIu64 "\n", name,
				    labels, (double)gh->gh_sum_us / 1e6, name, labels, gh->gh_count);
	else
		evbuffer_add_printf(o, P "%s_sum %.6f\n" P "%s_count %" PRIu64 "\n", name,
				    (double)gh->gh_sum_us / 1e6, name, gh->gh_count);
}

static void gw_hist_render(struct evbuffer *o, const char *name, const char *help,
			   const struct gw_hist *gh)
{
	gw_head(o, name, "histogram", help);
	gw_hist_samples(o, name, NULL, gh);
}

/* op_duration_seconds: operations seen so far only (up to GW_OPH_SLOTS). */
static void gw_ops_render(struct evbuffer *o, const struct gw_stats *st)
{
	gw_head(o, "op_duration_seconds", "histogram", "Forwarded NFS calls by operation (v2/v3 "
		"procedure, v4 COMPOUND by its main operation): received to replied.");
	for (unsigned i = 0; i < GW_OPH_SLOTS; i++) {
		const char *vers, *op;
		char lb[96];

		if (!st->gs_op_hist[i].gh_count)
			continue;
		op = gw_op_slot_name(i, &vers);
		snprintf(lb, sizeof(lb), "op=\"%s\",vers=\"%s\"", op, vers);
		gw_hist_samples(o, "op_duration_seconds", lb, &st->gs_op_hist[i]);
	}
}

/* backend_duration_seconds: every active path, summed over the workers
 * (each has its own path of the same name). */
static void gw_backend_hist_render(struct evbuffer *o, struct gw_ctx *const *gws, unsigned n)
{
	gw_head(o, "backend_duration_seconds", "histogram", "Forwarded calls by path: first "
		"hand-off to the path's transport to the reply (hold-queue wait before excluded).");
	for (unsigned i = 0; i < gw_ctx_npaths(gws[0]); i++) {
		const char *name = gw_path_name(gw_ctx_path(gws[0], i));
		struct gw_hist h;
		char lb[3 * CFG_NAME_MAX + 16];

		gw_paths_hist_sum(gws, n, name, &h);
		snprintf(lb, sizeof(lb), "path=\"%s\"", name);
		gw_hist_samples(o, "backend_duration_seconds", lb, &h);
	}
}

static void gw_procs_render(struct evbuffer *o, const struct gw_stats *st)
{
	gw_head(o, "calls_total", "counter",
		"RPC calls received, by program, version and procedure.");
	for (unsigned i = 0; i < GW_STATS_PROCS; i++) {
		const struct gw_proc_stat *ps = &st->gs_proc[i];
		const char *pn, *qn;

		if (!ps->ps_calls)
			continue;
		pn = gw_prog_name(ps->ps_prog);
		qn = gw_proc_name(ps->ps_prog, ps->ps_vers, ps->ps_proc);
		evbuffer_add_printf(o, P "calls_total{program=\"%" PRIu32 "\",name=\"%s\",version=\"%"
				    PRIu32 "\",procedure=\"%" PRIu32 "\",procname=\"%s\"} %" PRIu64 "\n",
				    ps->ps_prog, pn ? pn : "", ps->ps_vers, ps->ps_proc, qn ? qn : "",
				    ps->ps_calls);
	}
	gw_head(o, "calls_uncounted_total", "counter",
		"Calls not in calls_total because its table was full.");
	evbuffer_add_printf(o, P "calls_uncounted_total %" PRIu64 "\n", st->gs_proc_overflow);
	gw_head(o, "nfs4_ops_total", "counter",
		"NFSv4 operations inside COMPOUND calls sent to a backend, by operation.");
	for (unsigned i = 0; i < GW_NFS4_OPS; i++) {
		const char *on = i ? chk_nfs4_op_name(i) : NULL;

		if (st->gs_nfs4_op[i])
			evbuffer_add_printf(o, P "nfs4_ops_total{op=\"%s\"} %" PRIu64 "\n",
					    on ? on : "other", st->gs_nfs4_op[i]);
	}
}

/* Per path: label set path="route/backend",route=,backend=,transport=,
 * then worker="N" when there are several workers (each has its own). */
static void gw_path_labels(char *buf, size_t len, struct gw_path *pa, const char *wl)
{
	const struct gw_path_info *pi = gw_path_info(pa);

	snprintf(buf, len, "path=\"%s\",route=\"%s\",backend=\"%s\",transport=\"%s\"%s",
		 gw_path_name(pa), pi->pi_route->cr_name, pi->pi_backend->cb_name,
		 gw_path_transport(pa), wl);
}

/* Every worker's active paths in one list (heap: ~0.5 MiB at the most
 * workers and routes; operations only). */
#define GW_MP_MAX	(CFG_MAX_WORKERS * CFG_MAX_ROUTES)
struct gw_mpaths {
	unsigned mp_n;
	struct gw_path *mp_pa[GW_MP_MAX];
	struct gw_tp_info mp_ti[GW_MP_MAX];
	char mp_lb[GW_MP_MAX][3 * CFG_NAME_MAX + 112];
	bool mp_have[GW_MP_MAX], mp_first[GW_MP_MAX];
};

static void gw_mpaths_fill(struct gw_mpaths *mp, struct gw_ctx *const *gws, unsigned n)
{
	for (unsigned w = 0; w < n; w++)
		for (unsigned i = 0; i < gw_ctx_npaths(gws[w]) && mp->mp_n < GW_MP_MAX; i++) {
			unsigned k = mp->mp_n++;
			struct gw_path *pa = gw_ctx_path(gws[w], i);
			char wl[24] = "";

			if (n > 1)
				snprintf(wl, sizeof(wl), ",worker=\"%u\"", w);
			mp->mp_pa[k] = pa;
			gw_path_labels(mp->mp_lb[k], sizeof(mp->mp_lb[k]), pa, wl);
			mp->mp_have[k] = gw_path_tp_info(pa, &mp->mp_ti[k]) == 0;
			mp->mp_first[k] = mp->mp_have[k];
			for (unsigned j = 0; j < k && mp->mp_first[k]; j++)
				if (mp->mp_have[j] && mp->mp_ti[j].ti_server == mp->mp_ti[k].ti_server)
					mp->mp_first[k] = false;
		}
}

/* backend-rdma's counters (BE_COUNTERS, backend.h), per server context: a
 * family's header, then for each backend its samples. */
#define GW_BE_CTR_DESC(id, field, family, key, value, help) \
	[BE_CTR_##id] = { family, key, value, help },
static const struct { const char *bd_family, *bd_key, *bd_value, *bd_help; }
gw_be_ctr_desc[BE_CTR__COUNT] = { BE_COUNTERS(GW_BE_CTR_DESC) };
#undef GW_BE_CTR_DESC

/* Sample k of one backend: the sum over every worker's context for it
 * (each worker has its own connections to every server). */
static uint64_t gw_be_ctr_sum(const struct gw_mpaths *mp, unsigned i, unsigned k)
{
	const char *bn = gw_path_info(mp->mp_pa[i])->pi_backend->cb_name;
	uint64_t v = 0;

	for (unsigned j = i; j < mp->mp_n; j++)
		if (mp->mp_first[j] && !strcmp(gw_path_info(mp->mp_pa[j])->pi_backend->cb_name, bn))
			v += mp->mp_ti[j].ti_be_ctr[k];
	return v;
}

static void gw_be_ctrs_render(struct evbuffer *o, const struct gw_mpaths *mp)
{
	for (unsigned a = 0, b; a < BE_CTR__COUNT; a = b) {
		const char *fam = gw_be_ctr_desc[a].bd_family;

		for (b = a + 1; b < BE_CTR__COUNT && fam &&
		     !strcmp(gw_be_ctr_desc[b].bd_family ? gw_be_ctr_desc[b].bd_family : "", fam); b++)
			;
		if (!fam)
			continue;	/* not exported */
		gw_head(o, fam, "counter", gw_be_ctr_desc[a].bd_help);
		for (unsigned i = 0; i < mp->mp_n; i++) {
			const char *bn = gw_path_info(mp->mp_pa[i])->pi_backend->cb_name;
			bool seen = false;

			for (unsigned j = 0; j < i && !seen; j++)	/* an earlier worker's said it */
				seen = mp->mp_first[j] &&
				       !strcmp(gw_path_info(mp->mp_pa[j])->pi_backend->cb_name, bn);
			for (unsigned k = a; mp->mp_first[i] && !seen && k < b; k++) {
				if (!gw_be_ctr_desc[k].bd_key)
					evbuffer_add_printf(o, P "%s{backend=\"%s\"} %" PRIu64 "\n",
							    fam, bn, gw_be_ctr_sum(mp, i, k));
				else
					evbuffer_add_printf(o, P "%s{backend=\"%s\",%s=\"%s\"} %" PRIu64 "\n",
							    fam, bn, gw_be_ctr_desc[k].bd_key,
							    gw_be_ctr_desc[k].bd_value, gw_be_ctr_sum(mp, i, k));
			}
		}
	}
}

static void gw_paths_render(struct evbuffer *o, const struct gw_mpaths *mp)
{
	const struct gw_tp_info *ti = mp->mp_ti;
	const bool *have = mp->mp_have;
	unsigned np = mp->mp_n;
	const char(*lb)[sizeof(mp->mp_lb[0])] = mp->mp_lb;
	struct gw_path *const *pa = mp->mp_pa;

	gw_head(o, "path_up", "gauge", "1 when the path's transport to its backend is up.");
	for (unsigned i = 0; i < np; i++)
		evbuffer_add_printf(o, P "path_up{%s} %d\n", lb[i], gw_path_up(pa[i]));
	gw_head(o, "path_fallback", "gauge", "1 while the rdma route's calls go over its TCP fallback.");
	for (unsigned i = 0; i < np; i++)
		evbuffer_add_printf(o, P "path_fallback{%s} %d\n", lb[i],
				    gw_path_on_fallback(pa[i]));
	gw_head(o, "path_down_reason", "gauge",
		"1 for why the path's own transport is not up (reason=\"none\" when it is).");
	for (unsigned i = 0; i < np; i++)
		evbuffer_add_printf(o, P "path_down_reason{%s,reason=\"%s\"} 1\n", lb[i],
				    gw_why_str(gw_path_why(pa[i], NULL, NULL)));
	gw_head(o, "path_state_since_seconds", "gauge",
		"Unix time when the path's transport last went up or down, or changed reason.");
	for (unsigned i = 0; i < np; i++) {
		uint64_t since;

		gw_path_why(pa[i], NULL, &since);
		evbuffer_add_printf(o, P "path_state_since_seconds{%s} %.3f\n", lb[i],
				    (double)gw_wall_ms(since) / 1000.0);
	}
	gw_head(o, "path_draining", "gauge", "1 while an operator drain holds new calls.");
	for (unsigned i = 0; i < np; i++)
		evbuffer_add_printf(o, P "path_draining{%s} %d\n", lb[i],
				    gw_path_draining(pa[i]));
	gw_head(o, "calls_held", "gauge", "Calls in the path's hold queue (backend down or busy).");
	for (unsigned i = 0; i < np; i++)
		evbuffer_add_printf(o, P "calls_held{%s} %u\n", lb[i],
				    gw_path_nheld(pa[i]));
	gw_head(o, "rdma_credit_queue", "gauge", "Calls waiting for an RPC-over-RDMA credit.");
	for (unsigned i = 0; i < np; i++)
		if (have[i])
			evbuffer_add_printf(o, P "rdma_credit_queue{%s} %u\n", lb[i], ti[i].ti_queued);
	gw_head(o, "rdma_calls_in_flight", "gauge", "Calls sent over RDMA, reply pending.");
	for (unsigned i = 0; i < np; i++)
		if (have[i])
			evbuffer_add_printf(o, P "rdma_calls_in_flight{%s} %u\n", lb[i],
					    ti[i].ti_inflight);
	gw_head(o, "rdma_connection_up", "gauge", "1 when the backend connection is up.");
	for (unsigned i = 0; i < np; i++)
		for (unsigned k = 0; have[i] && k < ti[i].ti_nconns; k++)
			evbuffer_add_printf(o, P "rdma_connection_up{%s,conn=\"%u\"} %d\n", lb[i], k,
					    ti[i].ti_conn[k].tc_up);
	gw_head(o, "rdma_credits_granted", "gauge", "Credits the server granted on the connection.");
	for (unsigned i = 0; i < np; i++)
		for (unsigned k = 0; have[i] && k < ti[i].ti_nconns; k++)
			evbuffer_add_printf(o, P "rdma_credits_granted{%s,conn=\"%u\"} %u\n", lb[i], k,
					    ti[i].ti_conn[k].tc_credits);
	gw_head(o, "rdma_credits_in_use", "gauge", "Credits in use (calls outstanding) on the connection.");
	for (unsigned i = 0; i < np; i++)
		for (unsigned k = 0; have[i] && k < ti[i].ti_nconns; k++)
			evbuffer_add_printf(o, P "rdma_credits_in_use{%s,conn=\"%u\"} %u\n", lb[i], k,
					    ti[i].ti_conn[k].tc_inflight);
	gw_head(o, "rdma_inline_threshold_bytes", "gauge", "Inline thresholds agreed, by direction.");
	for (unsigned i = 0; i < np; i++)
		for (unsigned k = 0; have[i] && k < ti[i].ti_nconns; k++)
			evbuffer_add_printf(o, P "rdma_inline_threshold_bytes{%s,conn=\"%u\",dir=\"send\"} %"
					    PRIu32 "\n" P "rdma_inline_threshold_bytes{%s,conn=\"%u\","
					    "dir=\"recv\"} %" PRIu32 "\n", lb[i], k,
					    ti[i].ti_conn[k].tc_send_threshold, lb[i], k,
					    ti[i].ti_conn[k].tc_recv_threshold);
	gw_be_ctrs_render(o, mp);
}

bool gw_cpu_thread_us(uint64_t *user_us, uint64_t *sys_us)
{
	struct rusage ru;

	/* The event loop's own thread: the resolver threads (one per look-up)
	 * do no per-call work, and with several loops each will say its own. */
	if (getrusage(RUSAGE_THREAD, &ru) != 0) {
		*user_us = *sys_us = 0;
		return false;
	}
	*user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec;
	*sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
	return true;
}

/* Worker "0": the one event loop (more loops will be more workers). */
static const struct { enum gw_ctr sc_ctr; const char *sc_call; } gw_sys_ctrs[] = {
	{ GW_CTR_SYS_CLIENT_RECV, "client_recv" },
	{ GW_CTR_SYS_CLIENT_WRITEV, "client_writev" },
	{ GW_CTR_SYS_SERVER_RECV, "server_recv" },
	{ GW_CTR_SYS_SERVER_WRITEV, "server_writev" },
	{ GW_CTR_SYS_LOOP_WAIT, "epoll_wait" },
	{ GW_CTR_SYS_CLOCK, "clock_gettime" },
};

const char *gw_sys_call_name(unsigned i, enum gw_ctr *c)
{
	if (i >= sizeof(gw_sys_ctrs) / sizeof(gw_sys_ctrs[0]))
		return NULL;
	*c = gw_sys_ctrs[i].sc_ctr;
	return gw_sys_ctrs[i].sc_call;
}

/* Per worker: sts[w] its counters, with its thread's CPU time sampled
 * (gs_cpu_*: gw_worker_pause, or the caller's own thread for one loop). */
static void gw_cpu_render(struct evbuffer *o, const struct gw_stats *const *sts, unsigned n)
{
	gw_head(o, "cpu_seconds_total", "counter", "CPU time of each worker's event loop thread "
		"(getrusage RUSAGE_THREAD), by mode.");
	for (unsigned w = 0; w < n; w++)
		evbuffer_add_printf(o, P "cpu_seconds_total{worker=\"%u\",mode=\"user\"} %.6f\n"
				    P "cpu_seconds_total{worker=\"%u\",mode=\"system\"} %.6f\n", w,
				    (double)sts[w]->gs_cpu_user_us / 1e6, w,
				    (double)sts[w]->gs_cpu_sys_us / 1e6);
	gw_head(o, "calls_forwarded_total", "counter", "Calls forwarded to a backend and replied "
		"(call_duration_seconds_count), by worker.");
	for (unsigned w = 0; w < n; w++)
		evbuffer_add_printf(o, P "calls_forwarded_total{worker=\"%u\"} %" PRIu64 "\n", w,
				    sts[w]->gs_hist[GW_HIST_CALL].gh_count);
	gw_head(o, "syscalls_total", "counter", "System calls of the data path, counted where "
		"the gateway issues them; epoll_wait: event loop passes (a lower bound); "
		"clock_gettime: precise clock reads, one per pass at most.");
	for (unsigned w = 0; w < n; w++)
		for (unsigned i = 0; i < sizeof(gw_sys_ctrs) / sizeof(gw_sys_ctrs[0]); i++)
			evbuffer_add_printf(o, P "syscalls_total{worker=\"%u\",call=\"%s\"} %" PRIu64
					    "\n", w, gw_sys_ctrs[i].sc_call,
					    sts[w]->gs_ctr[gw_sys_ctrs[i].sc_ctr]);
}

static void gw_counters_render(struct evbuffer *o, const struct gw_stats *st)
{
	gw_head(o, "info", "gauge", "Version of the running gateway.");
	evbuffer_add_printf(o, P "info{version=\"%s\"} 1\n", GW_VERSION);
	for (unsigned f = F_NONE + 1; f < F__COUNT; f++) {
		gw_head(o, gw_fams[f].f_name, "counter", gw_fams[f].f_help);
		for (unsigned c = 0; c < GW_CTR__COUNT; c++) {
			if (gw_ctr_map[c].m_fam != f || (!gw_ctr_map[c].m_value && gw_fams[f].f_label))
				continue;
			if (gw_fams[f].f_label)
				evbuffer_add_printf(o, P "%s{%s=\"%s\"} %" PRIu64 "\n", gw_fams[f].f_name,
						    gw_fams[f].f_label, gw_ctr_map[c].m_value,
						    st->gs_ctr[c]);
			else
				evbuffer_add_printf(o, P "%s %" PRIu64 "\n", gw_fams[f].f_name,
						    st->gs_ctr[c]);
		}
	}
	gw_procs_render(o, st);
}

static void gw_hists_render(struct evbuffer *o, const struct gw_stats *st)
{
	gw_hist_render(o, "call_duration_seconds",
		       "Forwarded calls: received from the client to reply queued for it.",
		       &st->gs_hist[GW_HIST_CALL]);
	gw_hist_render(o, "rdma_duration_seconds",
		       "RDMA leg: call handed to the RDMA backend to its reply.",
		       &st->gs_hist[GW_HIST_RDMA]);
	gw_ops_render(o, st);
	gw_head(o, "tls_cert_expiry_seconds", "gauge", "Unix time the TLS certificate the gateway "
		"serves (tls_cert) expires; 0 without TLS.");
	evbuffer_add_printf(o, P "tls_cert_expiry_seconds %" PRId64 "\n", st->gs_tls_cert_expiry);
}

/* The gauges of the gateways, summed over the workers, then their paths. */
static void gw_gauges_render(struct evbuffer *o, struct gw_ctx *const *gws, unsigned n)
{
	unsigned used = 0, slots = 0, clients = 0, free_bufs = 0;
	struct gw_mpaths *mp = calloc(1, sizeof(*mp));

	for (unsigned w = 0; w < n; w++) {
		used += gw_ctx_ncalls(gws[w]) - gw_ctx_calls_avail(gws[w]);
		slots += gw_ctx_ncalls(gws[w]);
		clients += gw_ctx_nclients(gws[w]);
		free_bufs += gw_pool_avail(gw_ctx_pool(gws[w]));
	}
	gw_backend_hist_render(o, gws, n);
	gw_readiness_render(o, gws, n);
	gw_head(o, "calls_in_flight", "gauge", "Call objects in use (calls between decode and reply).");
	evbuffer_add_printf(o, P "calls_in_flight %u\n", used);
	gw_head(o, "call_slots", "gauge", "Call objects in all (max_calls of every worker).");
	evbuffer_add_printf(o, P "call_slots %u\n", slots);
	gw_head(o, "client_connections", "gauge", "Client connections open now.");
	evbuffer_add_printf(o, P "client_connections %u\n", clients);
	gw_head(o, "pool_buffers_free", "gauge", "Free buffers of the buffer pools.");
	evbuffer_add_printf(o, P "pool_buffers_free %u\n", free_bufs);
	if (!mp)
		return;	/* the paths' part is left out, the rest is right */
	gw_mpaths_fill(mp, gws, n);
	gw_paths_render(o, mp);
	free(mp);
}

void gw_metrics_render(struct evbuffer *o, const struct gw_stats *st, struct gw_ctx *gw)
{
	struct gw_stats now = *st;	/* one loop, on this thread: its CPU time is the caller's */
	const struct gw_stats *sp = &now;

	gw_cpu_thread_us(&now.gs_cpu_user_us, &now.gs_cpu_sys_us);
	gw_counters_render(o, st);
	gw_cpu_render(o, &sp, 1);
	gw_hists_render(o, st);
	if (gw)
		gw_gauges_render(o, &gw, 1);
}

void gw_metrics_render_all(struct evbuffer *o, struct gw_ctx *const *gws, unsigned n)
{
	const struct gw_stats *sts[CFG_MAX_WORKERS];
	struct gw_stats *sum = n && n <= CFG_MAX_WORKERS ? gw_stats_all(gws, n) : NULL;

	if (!sum)
		return;
	for (unsigned w = 0; w < n; w++)
		sts[w] = gw_ctx_stats(gws[w]);
	gw_counters_render(o, sum);
	gw_cpu_render(o, sts, n);
	gw_hists_render(o, sum);
	gw_gauges_render(o, gws, n);
	free(sum);
}

uint64_t gw_wall_ms(uint64_t mono_ms)
{
	struct timespec ts;
	uint64_t now = gw_now_ms(), wall;

	clock_gettime(CLOCK_REALTIME, &ts);
	wall = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	return mono_ms <= now && now - mono_ms <= wall ? wall - (now - mono_ms) : wall;
}
