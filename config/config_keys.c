// SPDX-License-Identifier: MIT
/*
 * This file contains the configuration keys of rpcrdma-gw, described once in
 * a table (as nginx describes its directives in ngx_command_t): per key its
 * section, name, type, range, default, the member it sets and what a reload
 * does when it changes.  The parser (config.c), cfg_diff() (config_diff.c),
 * cfg_dump() below and the documentation test read this table; nothing else
 * lists keys.  Here too: the value syntaxes of the file (numbers, sizes,
 * durations, booleans, names, addresses), parsed and formatted back.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "config_int.h"

static const char *const cfg_log_level_names[] = {
	[CFG_LOG_ERR] = "error", [CFG_LOG_WARN] = "warn",
	[CFG_LOG_INFO] = "info", [CFG_LOG_DEBUG] = "debug",
};
static const char *const cfg_log_format_names[] = {
	[CFG_LOGFMT_TEXT] = "text", [CFG_LOGFMT_LOGFMT] = "logfmt", [CFG_LOGFMT_JSON] = "json",
};
static const char *const cfg_transport_names[] = {
	[CFG_TRANSPORT_RDMA] = "rdma", [CFG_TRANSPORT_TCP] = "tcp",
};
static const char *const cfg_ready_when_names[] = {
	[CFG_READY_NFS] = "nfs", [CFG_READY_ALL] = "all", [CFG_READY_ANY] = "any",
};
static const char *const cfg_fallback_names[] = {
	[CFG_FALLBACK_TCP] = "tcp", [CFG_FALLBACK_NONE] = "none",
};
static const char *const cfg_v40cb_names[] = {
	[CFG_V40CB_RELAY] = "relay", [CFG_V40CB_PASSTHROUGH] = "passthrough", [CFG_V40CB_OFF] = "off",
};
static const char *const cfg_regmode_names[] = {
	[CFG_REG_MW] = "mw", [CFG_REG_REG] = "reg", [CFG_REG_PERSISTENT] = "persistent",
};
static const char *const cfg_squash_names[] = {
	[CFG_SQUASH_NONE] = "none", [CFG_SQUASH_ROOT] = "root", [CFG_SQUASH_ALL] = "all",
};
static const char *const cfg_tls_names[] = {
	[CFG_TLS_OFF] = "off", [CFG_TLS_ALLOWED] = "allowed", [CFG_TLS_REQUIRED] = "required",
};
static const char *const cfg_tls_client_cert_names[] = {
	[CFG_TLS_CC_NONE] = "none", [CFG_TLS_CC_REQUEST] = "request", [CFG_TLS_CC_REQUIRE] = "require",
};
/* The first name of a program is the one cfg_dump() writes. */
static const struct { const char *name; uint32_t prog; } cfg_prog_names[] = {
	{ "nfs", CFG_PROG_NFS }, { "mount", CFG_PROG_MOUNT }, { "mountd", CFG_PROG_MOUNT },
	{ "nlm", CFG_PROG_NLM }, { "nlockmgr", CFG_PROG_NLM }, { "nsm", CFG_PROG_NSM },
	{ "status", CFG_PROG_NSM }, { "nfs_acl", CFG_PROG_NFS_ACL },
};

#define KEY(sec, name, type)	.ky_section = CFG_SEC_##sec, .ky_name = name, .ky_type = CFG_KT_##type
#define RANGE(lo, hi)		.ky_min = (lo), .ky_max = (hi)
#define MEMBER(st, f)		.ky_off = offsetof(struct st, f), .ky_size = sizeof(((struct st *)0)->f)
#define RESTART(what)		.ky_reload = CFG_RELOAD_RESTART, .ky_what = (what)
#define PATH(what)		.ky_reload = CFG_RELOAD_PATH, .ky_what = (what)

/* In file order.  Within [gateway], the restart-only keys come in the order
 * cfg_diff() has always reported them; equal ky_what are reported once. */
