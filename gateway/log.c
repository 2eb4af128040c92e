// SPDX-License-Identifier: MIT
/*
 * This file contains logging (stderr, one line per event: level, function,
 * message; journald with fields and the per-peer rate limit are in
 * journal.c) and the counter names.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "config.h"
#include "log.h"

/* Append-only, same order as enum gw_ctr. */
static const char *const gw_ctr_names[GW_CTR__COUNT] = {
	[GW_CTR_CLIENTS_ACCEPTED] = "clients_accepted",
	[GW_CTR_CLIENTS_CLOSED] = "clients_closed",
	[GW_CTR_CLIENTS_REFUSED] = "clients_refused",
	[GW_CTR_CLIENT_GARBAGE] = "client_garbage",
	[GW_CTR_CLIENT_TOO_BIG] = "client_record_too_big",
	[GW_CTR_CLIENT_TOO_FRAGMENTED] = "client_record_too_fragmented",
	[GW_CTR_CLIENT_IDLE_TIMEOUT] = "client_idle_timeout",
	[GW_CTR_CLIENT_RECORD_TIMEOUT] = "client_record_timeout",
	[GW_CTR_CLIENT_IO_ERROR] = "client_io_error",
	[GW_CTR_CLIENT_PAUSED] = "client_paused",
	[GW_CTR_POOL_EMPTY] = "pool_empty",
	[GW_CTR_CALLS_EMPTY] = "calls_empty",
	[GW_CTR_CALLS] = "calls",
	[GW_CTR_REPLIES] = "replies",
	[GW_CTR_LOCAL_PROG_UNAVAIL] = "local_prog_unavail",
	[GW_CTR_LOCAL_PROG_MISMATCH] = "local_prog_mismatch",
	[GW_CTR_LOCAL_RPC_MISMATCH] = "local_rpc_mismatch",
	[GW_CTR_NOT_A_CALL] = "client_not_a_call",
	[GW_CTR_RETRANS_INFLIGHT] = "retrans_inflight_dropped",
	[GW_CTR_RETRANS_RESENT] = "retrans_resent",
	[GW_CTR_XMAP_EVICTED] = "xmap_evicted",
	[GW_CTR_CALLS_HELD] = "calls_held",
	[GW_CTR_HOLD_FULL] = "hold_full",
	[GW_CTR_CALLS_CANCELLED] = "calls_cancelled",
	[GW_CTR_CALLS_FAILED] = "calls_failed",
	[GW_CTR_BACKEND_CONNECTS] = "backend_connects",
	[GW_CTR_BACKEND_DISCONNECTS] = "backend_disconnects",
	[GW_CTR_BACKEND_CONNECT_FAILED] = "backend_connect_failed",
	[GW_CTR_BACKEND_READDRESSED] = "backend_readdressed",
	[GW_CTR_PATH_FALLBACKS] = "path_fallbacks",
	[GW_CTR_BACKEND_RESENT] = "backend_resent",
	[GW_CTR_BACKEND_GARBAGE] = "backend_garbage",
	[GW_CTR_BACKEND_UNMATCHED] = "backend_unmatched",
	[GW_CTR_BACKEND_NOT_REPLY] = "backend_not_a_reply",
	[GW_CTR_RPCBIND_FAILED] = "rpcbind_failed",
	[GW_CTR_ILLEGAL_TRANSITION] = "illegal_transition",
	[GW_CTR_LOCAL_AUTH_ERROR] = "local_auth_error",
	[GW_CTR_BYTES_INLINE_CALL] = "bytes_inline_call",
	[GW_CTR_BYTES_READ_CHUNK] = "bytes_read_chunk",
	[GW_CTR_BYTES_LONG_CALL] = "bytes_long_call",
	[GW_CTR_BYTES_INLINE_REPLY] = "bytes_inline_reply",
	[GW_CTR_BYTES_WRITE_CHUNK] = "bytes_write_chunk",
	[GW_CTR_BYTES_REPLY_CHUNK] = "bytes_reply_chunk",
	[GW_CTR_BYTES_COPIED] = "bytes_copied",
	[GW_CTR_BYTES_SCRUBBED] = "bytes_scrubbed",
	[GW_CTR_LOG_SUPPRESSED] = "log_suppressed",
	[GW_CTR_ADMIN_REQUESTS] = "admin_requests",
	[GW_CTR_CTL_COMMANDS] = "ctl_commands",
	[GW_CTR_CTL_ERRORS] = "ctl_errors",
	[GW_CTR_RPCB_REGISTERED] = "rpcbind_registered",
	[GW_CTR_RPCB_CONFLICT] = "rpcbind_conflict",
	[GW_CTR_RPCB_FAILED] = "rpcbind_register_failed",
	[GW_CTR_RPCB_UNREGISTERED] = "rpcbind_unregistered",
	[GW_CTR_RELOAD_APPLIED] = "reload_applied",
	[GW_CTR_RELOAD_INVALID] = "reload_invalid",
	[GW_CTR_RELOAD_RESTART] = "reload_restart_needed",
	[GW_CTR_RELOAD_FAILED] = "reload_failed",
	[GW_CTR_NFS4_OPS_UNCOUNTED] = "nfs4_ops_uncounted",
	[GW_CTR_CB_CALLS] = "cb_calls",
	[GW_CTR_CB_RELAYED] = "cb_relayed",
	[GW_CTR_CB_NULL_LOCAL] = "cb_null_local",
	[GW_CTR_CB_NO_OWNER] = "cb_no_owner",
	[GW_CTR_CB_TIMEOUT] = "cb_timeout",
	[GW_CTR_CB_CLIENT_GONE] = "cb_client_gone",
	[GW_CTR_CB_BAD] = "cb_bad",
	[GW_CTR_CB_FAILED] = "cb_failed",
	[GW_CTR_CB_SESSIONS_BOUND] = "cb_sessions_bound",
	[GW_CTR_ADMIN_BAD_METHOD] = "admin_bad_method",
	[GW_CTR_ADMIN_CONN_LIMIT] = "admin_conn_limit",
	[GW_CTR_ADMIN_UNSERVED] = "admin_unserved",
	[GW_CTR_ADMIN_UNAUTHORIZED] = "admin_unauthorized",
	[GW_CTR_LOCAL_SYSTEM_ERR] = "local_system_err",
	[GW_CTR_SERVER_BAD_OVERRUN] = "server_bad_overrun",
	[GW_CTR_SERVER_BAD_SHAPE] = "server_bad_shape",
	[GW_CTR_SERVER_BAD_LENGTH] = "server_bad_length_mismatch",
	[GW_CTR_SERVER_BAD_DECODE] = "server_bad_undecodable",
	[GW_CTR_SERVER_BAD_HEADER] = "server_bad_header",
	[GW_CTR_CALL_TIMEOUTS] = "call_timeout",
	[GW_CTR_ADM_DENY] = "admission_deny",
	[GW_CTR_ADM_NOT_ALLOWED] = "admission_not_allowed",
	[GW_CTR_ADM_INSECURE_PORT] = "admission_insecure_port",
	[GW_CTR_ADM_PER_SOURCE_CAP] = "admission_per_source_cap",
	[GW_CTR_ADM_PROXY] = "admission_proxy",
	[GW_CTR_AUTHPOL_SQUASHED] = "auth_squashed",
	[GW_CTR_AUTHPOL_AUTH_NONE] = "auth_none_rejected",
	[GW_CTR_AUTHPOL_BADCRED] = "auth_sys_badcred",
	[GW_CTR_CLIENT_WRITE_TIMEOUT] = "client_write_timeout",
	[GW_CTR_CLIENT_EVICTED] = "client_evicted",
	[GW_CTR_GSS_XID_WAIT] = "gss_xid_waits",
	[GW_CTR_TLS_PROBES] = "tls_probes",
	[GW_CTR_TLS_HANDSHAKES] = "tls_handshakes",
	[GW_CTR_TLS_KTLS_TX] = "tls_ktls_tx",
	[GW_CTR_TLS_KTLS_RX] = "tls_ktls_rx",
	[GW_CTR_TLS_REFUSED_PLAINTEXT] = "tls_refused_plaintext",
	[GW_CTR_TLS_REFUSED_EARLY_DATA] = "tls_refused_early_data",
	[GW_CTR_TLS_REFUSED_PROBE_BUSY] = "tls_refused_probe_busy",
	[GW_CTR_TLS_REFUSED_NOT_TLS] = "tls_refused_not_tls",
	[GW_CTR_TLS_REFUSED_VERSION] = "tls_refused_version",
	[GW_CTR_TLS_REFUSED_ALPN] = "tls_refused_alpn",
	[GW_CTR_TLS_REFUSED_CLIENT_CERT] = "tls_refused_client_cert",
	[GW_CTR_TLS_REFUSED_HANDSHAKE] = "tls_refused_handshake",
	[GW_CTR_TLS_REFUSED_IDENTITY] = "tls_refused_identity",
	[GW_CTR_CB40_RELAYED] = "cb40_relayed",
	[GW_CTR_CB40_REWRITTEN] = "cb40_sci_rewritten",
	[GW_CTR_CB40_CLEARED] = "cb40_sci_cleared",
	[GW_CTR_CB40_READDRESSED] = "cb40_sci_readdressed",
	[GW_CTR_CB40_EVICTED] = "cb40_sci_evicted",
	[GW_CTR_CB40_FAIL_UNPARSED] = "cb40_failed_unparsed",
	[GW_CTR_CB40_FAIL_NO_CLIENT] = "cb40_failed_no_client",
	[GW_CTR_CB40_FAIL_CONNECT] = "cb40_failed_connect",
	[GW_CTR_CB40_FAIL_TIMEOUT] = "cb40_failed_timeout",
	[GW_CTR_CB40_FAIL_FULL] = "cb40_failed_full",
	[GW_CTR_CB40_FAIL_BAD] = "cb40_failed_bad",
	[GW_CTR_CB40_FAIL_PEER] = "cb40_failed_peer",
	[GW_CTR_CB40_FAIL_SELF] = "cb40_failed_self",
	[GW_CTR_SYS_CLIENT_RECV] = "sys_client_recv",
	[GW_CTR_SYS_CLIENT_WRITEV] = "sys_client_writev",
	[GW_CTR_SYS_SERVER_RECV] = "sys_server_recv",
	[GW_CTR_SYS_SERVER_WRITEV] = "sys_server_writev",
	[GW_CTR_SYS_LOOP_WAIT] = "sys_loop_wait",
	[GW_CTR_SYS_CLOCK] = "sys_clock",
	[GW_CTR_NLM_MAPPED] = "nlm_owners_mapped",
	[GW_CTR_NLM_OWNER_REFUSED] = "nlm_owners_refused",
	[GW_CTR_NLM_HOLDER_MAPPED] = "nlm_holders_mapped",
	[GW_CTR_NLM_REBOOTS] = "nlm_client_reboots",
	[GW_CTR_NLM_RELEASED] = "nlm_locks_released",
	[GW_CTR_NLM_RELEASE_FAILED] = "nlm_release_failed",
	[GW_CTR_NLM_TRACK_FULL] = "nlm_track_full",
	[GW_CTR_NLM_GRANT_RELAYED] = "nlm_grant_relayed",
	[GW_CTR_NLM_GRANT_REFUSED] = "nlm_grant_refused",
	[GW_CTR_NLM_GRANT_FAILED] = "nlm_grant_failed",
	[GW_CTR_NLM_SHARE_MAPPED] = "nlm_shares_mapped",
	[GW_CTR_NLM_SHARE_REFUSED] = "nlm_shares_refused",
	[GW_CTR_NLM_SHARE_RELEASED] = "nlm_shares_released",
	[GW_CTR_NLM_SERVER_REBOOT] = "nlm_server_reboots",
	[GW_CTR_NLM_NOTIFY_RELAYED] = "nlm_notify_relayed",
	[GW_CTR_NLM_NOTIFY_FAILED] = "nlm_notify_failed",
	[GW_CTR_LOCAL_NLM_NOTIFY] = "local_nlm_notify",
	[GW_CTR_NSM_UDP_NOTIFY] = "nsm_udp_notify",
	[GW_CTR_NSM_UDP_DUPLICATE] = "nsm_udp_duplicate",
	[GW_CTR_NSM_UDP_REFUSED] = "nsm_udp_refused",
	[GW_CTR_NSM_UDP_DROPPED] = "nsm_udp_dropped",
	[GW_CTR_SERVER_CLOSED_FOR_CLIENT] = "server_closed_for_client",
	[GW_CTR_GSS_QUAR_ENTERED] = "gss_quarantine_entered",
	[GW_CTR_GSS_QUAR_CALLS] = "gss_quarantine_calls",
	[GW_CTR_GSS_QUAR_FULL] = "gss_quarantine_full",
	[GW_CTR_NLM_HOSTS_FULL] = "nlm_hosts_full",
	[GW_CTR_NLM_SOURCE_FULL] = "nlm_source_full",
	[GW_CTR_NLM_CALLER_REFUSED] = "nlm_caller_refused",
	[GW_CTR_NLM_NSM_REFUSED] = "nlm_nsm_refused",
	[GW_CTR_NSM_UDP_NOT_ADMITTED] = "nsm_udp_not_admitted",
	[GW_CTR_NLM_SERVER_NOTIFY_REFUSED] = "nlm_server_notify_refused",
	[GW_CTR_LOCAL_NLM_REFUSED] = "local_nlm_refused",
	[GW_CTR_SRC_CALL_SHARE] = "source_call_share",
	[GW_CTR_SRC_SPILL] = "source_spill",
	[GW_CTR_CLIENT_EVICTED_CALLS] = "client_evicted_calls",
	[GW_CTR_SRC_GSS_WAITS] = "source_gss_waits",
	[GW_CTR_CLIENT_GONE_UNREAD] = "client_gone_unread",
	[GW_CTR_XMAP_EVICT_OWN] = "xmap_evict_own",
	[GW_CTR_XMAP_EVICT_LARGEST] = "xmap_evict_largest",
};

