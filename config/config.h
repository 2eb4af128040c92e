/* SPDX-License-Identifier: MIT */
/*
 * config.h - configuration of rpcrdma-gw (prefix cfg_).
 *
 * The file is INI (libinih).  It is parsed once into an immutable struct cfg
 * that the rest of the daemon reads through a const pointer; a reload parses
 * a new value and swaps it (nginx style), it never edits one in place.  All
 * arrays are fixed-size, so a struct cfg is one allocation.
 *
 * Every key is described once, in the table of config_keys.c (struct
 * cfg_key: section, name, type, range, default, the member it sets, what a
 * reload does when it changes).  The table drives parsing, defaults, range
 * checks, cfg_diff(), cfg_dump() and the test that holds the documentation
 * (rpcrdma-gw.conf(5), docs/configuration.md, the sample) to the same keys.
 *
 * Return conventions: constructors return NULL on failure and write a
 * one-line reason `file:line: reason` into the caller's buffer; predicates
 * return bool.
 */
#ifndef RPCRDMA_GW_CONFIG_H
#define RPCRDMA_GW_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "chunking.h"

#define CFG_DEFAULT_PATH	"/etc/rpcrdma-gw/rpcrdma-gw.conf"
#define CFG_MAX_LISTEN		8
/* cf_listeners[0] is [gateway]'s own (its listen =, its policy), then up to
 * CFG_MAX_LISTEN [listener NAME] sections. */
#define CFG_MAX_LISTENERS	(CFG_MAX_LISTEN + 1)
#define CFG_LISTENER_GATEWAY	"gateway"	/* name of cf_listeners[0], reserved */
#define CFG_MAX_BACKENDS	8
#define CFG_MAX_WORKERS	16	/* gateway/worker.c: event loops */
#define CFG_MAX_ROUTES		32
#define CFG_NAME_MAX		32
#define CFG_HOST_MAX		256
#define CFG_ADMIN_PORT		9466
#define CFG_DEFAULT_ADMIN	"127.0.0.1:9466"
#define CFG_DEFAULT_CONTROL	"/run/rpcrdma-gw/control"
#define CFG_FILE_MAX		(1u << 20)	/* bytes of a configuration file */
#define CFG_MAX_NETS		16	/* networks of one allow = or deny = */
#define CFG_ANON_ID		65534	/* anonuid, anongid: nobody, nogroup */
/* Bound of the key table's length (config_keys.c). */
#define CFG_KEYS_MAX		96
/* The main file, then up to 32 files of its conf.d/ directory. */
#define CFG_CONFD		"conf.d"
#define CFG_MAX_FILES		33
/* A location in the configuration: file index (cf_files) and line, one int. */
#define CFG_LOC_SHIFT		20
#define CFG_LOC(file, line)	((int)((unsigned)(file) << CFG_LOC_SHIFT | (unsigned)(line)))
#define CFG_LOC_FILE(loc)	((unsigned)(loc) >> CFG_LOC_SHIFT)
#define CFG_LOC_LINE(loc)	((int)((unsigned)(loc) & ((1u << CFG_LOC_SHIFT) - 1)))
/* A path value may start so: the directory systemd's LoadCredential= fills. */
#define CFG_CRED_PREFIX		"$CREDENTIALS_DIRECTORY/"

/* Well-known programs the default routes name (numbers: chunking.h). */
#define CFG_PROG_NFS		((uint32_t)CHK_PROG_NFS)
#define CFG_PROG_MOUNT		((uint32_t)CHK_PROG_MOUNT)
#define CFG_PROG_NLM		((uint32_t)CHK_PROG_NLM)
#define CFG_PROG_NSM		((uint32_t)CHK_PROG_NSM)
#define CFG_PROG_NFS_ACL	((uint32_t)CHK_PROG_NFSACL)	/* served by nfsd on the NFS port */

enum cfg_log_level { CFG_LOG_ERR = 0, CFG_LOG_WARN, CFG_LOG_INFO, CFG_LOG_DEBUG };
/* How a log line is written on stderr (gateway/logfmt.c); the journal has fields. */
enum cfg_log_format { CFG_LOGFMT_TEXT = 0, CFG_LOGFMT_LOGFMT, CFG_LOGFMT_JSON };
enum cfg_transport { CFG_TRANSPORT_RDMA = 0, CFG_TRANSPORT_TCP };
enum cfg_regmode { CFG_REG_MW = 0, CFG_REG_REG, CFG_REG_PERSISTENT };
enum cfg_squash { CFG_SQUASH_NONE = 0, CFG_SQUASH_ROOT, CFG_SQUASH_ALL };