static const struct cfg_key cfg_key_table[] = {
	/* [gateway] */
	{ KEY(GATEWAY, "listen", LISTEN), .ky_flags = CFG_KF_REPEAT, .ky_def_text = "0.0.0.0:2049",
	  MEMBER(cfg, cf_listen), RESTART(NULL) },
	{ KEY(GATEWAY, "log_level", ENUM), RANGE(0, CFG_LOG_DEBUG), .ky_def = CFG_LOG_INFO,
	  .ky_names = cfg_log_level_names, MEMBER(cfg, cf_log_level) },
	{ KEY(GATEWAY, "log_format", ENUM), RANGE(0, CFG_LOGFMT_JSON), .ky_def = CFG_LOGFMT_TEXT, .ky_names = cfg_log_format_names, MEMBER(cfg, cf_log_format) },
	{ KEY(GATEWAY, "buffer_size", SIZE), RANGE(4096, 1u << 30), .ky_align = 4096,
	  .ky_def = 64 * 1024, MEMBER(cfg, cf_buffer_size), RESTART("buffer pool") },
	{ KEY(GATEWAY, "buffers", UINT), RANGE(4, 1u << 24), .ky_def = 1024,
	  MEMBER(cfg, cf_buffers), RESTART("buffer pool") },
	{ KEY(GATEWAY, "hugepages", BOOL), RANGE(0, 1), .ky_def = 0,
	  MEMBER(cfg, cf_hugepages), RESTART("buffer pool") },
	{ KEY(GATEWAY, "max_record", SIZE), RANGE(1024, 0x7fffffff),
	  .ky_def = 1024 * 1024 + 8192,	/* 1 MiB WRITE + headers */
	  MEMBER(cfg, cf_max_record), RESTART(NULL) },
	{ KEY(GATEWAY, "max_calls", UINT), RANGE(1, 1u << 20), .ky_def = 4096,
	  MEMBER(cfg, cf_max_calls), RESTART(NULL) },
	{ KEY(GATEWAY, "max_clients", UINT), RANGE(1, 1u << 20), .ky_def = 1024,
	  MEMBER(cfg, cf_max_clients), RESTART(NULL) },
	/* Event loops (gateway/worker.c); buffers, max_calls and max_clients
	 * are each worker's.  0, the default: one per core of the RDMA
	 * device's NUMA node (gw_worker_auto). */
	{ KEY(GATEWAY, "workers", UINT), RANGE(0, CFG_MAX_WORKERS), .ky_def = 0,
	  MEMBER(cfg, cf_workers), RESTART(NULL) },
	/* Set once at start (gateway/main.c), before any thread exists. */
	{ KEY(GATEWAY, "realtime_priority", UINT), RANGE(0, 99), .ky_def = 0,
	  MEMBER(cfg, cf_rt_priority), RESTART(NULL) },
	{ KEY(GATEWAY, "calls_per_client", UINT), RANGE(1, 65536), .ky_def = 128,
	  MEMBER(cfg, cf_calls_per_client) },
	{ KEY(GATEWAY, "bytes_per_client", SIZE), RANGE(1, 1ull << 40), .ky_def = 16u << 20,
	  MEMBER(cfg, cf_bytes_per_client) },
	/* Buffers a client's fragment header reserves ahead of its data
	 * (gateway/record.c): a record that fits them always finishes, a
	 * header that announces much and sends nothing locks up no more. */
	{ KEY(GATEWAY, "receive_ahead", UINT), RANGE(1, 64), .ky_def = 4,
	  MEMBER(cfg, cf_receive_ahead), RESTART(NULL) },
	{ KEY(GATEWAY, "held_calls", UINT), RANGE(0, 1u << 20), .ky_def = 1024,
	  MEMBER(cfg, cf_held_calls) },
	/* 5 min: below the idle disconnect of NFS clients (Linux drops an idle
	 * transport after 5-6 min), so a well-behaved client reconnects on its
	 * own anyway, while idle connections hold nothing for long. */
	{ KEY(GATEWAY, "idle_timeout", DURATION), RANGE(0, UINT_MAX), .ky_def = 300 * 1000,
	  MEMBER(cfg, cf_idle_timeout_ms) },
	{ KEY(GATEWAY, "record_timeout", DURATION), RANGE(0, UINT_MAX), .ky_def = 30 * 1000,
	  MEMBER(cfg, cf_record_timeout_ms) },
	{ KEY(GATEWAY, "write_timeout", DURATION), RANGE(0, UINT_MAX), .ky_def = 30 * 1000,
	  MEMBER(cfg, cf_write_timeout_ms) },
	{ KEY(GATEWAY, "evict_timeout", DURATION), RANGE(0, UINT_MAX), .ky_def = 1000,
	  MEMBER(cfg, cf_evict_timeout_ms) },
	{ KEY(GATEWAY, "reconnect_interval", DURATION), RANGE(1, UINT_MAX), .ky_def = 1000,
	  MEMBER(cfg, cf_reconnect_ms) },
	{ KEY(GATEWAY, "drc_window", DURATION), RANGE(0, UINT_MAX), .ky_def = 120 * 1000,
	  MEMBER(cfg, cf_drc_window_ms) },
	{ KEY(GATEWAY, "call_timeout", DURATION), RANGE(0, UINT_MAX), .ky_def = 120 * 1000,
	  MEMBER(cfg, cf_call_timeout_ms) },
	{ KEY(GATEWAY, "admin_listen", ADDR), .ky_def_text = CFG_DEFAULT_ADMIN,
	  MEMBER(cfg, cf_admin_listen), RESTART(NULL) },
	/* Read once at start (gateway/admin.c): a new token needs a restart. */
	{ KEY(GATEWAY, "admin_token_file", PATH), .ky_def_text = "",
	  MEMBER(cfg, cf_admin_token_file), RESTART(NULL) },
	{ KEY(GATEWAY, "control_socket", PATH), .ky_def_text = CFG_DEFAULT_CONTROL,
	  MEMBER(cfg, cf_control_socket), RESTART(NULL) },
	/* Registrations are made once at start (rpcb_reg.c). */
	{ KEY(GATEWAY, "rpcbind_register", BOOL), RANGE(0, 1), .ky_def = 0,
	  MEMBER(cfg, cf_rpcbind_register), RESTART(NULL) },
	/* Admission: read at every accept, so a reload applies them to new
	 * connections (frontend-tcp/fe_admit.c). */
	{ KEY(GATEWAY, "allow", NETS), .ky_def_text = "", MEMBER(cfg, cf_allow) },
	{ KEY(GATEWAY, "deny", NETS), .ky_def_text = "", MEMBER(cfg, cf_deny) },
	{ KEY(GATEWAY, "secure_port", BOOL), RANGE(0, 1), .ky_def = 1,
	  MEMBER(cfg, cf_secure_port) },
	/* exports(5)'s name for secure_port = no */
	{ KEY(GATEWAY, "insecure", BOOL), RANGE(0, 1), .ky_def = 1, .ky_flags = CFG_KF_NEGATE,
	  MEMBER(cfg, cf_secure_port) },
	{ KEY(GATEWAY, "max_conns_per_source", UINT), RANGE(1, 1u << 20), .ky_def = 64,
	  MEMBER(cfg, cf_max_conns_per_source) },
	{ KEY(GATEWAY, "proxy_protocol", BOOL), RANGE(0, 1), .ky_def = 0,
	  MEMBER(cfg, cf_proxy_protocol) },
	/* Credential policy of each call (gateway/authpol.c). */
	{ KEY(GATEWAY, "squash", ENUM), RANGE(0, CFG_SQUASH_ALL), .ky_def = CFG_SQUASH_NONE,
	  .ky_names = cfg_squash_names, MEMBER(cfg, cf_squash) },
	{ KEY(GATEWAY, "anonuid", UINT), RANGE(0, UINT32_MAX), .ky_def = CFG_ANON_ID,
	  MEMBER(cfg, cf_anonuid) },
	{ KEY(GATEWAY, "anongid", UINT), RANGE(0, UINT32_MAX), .ky_def = CFG_ANON_ID,
	  MEMBER(cfg, cf_anongid) },
	{ KEY(GATEWAY, "reject_auth_none", BOOL), RANGE(0, 1), .ky_def = 0,
	  MEMBER(cfg, cf_reject_auth_none) },
	{ KEY(GATEWAY, "ready_when", ENUM), RANGE(0, CFG_READY_ANY), .ky_def = CFG_READY_NFS,
	  .ky_names = cfg_ready_when_names, MEMBER(cfg, cf_ready_when) },
	/* An NFSv4-only site: no MOUNT, NLM, NSM or NFS_ACL route (config.c). */
	{ KEY(GATEWAY, "v4_only", BOOL), RANGE(0, 1), .ky_def = 0, MEMBER(cfg, cf_v4_only) },
	/* RPC-with-TLS (frontend-tcp/fe_tls.c): turning it on or off needs a
	 * restart; every reload reads the files again into a new context for
	 * new handshakes (established sessions keep theirs). */
	{ KEY(GATEWAY, "tls", ENUM), RANGE(0, CFG_TLS_REQUIRED), .ky_def = CFG_TLS_OFF,
	  .ky_names = cfg_tls_names, MEMBER(cfg, cf_tls), RESTART(NULL) },
	{ KEY(GATEWAY, "tls_cert", PATH), .ky_def_text = "", MEMBER(cfg, cf_tls_cert) },
	{ KEY(GATEWAY, "tls_key", PATH), .ky_def_text = "", MEMBER(cfg, cf_tls_key) },
	{ KEY(GATEWAY, "tls_ca", PATH), .ky_def_text = "", MEMBER(cfg, cf_tls_ca) },
	{ KEY(GATEWAY, "tls_client_cert", ENUM), RANGE(0, CFG_TLS_CC_REQUIRE),
	  .ky_def = CFG_TLS_CC_NONE, .ky_names = cfg_tls_client_cert_names,
	  MEMBER(cfg, cf_tls_client_cert) },
	{ KEY(GATEWAY, "tls_allow_identity", NAMES), .ky_def_text = "",
	  MEMBER(cfg, cf_tls_allow_identity) },
	/* Read at the end of each handshake: a reload applies it to new ones. */
	{ KEY(GATEWAY, "tls_identity_squash", IDSQUASH), .ky_def_text = "",
	  MEMBER(cfg, cf_tls_identity_squash) },
	{ KEY(GATEWAY, "v40_callbacks", ENUM), RANGE(0, CFG_V40CB_OFF), .ky_def = CFG_V40CB_RELAY,
	  .ky_names = cfg_v40cb_names, MEMBER(cfg, cf_v40_callbacks) },

	/* [backend NAME]: every key is a connection parameter */
	{ KEY(BACKEND, "address", HOST), .ky_flags = CFG_KF_REQUIRED,
	  MEMBER(cfg_backend, cb_host), PATH("address") },
	{ KEY(BACKEND, "port", UINT), RANGE(1, 65535), .ky_def = 2049,
	  MEMBER(cfg_backend, cb_port), PATH("port") },
	{ KEY(BACKEND, "rdma_port", UINT), RANGE(1, 65535), .ky_def = 20049,
	  MEMBER(cfg_backend, cb_rdma_port), PATH("rdma_port") },
	/* Per worker; 0: cfg_backend_conns().  Two for one worker: a client's
	 * large block comes as several calls of the server's largest I/O, and
	 * two connections move two at once; one each for several workers, whose
	 * clients spread over as many connections and share fewer queue pairs
	 * (docs/benchmarks.md). */
	{ KEY(BACKEND, "connections", UINT), RANGE(0, 64), .ky_def = 0,
	  MEMBER(cfg_backend, cb_connections), PATH("connections") },
	{ KEY(BACKEND, "credits", UINT), RANGE(1, 1024), .ky_def = 64,
	  MEMBER(cfg_backend, cb_credits), PATH("credits") },
	/* RFC 8797 4.2: what private data carries, in 1 KiB steps */
	{ KEY(BACKEND, "inline_send", SIZE), RANGE(RPCRDMA_PD_DEFAULT_SIZE, RPCRDMA_PD_MAX_SIZE),
	  .ky_align = 1024, .ky_def = CHK_INLINE_DEFAULT, MEMBER(cfg_backend, cb_inline_send),
	  PATH("inline") },
	{ KEY(BACKEND, "inline_recv", SIZE), RANGE(RPCRDMA_PD_DEFAULT_SIZE, RPCRDMA_PD_MAX_SIZE),
	  .ky_align = 1024, .ky_def = CHK_INLINE_DEFAULT, MEMBER(cfg_backend, cb_inline_recv),
	  PATH("inline") },
	{ KEY(BACKEND, "registration", ENUM), RANGE(0, CFG_REG_PERSISTENT), .ky_def = CFG_REG_MW,
	  .ky_names = cfg_regmode_names, MEMBER(cfg_backend, cb_regmode), PATH("registration") },
	{ KEY(BACKEND, "ccp", BOOL), RANGE(0, 1), .ky_def = 0,
	  MEMBER(cfg_backend, cb_ccp), PATH("ccp") },
	{ KEY(BACKEND, "unsafe_persistent", BOOL), RANGE(0, 1), .ky_def = 0,
	  MEMBER(cfg_backend, cb_unsafe_persistent), PATH("registration") },

	/* [route NAME]: a path is (program, backend, transport, port) */
	{ KEY(ROUTE, "program", PROG), .ky_flags = CFG_KF_REQUIRED,
	  MEMBER(cfg_route, cr_prog), PATH("program") },
	{ KEY(ROUTE, "versions", VERSIONS), .ky_def_text = "0-4294967295",
	  MEMBER(cfg_route, cr_vers_low) },
	{ KEY(ROUTE, "backend", BACKEND), MEMBER(cfg_route, cr_backend), PATH("backend") },
	{ KEY(ROUTE, "transport", ENUM), RANGE(0, CFG_TRANSPORT_TCP), .ky_def = CFG_TRANSPORT_RDMA,
	  .ky_names = cfg_transport_names, MEMBER(cfg_route, cr_transport), PATH("transport") },
	{ KEY(ROUTE, "port", UINT), RANGE(0, 65535), .ky_def = 0,
	  MEMBER(cfg_route, cr_port), PATH("port") },
	{ KEY(ROUTE, "fallback", ENUM), RANGE(0, CFG_FALLBACK_NONE), .ky_def = CFG_FALLBACK_TCP,
	  .ky_names = cfg_fallback_names, MEMBER(cfg_route, cr_fallback), PATH("fallback") },

	/* [listener NAME]: its addresses, and the policy keys of [gateway]
	 * (same names, syntax and reload class), each inherited when not set:
	 * no defaults here (config.c copies the [gateway] value). */
	/* No member of its own: the addresses go to cf_listen (cl_listener);
	 * ky_off 0 is li_name, which no other key of the section shares. */
	{ KEY(LISTENER, "listen", LISTEN), .ky_flags = CFG_KF_REQUIRED | CFG_KF_REPEAT,
	  RESTART(NULL) },
	{ KEY(LISTENER, "allow", NETS), MEMBER(cfg_listener, li_pol.pol_allow) },
	{ KEY(LISTENER, "deny", NETS), MEMBER(cfg_listener, li_pol.pol_deny) },
	{ KEY(LISTENER, "secure_port", BOOL), RANGE(0, 1), .ky_def = 1,
	  MEMBER(cfg_listener, li_pol.pol_secure_port) },
	{ KEY(LISTENER, "insecure", BOOL), RANGE(0, 1), .ky_def = 1, .ky_flags = CFG_KF_NEGATE,
	  MEMBER(cfg_listener, li_pol.pol_secure_port) },
	{ KEY(LISTENER, "max_conns_per_source", UINT), RANGE(1, 1u << 20), .ky_def = 64,
	  MEMBER(cfg_listener, li_pol.pol_max_conns_per_source) },
	{ KEY(LISTENER, "proxy_protocol", BOOL), RANGE(0, 1), .ky_def = 0,
	  MEMBER(cfg_listener, li_pol.pol_proxy_protocol) },
	{ KEY(LISTENER, "squash", ENUM), RANGE(0, CFG_SQUASH_ALL), .ky_def = CFG_SQUASH_NONE,
	  .ky_names = cfg_squash_names, MEMBER(cfg_listener, li_pol.pol_squash) },
	{ KEY(LISTENER, "anonuid", UINT), RANGE(0, UINT32_MAX), .ky_def = CFG_ANON_ID,
	  MEMBER(cfg_listener, li_pol.pol_anonuid) },
	{ KEY(LISTENER, "anongid", UINT), RANGE(0, UINT32_MAX), .ky_def = CFG_ANON_ID,
	  MEMBER(cfg_listener, li_pol.pol_anongid) },
	{ KEY(LISTENER, "reject_auth_none", BOOL), RANGE(0, 1), .ky_def = 0,
	  MEMBER(cfg_listener, li_pol.pol_reject_auth_none) },
	{ KEY(LISTENER, "tls", ENUM), RANGE(0, CFG_TLS_REQUIRED), .ky_def = CFG_TLS_OFF,
	  .ky_names = cfg_tls_names, MEMBER(cfg_listener, li_pol.pol_tls), RESTART(NULL) },
	{ KEY(LISTENER, "tls_cert", PATH), MEMBER(cfg_listener, li_pol.pol_tls_cert) },
	{ KEY(LISTENER, "tls_key", PATH), MEMBER(cfg_listener, li_pol.pol_tls_key) },
	{ KEY(LISTENER, "tls_ca", PATH), MEMBER(cfg_listener, li_pol.pol_tls_ca) },
	{ KEY(LISTENER, "tls_client_cert", ENUM), RANGE(0, CFG_TLS_CC_REQUIRE),
	  .ky_def = CFG_TLS_CC_NONE, .ky_names = cfg_tls_client_cert_names,
	  MEMBER(cfg_listener, li_pol.pol_tls_client_cert) },
	{ KEY(LISTENER, "tls_allow_identity", NAMES),
	  MEMBER(cfg_listener, li_pol.pol_tls_allow_identity) },
	{ KEY(LISTENER, "tls_identity_squash", IDSQUASH),
	  MEMBER(cfg_listener, li_pol.pol_tls_identity_squash) },
};
_Static_assert(sizeof(cfg_key_table) / sizeof(cfg_key_table[0]) <= CFG_KEYS_MAX,
	       "raise CFG_KEYS_MAX");