const char *gw_ctr_str(enum gw_ctr c)
{
	return (unsigned)c < GW_CTR__COUNT && gw_ctr_names[c] ? gw_ctr_names[c] : "?";
}

void gw_logf(const struct gw_log *lg, enum cfg_log_level lvl, const char *func, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (lg && lg->gl_target == GW_LOG_JOURNAL) {	/* journal.c */
		gw_log_line(lg, lvl, func, line);
		return;
	}
	/* One write per line so lines from several processes do not mix. */
	gw_log_stderr(lg, lvl, func, NULL, line);
}

void gw_stats_log(const struct gw_stats *st, const struct gw_log *lg)
{
	for (unsigned i = 0; i < GW_CTR__COUNT; i++)
		if (st->gs_ctr[i])
			gw_info(lg, "counter %s = %llu", gw_ctr_str(i),
				(unsigned long long)st->gs_ctr[i]);
}

/* Milliseconds serve timeouts, idle times and XID-cache ages only: the
 * coarse clock (tick resolution, read from the vDSO without touching the
 * clock hardware) is enough.  A precise read is a system call plus an
 * emulated HPET access where the TSC is unusable (qemu TCG guests).  The
 * call path reads it through gw_pass_ms(), once per loop pass. */
uint64_t gw_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Microseconds are latencies: the precise clock, once per pass (the
 * reading kept here serves the rest of it, gw_pass_us()).  A call then
 * costs at most one read in the pass that takes its record and one in the
 * pass that writes its reply, each shared with every call there. */
uint64_t gw_pass_us_read(struct gw_stats *st)
{
	struct timespec ts;
	uint64_t us;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	us = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
	gw_stat_inc(st, GW_CTR_SYS_CLOCK);
	if (st && st->gs_pass_on) {
		st->gs_pass_us = us;
		st->gs_pass_us_old = false;
	}
	return us;
}