/* One network of allow = or deny =: IPv4 is kept IPv4-mapped
 * (::ffff:a.b.c.d, prefix + 96), so one match covers both families. */
struct cfg_net {
	uint8_t nt_addr[16];
	unsigned nt_bits;			/* prefix length, 0..128 */
};
struct cfg_nets {
	unsigned ns_n;
	struct cfg_net ns_net[CFG_MAX_NETS];
	char ns_text[CFG_HOST_MAX];		/* as written, for dump and diff */
};
/* What /readyz and READY=1 wait for (gateway/metrics.c gw_ctx_ready). */
enum cfg_ready_when { CFG_READY_NFS = 0, CFG_READY_ALL, CFG_READY_ANY };
/* What an rdma route does while RDMA cannot carry its calls. */
enum cfg_fallback { CFG_FALLBACK_TCP = 0, CFG_FALLBACK_NONE };
/* RPC-with-TLS (RFC 9289) on the listeners (frontend-tcp/fe_tls.c). */
enum cfg_tls { CFG_TLS_OFF = 0, CFG_TLS_ALLOWED, CFG_TLS_REQUIRED };
enum cfg_tls_client_cert { CFG_TLS_CC_NONE = 0, CFG_TLS_CC_REQUEST, CFG_TLS_CC_REQUIRE };
/* What SETCLIENTID's cb_location becomes (NFSv4.0 callbacks, gateway/cb40.c). */
enum cfg_v40cb { CFG_V40CB_RELAY = 0, CFG_V40CB_PASSTHROUGH, CFG_V40CB_OFF };

struct cfg_listen {
	struct sockaddr_storage cl_addr;
	socklen_t cl_addrlen;
	char cl_text[CFG_HOST_MAX + 8];		/* as written, for logs */
	int cl_line;
	unsigned cl_listener;			/* index in cf_listeners */
};

/* What a listener applies to its connections: admission at accept
 * (frontend-tcp/fe_admit.c), RPC-with-TLS (fe_tls.c), the credential
 * policy of their calls (gateway/authpol.c).  Each member has the
 * [gateway] key of the same name; a [listener NAME] inherits every key it
 * does not set (config.c resolves them: the values here are effective). */
struct cfg_policy {
	struct cfg_nets pol_allow;		/* empty: every address */
	struct cfg_nets pol_deny;		/* wins over allow */
	bool pol_secure_port;			/* source port < 1024 required */
	unsigned pol_max_conns_per_source;
	bool pol_proxy_protocol;		/* connections start with a PROXY v2 header */
	enum cfg_squash pol_squash;		/* AUTH_SYS */
	uint32_t pol_anonuid, pol_anongid;
	bool pol_reject_auth_none;		/* AUTH_NONE only for the NULL procedure */
	enum cfg_tls pol_tls;
	char pol_tls_cert[CFG_HOST_MAX];
	char pol_tls_key[CFG_HOST_MAX];
	char pol_tls_ca[CFG_HOST_MAX];
	enum cfg_tls_client_cert pol_tls_client_cert;
	char pol_tls_allow_identity[CFG_HOST_MAX];
	char pol_tls_identity_squash[CFG_HOST_MAX];	/* "IDENT:MODE ..." (cfg_idsq_next) */
};

struct cfg_listener {
	char li_name[CFG_NAME_MAX];		/* CFG_LISTENER_GATEWAY for [gateway]'s */
	int li_line;
	struct cfg_policy li_pol;
};

struct cfg_backend {
	char cb_name[CFG_NAME_MAX];
	char cb_host[CFG_HOST_MAX];		/* address or host name */
	uint16_t cb_port;			/* TCP port of NFS (2049) */
	uint16_t cb_rdma_port;			/* RPC-over-RDMA port (20049) */
	unsigned cb_connections;		/* RDMA connections per worker; 0 auto */
	unsigned cb_credits;			/* credits asked of the server */
	unsigned cb_inline_send;		/* bytes, RFC 8797 sizes */
	unsigned cb_inline_recv;
	enum cfg_regmode cb_regmode;
	bool cb_ccp;				/* CONF_RDMA first (draft-08 6) */
	bool cb_unsafe_persistent;		/* registration = persistent accepted knowingly */
	int cb_line;
};

struct cfg_route {
	char cr_name[CFG_NAME_MAX];
	uint32_t cr_prog;
	uint32_t cr_vers_low, cr_vers_high;	/* 0..UINT32_MAX = any */
	unsigned cr_backend;			/* index in cfg_backends */
	enum cfg_transport cr_transport;
	uint16_t cr_port;			/* TCP transport: 0 = ask rpcbind */
	enum cfg_fallback cr_fallback;		/* rdma routes: TCP while RDMA is down */
	int cr_line;
};