#undef KEY
#undef RANGE
#undef MEMBER
#undef RESTART
#undef PATH

const struct cfg_key *cfg_keys(size_t *n)
{
	*n = sizeof(cfg_key_table) / sizeof(cfg_key_table[0]);
	return cfg_key_table;
}

const struct cfg_key *cfg_key_find(enum cfg_section s, const char *name)
{
	for (size_t i = 0; i < sizeof(cfg_key_table) / sizeof(cfg_key_table[0]); i++)
		if (cfg_key_table[i].ky_section == s && !strcmp(cfg_key_table[i].ky_name, name))
			return &cfg_key_table[i];
	return NULL;
}

unsigned cfg_key_index(const struct cfg_key *k)
{
	return (unsigned)(k - cfg_key_table);
}

const char *cfg_log_level_str(enum cfg_log_level l)
{
	return (unsigned)l <= CFG_LOG_DEBUG ? cfg_log_level_names[l] : "?";
}

const char *cfg_ready_when_str(enum cfg_ready_when w)
{
	return (unsigned)w <= CFG_READY_ANY ? cfg_ready_when_names[w] : "?";
}

const char *cfg_regmode_str(enum cfg_regmode m)
{
	return (unsigned)m <= CFG_REG_PERSISTENT ? cfg_regmode_names[m] : "?";
}

/* ---- value syntaxes: true = parsed ---- */

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s == '\0' || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end != '\0')
		return false;
	*out = v;
	return true;
}

/* A number with a one-unit suffix from units[] (multipliers in mult[]);
 * no suffix means mult[0]. */
static bool parse_unit(const char *s, const char *const *units, const uint64_t *mult, unsigned n,
		       uint64_t *out)
{
	char num[32];
	size_t len = strlen(s);
	uint64_t m = mult[0], v;

	if (len == 0 || len >= sizeof(num))
		return false;
	memcpy(num, s, len + 1);
	for (unsigned i = 1; i < n; i++) {
		size_t u = strlen(units[i]);

		if (len > u && !strcasecmp(num + len - u, units[i])) {
			m = mult[i];
			num[len - u] = '\0';
			break;
		}
	}
	if (!parse_u64(num, &v) || v > UINT64_MAX / m)
		return false;
	*out = v * m;
	return true;
}

/* Bytes with an optional k, m or g suffix (powers of 1024). */
static bool parse_size(const char *s, uint64_t *out)
{
	static const char *const units[] = { "", "k", "m", "g" };
	static const uint64_t mult[] = { 1, 1ull << 10, 1ull << 20, 1ull << 30 };

	return parse_unit(s, units, mult, 4, out);
}