struct cfg {
	char cf_path[CFG_HOST_MAX];
	/* The files read: cf_files[0] the main one (cf_path), then those of
	 * its conf.d/ in name order.  cf_src: where each key was set, per
	 * listener ([0]: [gateway]) and key table index, a CFG_LOC (0: not
	 * set there); see cfg_key_where(). */
	unsigned cf_nfiles;
	char cf_files[CFG_MAX_FILES][CFG_HOST_MAX];
	int cf_src[CFG_MAX_LISTENERS][CFG_KEYS_MAX];
	unsigned cf_nlisten;
	struct cfg_listen cf_listen[CFG_MAX_LISTEN];
	unsigned cf_nbackends;
	struct cfg_backend cf_backends[CFG_MAX_BACKENDS];
	unsigned cf_nroutes;
	struct cfg_route cf_routes[CFG_MAX_ROUTES];
	enum cfg_log_level cf_log_level;
	enum cfg_log_format cf_log_format;	/* stderr lines: text, logfmt or JSON */
	/* limits */
	uint32_t cf_max_record;		/* bytes of one RPC record */
	unsigned cf_max_clients;
	unsigned cf_max_calls;		/* call objects (calls in flight, all clients) */
	unsigned cf_workers;		/* event loops, each with its own pool and calls; 0 auto */
	unsigned cf_rt_priority;	/* SCHED_RR priority of every thread; 0: normal scheduling */
	unsigned cf_calls_per_client;	/* calls in flight per client */
	size_t cf_bytes_per_client;	/* bytes of calls+replies queued per client */
	unsigned cf_held_calls;		/* calls held per backend while it is down */
	unsigned cf_receive_ahead;	/* buffers a fragment header reserves ahead of its data */
	/* buffer pool */
	uint32_t cf_buffer_size;
	unsigned cf_buffers;
	bool cf_hugepages;
	/* timeouts, milliseconds (0 = none) */
	unsigned cf_idle_timeout_ms;
	unsigned cf_record_timeout_ms;
	unsigned cf_write_timeout_ms;	/* replies queued, none written for this long: close */
	unsigned cf_evict_timeout_ms;	/* the same while the pool is short */
	unsigned cf_reconnect_ms;
	unsigned cf_drc_window_ms;	/* keep answered XIDs this long */
	unsigned cf_call_timeout_ms;	/* no server reply by then: client closed; 0 never */
	/* operations (gateway/admin.c, gateway/control.c) */
	char cf_admin_listen[CFG_HOST_MAX + 8];	/* HTTP /metrics /healthz /readyz; "" = off */
	struct sockaddr_storage cf_admin_addr;	/* AF_UNIX for "unix:PATH" */
	socklen_t cf_admin_addrlen;
	char cf_admin_token_file[108];	/* bearer token every admin request needs; "" = none */
	char cf_control_socket[108];		/* Unix socket of rpcrdma-gwctl; "" = off */
	bool cf_rpcbind_register;	/* register the listeners with the local rpcbind */
	/* The [gateway] policy keys: admission, credentials and TLS.  The
	 * frontend and authpol read cf_listeners[] (each listener's resolved
	 * copy; [0] has these values). */
	/* admission (frontend-tcp/fe_admit.c) */
	struct cfg_nets cf_allow;	/* empty: every address */
	struct cfg_nets cf_deny;	/* wins over allow */
	bool cf_secure_port;		/* source port < 1024 required */
	unsigned cf_max_conns_per_source;
	bool cf_proxy_protocol;		/* connections start with a PROXY v2 header */
	/* credential policy of calls (gateway/authpol.c) */
	enum cfg_squash cf_squash;	/* AUTH_SYS */
	uint32_t cf_anonuid, cf_anongid;
	bool cf_reject_auth_none;	/* AUTH_NONE only for the NULL procedure */
	enum cfg_ready_when cf_ready_when;	/* /readyz, READY=1 */
	bool cf_v4_only;		/* NFSv4 only: the default routes are NFS v4 alone */
	/* RPC-with-TLS (frontend-tcp/fe_tls.c) */
	enum cfg_tls cf_tls;
	char cf_tls_cert[CFG_HOST_MAX];		/* PEM chain served; "" = none */
	char cf_tls_key[CFG_HOST_MAX];		/* its PEM private key */
	char cf_tls_ca[CFG_HOST_MAX];		/* PEM CAs client certificates must chain to */
	enum cfg_tls_client_cert cf_tls_client_cert;
	char cf_tls_allow_identity[CFG_HOST_MAX];	/* names a client certificate must have; "" any */
	char cf_tls_identity_squash[CFG_HOST_MAX];	/* squash per certificate name */
	enum cfg_v40cb cf_v40_callbacks;	/* NFSv4.0 cb_location: relay, as is, cleared */
	/* The listeners: [0] has [gateway]'s policy, the others their
	 * section's, every key resolved (admission, TLS and squash read these) */
	unsigned cf_nlisteners;
	struct cfg_listener cf_listeners[CFG_MAX_LISTENERS];
};