/* Duration: "30" or "30s" seconds, "500ms", "5m"; result in milliseconds.
 * "ms" is tried before "m" and "s". */
static bool parse_duration(const char *s, uint64_t *ms)
{
	static const char *const units[] = { "", "ms", "s", "m" };
	static const uint64_t mult[] = { 1000, 1, 1000, 60000 };

	return parse_unit(s, units, mult, 4, ms);
}

static bool parse_bool(const char *s, bool *b)
{
	if (!strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "on")) {
		*b = true;
		return true;
	}
	if (!strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "off")) {
		*b = false;
		return true;
	}
	return false;
}

static bool parse_name(const char *const *names, unsigned n, const char *s, unsigned *out)
{
	for (unsigned i = 0; i < n; i++)
		if (names[i] && !strcasecmp(names[i], s)) {
			*out = i;
			return true;
		}
	return false;
}

bool cfg_parse_prog(const char *s, uint32_t *prog)
{
	uint64_t v;

	for (size_t i = 0; i < sizeof(cfg_prog_names) / sizeof(cfg_prog_names[0]); i++)
		if (!strcasecmp(cfg_prog_names[i].name, s)) {
			*prog = cfg_prog_names[i].prog;
			return true;
		}
	if (!parse_u64(s, &v) || v > UINT32_MAX)
		return false;
	*prog = (uint32_t)v;
	return true;
}