/* Command-line values that override the file (see rpcrdma-gw --help). */
struct cfg_overrides {
	const char *co_listen[CFG_MAX_LISTEN];	/* replace every listen = (all [gateway]'s) */
	unsigned co_nlisten;
	const char *co_backend;		/* HOST[:PORT]: replaces the first backend's address */
	int co_verbose;			/* each -v raises the log level one step */
};

/* Parse path (NULL: no file, overrides and defaults only). */
struct cfg *cfg_load(const char *path, const struct cfg_overrides *ov, char *err, size_t errlen);
/* Same over a string; name is used in messages (tests). */
struct cfg *cfg_parse_string(const char *text, const char *name, const struct cfg_overrides *ov,
			     char *err, size_t errlen);
void cfg_free(struct cfg *cf);
/* "FILE:LINE" of where listener li's value of key was set (in its section,
 * else in [gateway]) into buf; false (buf "") when it is the default. */
bool cfg_key_where(const struct cfg *cf, unsigned li, const char *key, char *buf, size_t len);
/* "FILE:LINE" of a location (CFG_LOC) into buf. */
const char *cfg_loc_text(const struct cfg *cf, int loc, char *buf, size_t len);
/* A path value as the daemon opens it: CFG_CRED_PREFIX replaced by
 * $CREDENTIALS_DIRECTORY.  0, -ENOENT when that variable is not set (out
 * ""), -ENAMETOOLONG. */
int cfg_path_resolve(const char *path, char *out, size_t len);

/* ---- The keys, described once (config_keys.c) ---- */
enum cfg_section { CFG_SEC_GATEWAY = 0, CFG_SEC_BACKEND, CFG_SEC_ROUTE, CFG_SEC_LISTENER };
enum cfg_key_type {	/* the number types (cfg_key_number) come first */
	CFG_KT_UINT = 0,	/* decimal number */
	CFG_KT_SIZE,		/* bytes; k, m, g suffixes (powers of 1024) */
	CFG_KT_DURATION,	/* milliseconds; seconds or ms, s, m suffix in the file */
	CFG_KT_BOOL,		/* yes/no, true/false, on/off, 1/0 */
	CFG_KT_ENUM,		/* one of ky_names, stored as its index */
	CFG_KT_HOST,		/* host name or address, not empty */
	CFG_KT_PATH,		/* absolute path, or empty for off */
	CFG_KT_LISTEN,		/* ADDRESS[:PORT] added to cf_listen */
	CFG_KT_ADDR,		/* ADDRESS[:PORT], unix:PATH or empty: the text, and cf_admin_addr */
	CFG_KT_PROG,		/* RPC program: number or name */
	CFG_KT_VERSIONS,	/* N or LOW-HIGH: cr_vers_low, cr_vers_high */
	CFG_KT_BACKEND,		/* a [backend NAME]'s name; cr_backend once resolved */
	CFG_KT_NETS,		/* CIDR list (struct cfg_nets), may be empty */
	CFG_KT_NAMES,		/* names separated by blanks or commas, may be empty */
	CFG_KT_IDSQUASH,	/* NAME:MODE entries (MODE a squash name), may be empty */
};
/* What a reload does when the key's value changes (cfg_diff). */
enum cfg_reload {
	CFG_RELOAD_VALUE = 0,	/* applied in place */
	CFG_RELOAD_RESTART,	/* needs a restart: the reload is refused */
	CFG_RELOAD_PATH,	/* its backend or route is removed and added again */
};
#define CFG_KF_REQUIRED	0x1u	/* the section needs it (no default) */
#define CFG_KF_REPEAT	0x2u	/* may be given several times */
/* BOOL: the file's value is the negation of the member's (ky_def is the
 * member's), an alias of the key of the section that shares the member
 * ("insecure" of "secure_port"); both given must agree. */