/* "3" or "3-4" */
bool cfg_parse_versions(const char *s, uint32_t *lo, uint32_t *hi)
{
	char buf[32];
	char *dash;
	uint64_t a, b;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (!parse_u64(buf, &a) || a > UINT32_MAX)
		return false;
	b = a;
	if (dash && (!parse_u64(dash + 1, &b) || b > UINT32_MAX))
		return false;
	if (b < a)
		return false;
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	return true;
}

bool cfg_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= CFG_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(name[i] == '-' || name[i] == '_' || name[i] == '.' ||
		      (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

bool cfg_parse_sockaddr(const char *text, uint16_t default_port, struct sockaddr_storage *ss,
			socklen_t *len)
{
	char host[CFG_HOST_MAX];
	const char *port_s = NULL;
	uint16_t port = default_port;
	uint64_t v;
	size_t n;

	memset(ss, 0, sizeof(*ss));
	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (!close || (size_t)(close - text - 1) >= sizeof(host))
			return false;
		n = close - text - 1;
		memcpy(host, text + 1, n);
		host[n] = '\0';
		if (close[1] == ':')
			port_s = close + 2;
		else if (close[1] != '\0')
			return false;
	} else {
		const char *colon = strchr(text, ':');

		if (colon && strchr(colon + 1, ':'))	/* bare IPv6, no port */
			colon = NULL;
		n = colon ? (size_t)(colon - text) : strlen(text);
		if (n >= sizeof(host))
			return false;
		memcpy(host, text, n);
		host[n] = '\0';
		if (colon)
			port_s = colon + 1;
	}
	if (port_s) {
		if (!parse_u64(port_s, &v) || v == 0 || v > 65535)
			return false;
		port = (uint16_t)v;
	}
	if (port == 0)
		return false;
	{
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
			sin->sin_family = AF_INET;
			sin->sin_port = htons(port);
			*len = sizeof(*sin);
			return true;
		}
		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(port);
			*len = sizeof(*sin6);
			return true;
		}
	}
	return false;
}

/* One network: ADDRESS or ADDRESS/PREFIX, IPv4 or IPv6.  Bits past the
 * prefix must be zero: "10.1.2.3/8" is refused as a likely typo. */
static bool parse_net(const char *s, struct cfg_net *n)
{
	char host[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	size_t len = slash ? (size_t)(slash - s) : strlen(s);
	uint64_t bits;
	unsigned max;

	if (len == 0 || len >= sizeof(host))
		return false;
	memcpy(host, s, len);
	host[len] = '\0';
	memset(n, 0, sizeof(*n));
	if (inet_pton(AF_INET, host, n->nt_addr + 12) == 1) {
		n->nt_addr[10] = n->nt_addr[11] = 0xff;
		max = 32;
	} else if (inet_pton(AF_INET6, host, n->nt_addr) == 1) {
		max = 128;
	} else {
		return false;
	}
	bits = max;
	if (slash && (!parse_u64(slash + 1, &bits) || bits > max))
		return false;
	n->nt_bits = (unsigned)bits + (128 - max);
	for (unsigned b = n->nt_bits; b < 128; b++)
		if (n->nt_addr[b / 8] & (0x80u >> (b % 8)))
			return false;
	return true;
}

bool cfg_parse_nets(const char *s, struct cfg_nets *out)
{
	char buf[CFG_HOST_MAX];
	char *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		return false;
	memset(out, 0, sizeof(*out));
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
		if (out->ns_n == CFG_MAX_NETS || !parse_net(tok, &out->ns_net[out->ns_n]))
			return false;
		out->ns_n++;
	}
	snprintf(out->ns_text, sizeof(out->ns_text), "%s", s);
	return true;
}

/* One entry of tls_identity_squash at *pos: NAME:MODE, the mode after
 * the last ':' (a name may hold ':' itself). */
bool cfg_idsq_next(const char **pos, const char **name, size_t *len, enum cfg_squash *mode)
{
	const char *p = *pos + strspn(*pos, " \t,");
	size_t n = strcspn(p, " \t,");
	char m[8];
	unsigned u;

	if (n == 0)
		return false;
	for (*len = n; *len && p[*len - 1] != ':'; (*len)--)
		;
	if (*len < 2 || n - *len >= sizeof(m))
		return false;
	memcpy(m, p + *len, n - *len);
	m[n - *len] = '\0';
	if (!parse_name(cfg_squash_names, CFG_SQUASH_ALL + 1, m, &u))
		return false;
	*pos = p + n;	/* only past a good entry: the parser sees where it stopped */
	*name = p;
	(*len)--;
	*mode = (enum cfg_squash)u;
	return true;
}

/* ---- keys: number values, members, messages, text ---- */