#define CFG_KF_NEGATE	0x4u
struct cfg_key {
	enum cfg_section ky_section;
	const char *ky_name;
	enum cfg_key_type ky_type;
	unsigned ky_flags;		/* CFG_KF_* */
	uint64_t ky_min, ky_max;	/* UINT, SIZE, DURATION (ms); ENUM: last index */
	uint64_t ky_align;		/* SIZE: a multiple of this; 0 = any */
	uint64_t ky_def;		/* default of UINT, SIZE, DURATION, BOOL, ENUM */
	const char *ky_def_text;	/* default of the other types, as written; NULL = none */
	size_t ky_off, ky_size;		/* the member in struct cfg, cfg_backend, cfg_route or cfg_listener */
	const char *const *ky_names;	/* ENUM: value names */
	enum cfg_reload ky_reload;
	const char *ky_what;		/* reload: the name cfg_diff reports; NULL = ky_name */
};
/* The table, in file order; *n is set to its length. */
const struct cfg_key *cfg_keys(size_t *n);

/* Reload as a list of actions (pure: old and new configuration in, actions
 * out; gateway.c applies them).  Identity is the section name.  A backend
 * is kept when every connection parameter (address, ports, connections,
 * credits, inline sizes, registration) is equal; otherwise it is removed and
 * added again.  A route is kept when program, backend (itself kept),
 * transport and port are equal (its versions may change in place);
 * otherwise removed and added.  Keys only a restart applies
 * (CFG_RELOAD_RESTART in the table) come as CFG_ACT_RESTART with the key's
 * ky_what in ac_what, in table order. */
enum cfg_act_kind {
	CFG_ACT_BACKEND_KEEP = 0,
	CFG_ACT_BACKEND_ADD,
	CFG_ACT_BACKEND_REMOVE,
	CFG_ACT_ROUTE_KEEP,
	CFG_ACT_ROUTE_ADD,
	CFG_ACT_ROUTE_REMOVE,
	CFG_ACT_RESTART,
};
#define CFG_ACT_NONE	(~0u)
struct cfg_action {
	enum cfg_act_kind ac_kind;
	unsigned ac_old;		/* index in the old cf_backends/cf_routes, or CFG_ACT_NONE */
	unsigned ac_new;		/* index in the new one, or CFG_ACT_NONE */
	const char *ac_what;		/* RESTART: the key; REMOVE: why ("removed", "address", ...) */
};
#define CFG_DIFF_MAX	(2 * CFG_MAX_BACKENDS + 2 * CFG_MAX_ROUTES + 8)
struct cfg_diff {
	unsigned cdf_n;
	struct cfg_action cdf_act[CFG_DIFF_MAX];	/* backends, then routes, then restarts */
	unsigned cdf_nrestart;			/* CFG_ACT_RESTART entries */
	unsigned cdf_nchanges;			/* adds + removes + kept routes whose versions moved */
	bool cdf_values;				/* a value a running daemon takes changed */
	char cdf_values_what[256];		/* which: "log_level, [listener edge] squash, route
						 * nfs versions" (table order; "..." when longer) */
};
void cfg_diff(const struct cfg *old, const struct cfg *new_cf, struct cfg_diff *d);

/* The effective configuration in the file's own syntax: every key of every
 * section, defaults filled in (the default routes too).  Parsing the text
 * gives the same configuration (rpcrdma-gw --check-config --dump). */
void cfg_dump(const struct cfg *cf, FILE *f);

/* tls_identity_squash: the entry at *pos (name and its length, mode), *pos
 * moved past it; false at the end or at an entry that is not NAME:MODE
 * (*pos left on it: the parser tells a bad entry from the end so). */
bool cfg_idsq_next(const char **pos, const char **name, size_t *len, enum cfg_squash *mode);

/* The route for a program, or NULL. */
const struct cfg_route *cfg_route_find(const struct cfg *cf, uint32_t prog);
/* A worker's RDMA connections to b: its `connections`, or for 0 two when
 * the gateway runs one worker and one each when it runs several. */
unsigned cfg_backend_conns(const struct cfg_backend *b, unsigned nworkers);

const char *cfg_log_level_str(enum cfg_log_level l);
const char *cfg_regmode_str(enum cfg_regmode m);
const char *cfg_ready_when_str(enum cfg_ready_when w);
/* "1.2.3.4:2049" or "[::1]:2049" into a sockaddr; false if not numeric. */
bool cfg_parse_sockaddr(const char *text, uint16_t default_port, struct sockaddr_storage *ss,
			socklen_t *len);

#endif /* RPCRDMA_GW_CONFIG_H */