bool cfg_key_number(const struct cfg_key *k, const char *s, uint64_t *out)
{
	uint64_t v;
	unsigned u;
	bool b;

	switch (k->ky_type) {
	case CFG_KT_UINT:
		if (!parse_u64(s, &v))
			return false;
		break;
	case CFG_KT_SIZE:
		if (!parse_size(s, &v))
			return false;
		break;
	case CFG_KT_DURATION:
		if (!parse_duration(s, &v))
			return false;
		break;
	case CFG_KT_BOOL:
		if (!parse_bool(s, &b))
			return false;
		v = b ^ !!(k->ky_flags & CFG_KF_NEGATE);
		break;
	case CFG_KT_ENUM:
		if (!parse_name(k->ky_names, (unsigned)k->ky_max + 1, s, &u))
			return false;
		v = u;
		break;
	default:
		return false;
	}
	if (v < k->ky_min || v > k->ky_max || (k->ky_align && v % k->ky_align))
		return false;
	*out = v;
	return true;
}

uint64_t cfg_key_get(const struct cfg_key *k, const void *obj)
{
	const char *p = (const char *)obj + k->ky_off;
	uint32_t u32;
	uint16_t u16;
	uint64_t u64;
	bool b;

	switch (k->ky_size) {
	case sizeof(bool):
		memcpy(&b, p, sizeof(b));
		return b;
	case sizeof(u16):
		memcpy(&u16, p, sizeof(u16));
		return u16;
	case sizeof(u32):
		memcpy(&u32, p, sizeof(u32));
		return u32;
	default:
		memcpy(&u64, p, sizeof(u64));
		return u64;
	}
}

void cfg_key_put(const struct cfg_key *k, void *obj, uint64_t v)
{
	char *p = (char *)obj + k->ky_off;
	uint32_t u32 = (uint32_t)v;
	uint16_t u16 = (uint16_t)v;
	bool b = v != 0;

	switch (k->ky_size) {
	case sizeof(bool):
		memcpy(p, &b, sizeof(b));
		break;
	case sizeof(u16):
		memcpy(p, &u16, sizeof(u16));
		break;
	case sizeof(u32):
		memcpy(p, &u32, sizeof(u32));
		break;
	default:
		memcpy(p, &v, sizeof(v));
		break;
	}
}

/* 65536 -> "64k", 1056768 -> "1032k", 1000 -> "1000" */
static void fmt_size(uint64_t v, char *buf, size_t len)
{
	static const char sfx[] = "gmk";

	for (int i = 0; i < 3 && v; i++) {
		uint64_t unit = 1ull << (10 * (3 - i));

		if (v % unit == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", v / unit, sfx[i]);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, v);
}

/* milliseconds: 900000 -> "15m", 30000 -> "30s", 500 -> "500ms" */
static void fmt_duration(uint64_t ms, char *buf, size_t len)
{
	if (ms == 0)
		snprintf(buf, len, "0");
	else if (ms % 60000 == 0)
		snprintf(buf, len, "%" PRIu64 "m", ms / 60000);
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ms", ms);
}

void cfg_key_hint(const struct cfg_key *k, char *buf, size_t len)
{
	char a[24], b[24], c[24];
	size_t o = 0;

	switch (k->ky_type) {
	case CFG_KT_UINT:
		snprintf(buf, len, "%" PRIu64 "..%" PRIu64, k->ky_min, k->ky_max);
		break;
	case CFG_KT_SIZE:
		fmt_size(k->ky_min, a, sizeof(a));
		fmt_size(k->ky_max, b, sizeof(b));
		fmt_size(k->ky_align, c, sizeof(c));
		snprintf(buf, len, "bytes, %s..%s%s%s", a, b, k->ky_align ? ", a multiple of " : "",
			 k->ky_align ? c : "");
		break;
	case CFG_KT_DURATION:
		fmt_duration(k->ky_min, a, sizeof(a));
		snprintf(buf, len, "a duration: 30, 30s, 500ms, 5m%s%s", k->ky_min ? "; at least " : "",
			 k->ky_min ? a : "");
		break;
	case CFG_KT_BOOL:
		snprintf(buf, len, "on or off (yes/no, true/false, 1/0)");
		break;
	case CFG_KT_ENUM:
		buf[0] = '\0';
		for (uint64_t i = 0; i <= k->ky_max && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", i == 0 ? "" :
					      i == k->ky_max ? " or " : ", ", k->ky_names[i]);
		break;
	case CFG_KT_HOST:
		snprintf(buf, len, "a host name or address");
		break;
	case CFG_KT_PATH:
		snprintf(buf, len, "an absolute path below %zu bytes, or empty for off", k->ky_size);
		break;
	case CFG_KT_NAMES:
		snprintf(buf, len, "names (letters, digits, . - _ : @ *) separated by blanks or "
			 "commas, below %zu bytes; or empty", k->ky_size);
		break;
	case CFG_KT_IDSQUASH:
		snprintf(buf, len, "NAME:MODE entries (MODE none, root or all; NAME as in "
			 "tls_allow_identity) separated by blanks or commas, below %zu bytes; or empty",
			 k->ky_size);
		break;
	case CFG_KT_LISTEN:
	case CFG_KT_ADDR:
		snprintf(buf, len, "ADDRESS[:PORT], IPv6 as [ADDR]:PORT%s",
			 k->ky_type == CFG_KT_ADDR ? ", unix:/ABSOLUTE/PATH, or empty for off" : "");
		break;
	case CFG_KT_PROG:
		snprintf(buf, len, "a number or nfs, mount, nlm, nsm, nfs_acl");
		break;
	case CFG_KT_VERSIONS:
		snprintf(buf, len, "N or LOW-HIGH");
		break;
	case CFG_KT_BACKEND:
		snprintf(buf, len, "a backend name");
		break;
	case CFG_KT_NETS:
		snprintf(buf, len, "up to %d of ADDRESS[/PREFIX], IPv4 or IPv6, host bits zero; "
			 "or empty", CFG_MAX_NETS);
		break;
	}
}

void cfg_key_text(const struct cfg *cf, const struct cfg_key *k, const void *obj, char *buf,
		  size_t len)
{
	const struct cfg_route *r = obj;
	uint64_t v = 0;

	if (cfg_key_is_number(k))
		v = cfg_key_get(k, obj);
	switch (k->ky_type) {
	case CFG_KT_UINT:
		snprintf(buf, len, "%" PRIu64, v);
		break;
	case CFG_KT_SIZE:
		fmt_size(v, buf, len);
		break;
	case CFG_KT_DURATION:
		fmt_duration(v, buf, len);
		break;
	case CFG_KT_BOOL:
		snprintf(buf, len, "%s", (v ^ !!(k->ky_flags & CFG_KF_NEGATE)) ? "on" : "off");
		break;
	case CFG_KT_ENUM:
		snprintf(buf, len, "%s", v <= k->ky_max ? k->ky_names[v] : "?");
		break;
	case CFG_KT_HOST:
	case CFG_KT_PATH:
	case CFG_KT_ADDR:
	case CFG_KT_NAMES:
	case CFG_KT_IDSQUASH:
		snprintf(buf, len, "%s", (const char *)obj + k->ky_off);
		break;
	case CFG_KT_LISTEN:	/* several lines: cfg_dump() writes them */
		buf[0] = '\0';
		break;
	case CFG_KT_PROG:
		snprintf(buf, len, "%" PRIu32, r->cr_prog);
		for (size_t i = 0; i < sizeof(cfg_prog_names) / sizeof(cfg_prog_names[0]); i++)
			if (cfg_prog_names[i].prog == r->cr_prog) {
				snprintf(buf, len, "%s", cfg_prog_names[i].name);
				break;
			}
		break;
	case CFG_KT_VERSIONS:
		if (r->cr_vers_low == r->cr_vers_high)
			snprintf(buf, len, "%" PRIu32, r->cr_vers_low);
		else
			snprintf(buf, len, "%" PRIu32 "-%" PRIu32, r->cr_vers_low, r->cr_vers_high);
		break;
	case CFG_KT_BACKEND:
		snprintf(buf, len, "%s", r->cr_backend < cf->cf_nbackends
			 ? cf->cf_backends[r->cr_backend].cb_name : "");
		break;
	case CFG_KT_NETS:
		snprintf(buf, len, "%s", ((const struct cfg_nets *)((const char *)obj + k->ky_off))->ns_text);
		break;
	}
}

/* ---- the effective configuration as a file ---- */

static void cfg_dump_section(const struct cfg *cf, enum cfg_section s, const void *obj, FILE *f)
{
	char val[CFG_VALUE_MAX];

	for (size_t i = 0; i < sizeof(cfg_key_table) / sizeof(cfg_key_table[0]); i++) {
		const struct cfg_key *k = &cfg_key_table[i];

		if (k->ky_section != s)
			continue;
		if (k->ky_type == CFG_KT_LISTEN) {
			unsigned li = s == CFG_SEC_LISTENER
				      ? (unsigned)((const struct cfg_listener *)obj - cf->cf_listeners) : 0;

			for (unsigned l = 0; l < cf->cf_nlisten; l++)
				if (cf->cf_listen[l].cl_listener == li)
					fprintf(f, "%s = %s\n", k->ky_name, cf->cf_listen[l].cl_text);
			continue;
		}
		cfg_key_text(cf, k, obj, val, sizeof(val));
		fprintf(f, "%s = %s\n", k->ky_name, val);
	}
}

void cfg_dump(const struct cfg *cf, FILE *f)
{
	fprintf(f, "# rpcrdma-gw effective configuration: every key, defaults filled in\n[gateway]\n");
	cfg_dump_section(cf, CFG_SEC_GATEWAY, cf, f);
	for (unsigned i = 0; i < cf->cf_nbackends; i++) {
		fprintf(f, "\n[backend %s]\n", cf->cf_backends[i].cb_name);
		cfg_dump_section(cf, CFG_SEC_BACKEND, &cf->cf_backends[i], f);
	}
	for (unsigned i = 0; i < cf->cf_nroutes; i++) {
		fprintf(f, "\n[route %s]\n", cf->cf_routes[i].cr_name);
		cfg_dump_section(cf, CFG_SEC_ROUTE, &cf->cf_routes[i], f);
	}
	/* Every key with its effective value, inherited ones too. */
	for (unsigned i = 1; i < cf->cf_nlisteners; i++) {
		fprintf(f, "\n[listener %s]\n", cf->cf_listeners[i].li_name);
		cfg_dump_section(cf, CFG_SEC_LISTENER, &cf->cf_listeners[i], f);
	}
}
