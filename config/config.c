// SPDX-License-Identifier: MIT
/*
 * This file contains the configuration parser of rpcrdma-gw: libinih reads
 * the INI text, one handler fills a struct cfg, then a validation pass checks
 * what only the whole file can tell (a route naming a backend defined later,
 * limits that contradict each other).  Every message is `file:line: reason`.
 *
 * inih does not pass line numbers to handlers in Debian's build, so the file
 * is read through our own fgets-style reader that counts lines; the handler
 * runs right after the reader returned the line that holds the key, so the
 * count is that key's line.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <ini.h>

#include "config.h"

/* The record iovec list (gateway/record.h GW_REC_MAX_IOV) bounds how many
 * pool buffers one record may span; keep two spare for fragment splits. */
#define CFG_REC_MAX_BUFFERS	62

struct cfg_parser {
	struct cfg *cp_cfg;
	const char *cp_name;		/* file name for messages */
	int cp_line;			/* line last handed to inih */
	int cp_long_line;		/* first line longer than inih's buffer */
	int cp_section_line;		/* line of the last [section] header */
	bool cp_section_new;		/* a header was read since the last key */
	FILE *cp_file;			/* reader source: a FILE ... */
	const char *cp_text;		/* ... or a string */
	char cp_section[128];		/* last section seen */
	struct cfg_backend *cp_backend;	/* section being filled */
	struct cfg_route *cp_route;
	char cp_rb[CFG_MAX_ROUTES][CFG_NAME_MAX];	/* route -> backend name */
	int cp_rb_line[CFG_MAX_ROUTES];
	char *cp_err;
	size_t cp_errlen;
	bool cp_failed;
};

static const char *const cfg_log_level_names[] = {
	[CFG_LOG_ERR] = "error", [CFG_LOG_WARN] = "warn",
	[CFG_LOG_INFO] = "info", [CFG_LOG_DEBUG] = "debug",
};
static const char *const cfg_transport_names[] = {
	[CFG_TRANSPORT_RDMA] = "rdma", [CFG_TRANSPORT_TCP] = "tcp",
};
static const char *const cfg_regmode_names[] = {
	[CFG_REG_MW] = "mw", [CFG_REG_REG] = "reg", [CFG_REG_PERSISTENT] = "persistent",
};
static const struct { const char *name; uint32_t prog; } cfg_prog_names[] = {
	{ "nfs", CFG_PROG_NFS }, { "mount", CFG_PROG_MOUNT }, { "mountd", CFG_PROG_MOUNT },
	{ "nlm", CFG_PROG_NLM }, { "nlockmgr", CFG_PROG_NLM }, { "nsm", CFG_PROG_NSM },
	{ "status", CFG_PROG_NSM }, { "nfs_acl", CFG_PROG_NFS_ACL },
};

const char *cfg_log_level_str(enum cfg_log_level l)
{
	return (unsigned)l < 4 ? cfg_log_level_names[l] : "?";
}

const char *cfg_regmode_str(enum cfg_regmode m)
{
	return (unsigned)m < 3 ? cfg_regmode_names[m] : "?";
}

static bool cfg_fail(struct cfg_parser *cp, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static bool cfg_fail(struct cfg_parser *cp, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (cp->cp_failed)	/* first error wins */
		return false;
	cp->cp_failed = true;
	if (!cp->cp_err || cp->cp_errlen == 0)
		return false;
	if (line > 0)
		n = snprintf(cp->cp_err, cp->cp_errlen, "%s:%d: ", cp->cp_name, line);
	else
		n = snprintf(cp->cp_err, cp->cp_errlen, "%s: ", cp->cp_name);
	if (n < 0 || (size_t)n >= cp->cp_errlen)
		return false;
	va_start(ap, fmt);
	vsnprintf(cp->cp_err + n, cp->cp_errlen - n, fmt, ap);
	va_end(ap);
	return false;
}

/* ---- value parsers: bool, true = parsed ---- */

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

static bool parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v;

	if (!parse_u64(s, &v) || v > max)
		return false;
	*out = v;
	return true;
}

/* Bytes with an optional k, m or g suffix (powers of 1024). */
static bool parse_size(const char *s, uint64_t max, uint64_t *out)
{
	char num[32];
	size_t n = strlen(s);
	uint64_t mult = 1, v;

	if (n == 0 || n >= sizeof(num))
		return false;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'k': case 'K': mult = 1ull << 10; num[--n] = '\0'; break;
	case 'm': case 'M': mult = 1ull << 20; num[--n] = '\0'; break;
	case 'g': case 'G': mult = 1ull << 30; num[--n] = '\0'; break;
	}
	if (!parse_u64(num, &v) || v > max / mult)
		return false;
	*out = v * mult;
	return true;
}

/* Duration: "30" or "30s" seconds, "500ms", "5m"; result in milliseconds. */
static bool parse_duration(const char *s, unsigned *ms)
{
	char num[32];
	size_t n = strlen(s);
	uint64_t mult = 1000, v;

	if (n == 0 || n >= sizeof(num))
		return false;
	memcpy(num, s, n + 1);
	if (n > 2 && strcmp(num + n - 2, "ms") == 0) {
		mult = 1;
		num[n - 2] = '\0';
	} else if (num[n - 1] == 's') {
		num[n - 1] = '\0';
	} else if (num[n - 1] == 'm') {
		mult = 60000;
		num[n - 1] = '\0';
	}
	if (!parse_u64(num, &v) || v > UINT_MAX / mult)
		return false;
	*ms = (unsigned)(v * mult);
	return true;
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

static bool parse_prog(const char *s, uint32_t *prog)
{
	uint64_t v;

	for (size_t i = 0; i < sizeof(cfg_prog_names) / sizeof(cfg_prog_names[0]); i++)
		if (!strcasecmp(cfg_prog_names[i].name, s)) {
			*prog = cfg_prog_names[i].prog;
			return true;
		}
	if (!parse_uint(s, UINT32_MAX, &v))
		return false;
	*prog = (uint32_t)v;
	return true;
}

/* "3" or "3-4" */
static bool parse_versions(const char *s, uint32_t *lo, uint32_t *hi)
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
	if (!parse_uint(buf, UINT32_MAX, &a))
		return false;
	b = a;
	if (dash && !parse_uint(dash + 1, UINT32_MAX, &b))
		return false;
	if (b < a)
		return false;
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	return true;
}

static bool parse_port(const char *s, uint16_t *port, bool zero_ok)
{
	uint64_t v;

	if (!parse_uint(s, 65535, &v) || (v == 0 && !zero_ok))
		return false;
	*port = (uint16_t)v;
	return true;
}

bool cfg_parse_sockaddr(const char *text, uint16_t default_port, struct sockaddr_storage *ss,
			socklen_t *len)
{
	char host[CFG_HOST_MAX];
	const char *port_s = NULL;
	uint16_t port = default_port;
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
	if (port_s && !parse_port(port_s, &port, false))
		return false;
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

/* ---- defaults ---- */

static void cfg_backend_defaults(struct cfg_backend *b, const char *name, int line)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->cb_name, sizeof(b->cb_name), "%s", name);
	b->cb_port = 2049;
	b->cb_rdma_port = 20049;
	b->cb_connections = 1;
	b->cb_credits = 64;
	b->cb_inline_send = CHK_INLINE_DEFAULT;
	b->cb_inline_recv = CHK_INLINE_DEFAULT;
	b->cb_regmode = CFG_REG_MW;
	b->cb_line = line;
}

static void cfg_defaults(struct cfg *cf)
{
	cf->cf_log_level = CFG_LOG_INFO;
	cf->cf_max_record = 1024 * 1024 + 8192;	/* 1 MiB WRITE + headers */
	cf->cf_max_clients = 1024;
	cf->cf_max_calls = 4096;
	cf->cf_calls_per_client = 128;
	cf->cf_bytes_per_client = 16u << 20;
	cf->cf_held_calls = 1024;
	cf->cf_buffer_size = 64 * 1024;
	cf->cf_buffers = 1024;
	cf->cf_hugepages = false;
	cf->cf_rpcbind_register = false;
	cf->cf_idle_timeout_ms = 900 * 1000;
	cf->cf_record_timeout_ms = 30 * 1000;
	cf->cf_reconnect_ms = 1000;
	cf->cf_drc_window_ms = 120 * 1000;
	snprintf(cf->cf_admin_listen, sizeof(cf->cf_admin_listen), "%s", CFG_DEFAULT_ADMIN);
	cfg_parse_sockaddr(CFG_DEFAULT_ADMIN, CFG_ADMIN_PORT, &cf->cf_admin_addr, &cf->cf_admin_addrlen);
	snprintf(cf->cf_control_socket, sizeof(cf->cf_control_socket), "%s", CFG_DEFAULT_CONTROL);
}

/* ---- the inih reader and handler ---- */

static char *cfg_reader(char *str, int num, void *stream)
{
	struct cfg_parser *cp = stream;
	size_t n;

	if (cp->cp_file) {
		if (!fgets(str, num, cp->cp_file))
			return NULL;
		n = strlen(str);
	} else {
		const char *nl;

		if (*cp->cp_text == '\0')
			return NULL;
		nl = strchr(cp->cp_text, '\n');
		n = nl ? (size_t)(nl - cp->cp_text + 1) : strlen(cp->cp_text);
		if (n > (size_t)num - 1)
			n = num - 1;
		memcpy(str, cp->cp_text, n);
		str[n] = '\0';
		cp->cp_text += n;
	}
	cp->cp_line++;
	{
		const char *p = str;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '[') {
			cp->cp_section_line = cp->cp_line;
			cp->cp_section_new = true;
		}
	}
	/* A line longer than the buffer comes back in pieces: refuse it. */
	if (n == (size_t)num - 1 && str[n - 1] != '\n' && !cp->cp_long_line)
		cp->cp_long_line = cp->cp_line;
	return str;
}

static bool cfg_section_is(const char *section, const char *kind, const char **name)
{
	size_t k = strlen(kind);

	if (strncmp(section, kind, k) != 0 || (section[k] != ' ' && section[k] != '\t'))
		return false;
	section += k;
	while (*section == ' ' || *section == '\t')
		section++;
	*name = section;
	return true;
}

static bool cfg_name_ok(const char *name)
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

static bool cfg_add_listen(struct cfg_parser *cp, const char *v, int line)
{
	struct cfg *cf = cp->cp_cfg;
	struct cfg_listen *l;

	if (cf->cf_nlisten == CFG_MAX_LISTEN)
		return cfg_fail(cp, line, "too many listen addresses (max %d)", CFG_MAX_LISTEN);
	l = &cf->cf_listen[cf->cf_nlisten];
	if (!cfg_parse_sockaddr(v, 2049, &l->cl_addr, &l->cl_addrlen))
		return cfg_fail(cp, line, "listen: '%s' is not ADDRESS[:PORT] (IPv6 as [ADDR]:PORT)", v);
	snprintf(l->cl_text, sizeof(l->cl_text), "%s", v);
	l->cl_line = line;
	cf->cf_nlisten++;
	return true;
}

#define BAD(what) cfg_fail(cp, line, "%s: invalid value '%s' (%s)", name, value, what)

static bool cfg_gateway_key(struct cfg_parser *cp, const char *name, const char *value, int line)
{
	struct cfg *cf = cp->cp_cfg;
	uint64_t v;
	unsigned u;

	if (!strcmp(name, "listen"))
		return cfg_add_listen(cp, value, line);
	if (!strcmp(name, "admin_listen")) {
		if (*value && !cfg_parse_sockaddr(value, CFG_ADMIN_PORT, &cf->cf_admin_addr,
						  &cf->cf_admin_addrlen))
			return BAD("ADDRESS[:PORT], IPv6 as [ADDR]:PORT, or empty for off");
		snprintf(cf->cf_admin_listen, sizeof(cf->cf_admin_listen), "%s", value);
		return true;
	}
	if (!strcmp(name, "control_socket")) {
		if (*value && (*value != '/' || strlen(value) >= sizeof(cf->cf_control_socket)))
			return BAD("absolute path below 108 bytes, or empty for off");
		snprintf(cf->cf_control_socket, sizeof(cf->cf_control_socket), "%s", value);
		return true;
	}
	if (!strcmp(name, "log_level")) {
		if (!parse_name(cfg_log_level_names, 4, value, &u))
			return BAD("error, warn, info or debug");
		cf->cf_log_level = u;
		return true;
	}
	if (!strcmp(name, "max_record")) {
		if (!parse_size(value, 0x7fffffff, &v) || v < 1024)
			return BAD("bytes, 1k..2g");
		cf->cf_max_record = (uint32_t)v;
		return true;
	}
	if (!strcmp(name, "max_clients")) {
		if (!parse_uint(value, 1u << 20, &v) || v == 0)
			return BAD("1..1048576");
		cf->cf_max_clients = (unsigned)v;
		return true;
	}
	if (!strcmp(name, "max_calls")) {
		if (!parse_uint(value, 1u << 20, &v) || v == 0)
			return BAD("1..1048576");
		cf->cf_max_calls = (unsigned)v;
		return true;
	}
	if (!strcmp(name, "calls_per_client")) {
		if (!parse_uint(value, 65536, &v) || v == 0)
			return BAD("1..65536");
		cf->cf_calls_per_client = (unsigned)v;
		return true;
	}
	if (!strcmp(name, "bytes_per_client")) {
		if (!parse_size(value, 1ull << 40, &v) || v == 0)
			return BAD("bytes");
		cf->cf_bytes_per_client = (size_t)v;
		return true;
	}
	if (!strcmp(name, "held_calls")) {
		if (!parse_uint(value, 1u << 20, &v))
			return BAD("0..1048576");
		cf->cf_held_calls = (unsigned)v;
		return true;
	}
	if (!strcmp(name, "buffer_size")) {
		if (!parse_size(value, 1u << 30, &v) || v < 4096 || (v & 4095))
			return BAD("a multiple of 4096, at least 4k");
		cf->cf_buffer_size = (uint32_t)v;
		return true;
	}
	if (!strcmp(name, "buffers")) {
		if (!parse_uint(value, 1u << 24, &v) || v < 4)
			return BAD("4..16777216");
		cf->cf_buffers = (unsigned)v;
		return true;
	}
	if (!strcmp(name, "rpcbind_register")) {
		if (!parse_bool(value, &cf->cf_rpcbind_register))
			return BAD("on or off");
		return true;
	}
	if (!strcmp(name, "hugepages")) {
		if (!parse_bool(value, &cf->cf_hugepages))
			return BAD("yes or no");
		return true;
	}
	if (!strcmp(name, "idle_timeout"))
		return parse_duration(value, &cf->cf_idle_timeout_ms) ? true : BAD("duration: 30, 30s, 500ms, 5m");
	if (!strcmp(name, "record_timeout"))
		return parse_duration(value, &cf->cf_record_timeout_ms) ? true : BAD("duration: 30, 30s, 500ms, 5m");
	if (!strcmp(name, "reconnect_interval")) {
		if (!parse_duration(value, &cf->cf_reconnect_ms) || cf->cf_reconnect_ms == 0)
			return BAD("duration above 0");
		return true;
	}
	if (!strcmp(name, "drc_window"))
		return parse_duration(value, &cf->cf_drc_window_ms) ? true : BAD("duration: 30, 30s, 500ms, 5m");
	return cfg_fail(cp, line, "unknown key '%s' in [gateway]", name);
}

static bool cfg_backend_key(struct cfg_parser *cp, struct cfg_backend *b, const char *name,
			    const char *value, int line)
{
	uint64_t v;
	unsigned u;

	if (!strcmp(name, "address")) {
		if (value[0] == '\0' || strlen(value) >= sizeof(b->cb_host))
			return BAD("a host name or address");
		snprintf(b->cb_host, sizeof(b->cb_host), "%s", value);
		return true;
	}
	if (!strcmp(name, "port"))
		return parse_port(value, &b->cb_port, false) ? true : BAD("1..65535");
	if (!strcmp(name, "rdma_port"))
		return parse_port(value, &b->cb_rdma_port, false) ? true : BAD("1..65535");
	if (!strcmp(name, "connections")) {
		if (!parse_uint(value, 64, &v) || v == 0)
			return BAD("1..64");
		b->cb_connections = (unsigned)v;
		return true;
	}
	if (!strcmp(name, "credits")) {
		if (!parse_uint(value, 1024, &v) || v == 0)
			return BAD("1..1024");
		b->cb_credits = (unsigned)v;
		return true;
	}
	if (!strcmp(name, "inline_send") || !strcmp(name, "inline_recv")) {
		/* RFC 8797 4.2: 1 KiB units, 1024..262144 */
		if (!parse_size(value, RPCRDMA_PD_MAX_SIZE, &v) || v < RPCRDMA_PD_DEFAULT_SIZE ||
		    (v & 1023))
			return BAD("a multiple of 1024, 1k..256k");
		if (name[7] == 's')
			b->cb_inline_send = (unsigned)v;
		else
			b->cb_inline_recv = (unsigned)v;
		return true;
	}
	if (!strcmp(name, "registration")) {
		if (!parse_name(cfg_regmode_names, 3, value, &u))
			return BAD("mw, reg or persistent");
		b->cb_regmode = u;
		return true;
	}
	if (!strcmp(name, "ccp"))
		return parse_bool(value, &b->cb_ccp) ? true : BAD("on or off");
	return cfg_fail(cp, line, "unknown key '%s' in [backend %s]", name, b->cb_name);
}

static bool cfg_route_key(struct cfg_parser *cp, struct cfg_route *r, const char *name,
			  const char *value, int line)
{
	unsigned idx = r - cp->cp_cfg->cf_routes;
	unsigned u;

	if (!strcmp(name, "program"))
		return parse_prog(value, &r->cr_prog) ? true : BAD("a number or nfs, mount, nlm, nsm, nfs_acl");
	if (!strcmp(name, "versions"))
		return parse_versions(value, &r->cr_vers_low, &r->cr_vers_high) ? true : BAD("N or LOW-HIGH");
	if (!strcmp(name, "backend")) {
		if (!cfg_name_ok(value))
			return BAD("a backend name");
		snprintf(cp->cp_rb[idx], CFG_NAME_MAX, "%s", value);
		cp->cp_rb_line[idx] = line;
		return true;
	}
	if (!strcmp(name, "transport")) {
		if (!parse_name(cfg_transport_names, 2, value, &u))
			return BAD("rdma or tcp");
		r->cr_transport = u;
		return true;
	}
	if (!strcmp(name, "port"))
		return parse_port(value, &r->cr_port, true) ? true : BAD("0..65535, 0 = ask rpcbind");
	return cfg_fail(cp, line, "unknown key '%s' in [route %s]", name, r->cr_name);
}

/* A new section header: start the object it describes. */
static bool cfg_section_start(struct cfg_parser *cp, const char *section, int line)
{
	struct cfg *cf = cp->cp_cfg;
	const char *name;

	snprintf(cp->cp_section, sizeof(cp->cp_section), "%s", section);
	cp->cp_section_new = false;
	cp->cp_backend = NULL;
	cp->cp_route = NULL;
	if (!strcmp(section, "gateway") || section[0] == '\0')
		return true;
	if (cfg_section_is(section, "backend", &name)) {
		if (!cfg_name_ok(name))
			return cfg_fail(cp, line, "backend name '%s' must be 1-31 of [A-Za-z0-9._-]", name);
		for (unsigned i = 0; i < cf->cf_nbackends; i++)
			if (!strcmp(cf->cf_backends[i].cb_name, name))
				return cfg_fail(cp, line, "backend '%s' defined twice (first at line %d)",
						name, cf->cf_backends[i].cb_line);
		if (cf->cf_nbackends == CFG_MAX_BACKENDS)
			return cfg_fail(cp, line, "too many backends (max %d)", CFG_MAX_BACKENDS);
		cp->cp_backend = &cf->cf_backends[cf->cf_nbackends++];
		cfg_backend_defaults(cp->cp_backend, name, line);
		return true;
	}
	if (cfg_section_is(section, "route", &name)) {
		struct cfg_route *r;

		if (!cfg_name_ok(name))
			return cfg_fail(cp, line, "route name '%s' must be 1-31 of [A-Za-z0-9._-]", name);
		for (unsigned i = 0; i < cf->cf_nroutes; i++)
			if (!strcmp(cf->cf_routes[i].cr_name, name))
				return cfg_fail(cp, line, "route '%s' defined twice (first at line %d)",
						name, cf->cf_routes[i].cr_line);
		if (cf->cf_nroutes == CFG_MAX_ROUTES)
			return cfg_fail(cp, line, "too many routes (max %d)", CFG_MAX_ROUTES);
		r = &cf->cf_routes[cf->cf_nroutes++];
		memset(r, 0, sizeof(*r));
		snprintf(r->cr_name, sizeof(r->cr_name), "%s", name);
		r->cr_prog = UINT32_MAX;	/* unset; validate insists */
		r->cr_vers_low = 0;
		r->cr_vers_high = UINT32_MAX;
		r->cr_transport = CFG_TRANSPORT_RDMA;
		r->cr_line = line;
		cp->cp_route = r;
		return true;
	}
	return cfg_fail(cp, line, "unknown section [%s] (gateway, backend NAME, route NAME)", section);
}

static int cfg_handler(void *user, const char *section, const char *name, const char *value)
{
	struct cfg_parser *cp = user;
	int line = cp->cp_line;

	if (cp->cp_failed)
		return 0;
	if ((cp->cp_section_new || strcmp(section, cp->cp_section) != 0) &&
	    !cfg_section_start(cp, section, cp->cp_section_line ? cp->cp_section_line : line))
		return 0;
	if (cp->cp_backend)
		return cfg_backend_key(cp, cp->cp_backend, name, value, line);
	if (cp->cp_route)
		return cfg_route_key(cp, cp->cp_route, name, value, line);
	return cfg_gateway_key(cp, name, value, line);
}

#undef BAD

/* ---- overrides, implicit routes, validation ---- */

static bool cfg_apply_overrides(struct cfg_parser *cp, const struct cfg_overrides *ov)
{
	struct cfg *cf = cp->cp_cfg;

	if (!ov)
		return true;
	if (ov->co_nlisten) {
		cf->cf_nlisten = 0;
		for (unsigned i = 0; i < ov->co_nlisten && i < CFG_MAX_LISTEN; i++) {
			const char *saved = cp->cp_name;

			cp->cp_name = "--listen";
			if (!cfg_add_listen(cp, ov->co_listen[i], 0))
				return false;
			cp->cp_name = saved;
		}
	}
	if (ov->co_backend) {
		struct cfg_backend *b = &cf->cf_backends[0];
		const char *v = ov->co_backend;
		const char *port = NULL;
		char host[CFG_HOST_MAX];
		size_t n;

		if (cf->cf_nbackends == 0) {
			cfg_backend_defaults(b, "default", 0);
			cf->cf_nbackends = 1;
		}
		/* HOST, HOST:PORT, [V6]:PORT or a bare IPv6 address */
		if (v[0] == '[') {
			const char *close = strchr(v, ']');

			if (!close)
				goto bad;
			n = close - v - 1;
			if (close[1] == ':')
				port = close + 2;
			else if (close[1] != '\0')
				goto bad;
			v++;
		} else {
			const char *colon = strchr(v, ':');

			if (colon && strchr(colon + 1, ':'))
				colon = NULL;
			n = colon ? (size_t)(colon - v) : strlen(v);
			if (colon)
				port = colon + 1;
		}
		if (n == 0 || n >= sizeof(host))
			goto bad;
		memcpy(host, v, n);
		host[n] = '\0';
		snprintf(b->cb_host, sizeof(b->cb_host), "%s", host);
		if (port && !parse_port(port, &b->cb_port, false))
			goto bad;
	}
	if (ov->co_verbose > 0) {
		int l = (int)cf->cf_log_level + ov->co_verbose;

		cf->cf_log_level = l > CFG_LOG_DEBUG ? CFG_LOG_DEBUG : (enum cfg_log_level)l;
	}
	return true;
bad:
	cp->cp_name = "--backend";
	return cfg_fail(cp, 0, "'%s' is not HOST[:PORT]", ov->co_backend);
}

/* Without any [route], NFS goes to the first backend and MOUNT/NLM/NSM
 * follow it over TCP, ports from the server's rpcbind; NFS_ACL (which Linux
 * clients probe with NFSv3) goes over TCP to the NFS port. */
static void cfg_default_routes(struct cfg *cf)
{
	static const struct { const char *name; uint32_t prog; enum cfg_transport tr; } defs[] = {
		{ "nfs", CFG_PROG_NFS, CFG_TRANSPORT_RDMA },
		{ "mount", CFG_PROG_MOUNT, CFG_TRANSPORT_TCP },
		{ "nlm", CFG_PROG_NLM, CFG_TRANSPORT_TCP },
		{ "nsm", CFG_PROG_NSM, CFG_TRANSPORT_TCP },
		{ "nfs_acl", CFG_PROG_NFS_ACL, CFG_TRANSPORT_TCP },
	};

	for (unsigned i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		struct cfg_route *r = &cf->cf_routes[cf->cf_nroutes++];

		memset(r, 0, sizeof(*r));
		snprintf(r->cr_name, sizeof(r->cr_name), "%s", defs[i].name);
		r->cr_prog = defs[i].prog;
		r->cr_vers_high = UINT32_MAX;
		r->cr_backend = 0;
		r->cr_transport = defs[i].tr;
	}
}

static bool cfg_validate(struct cfg_parser *cp)
{
	struct cfg *cf = cp->cp_cfg;

	if (cf->cf_nbackends == 0)
		return cfg_fail(cp, 0, "no [backend NAME] section and no --backend");
	for (unsigned i = 0; i < cf->cf_nbackends; i++) {
		const struct cfg_backend *b = &cf->cf_backends[i];

		if (b->cb_host[0] == '\0')
			return cfg_fail(cp, b->cb_line, "backend '%s' has no address", b->cb_name);
	}
	for (unsigned i = 0; i < cf->cf_nroutes; i++) {
		struct cfg_route *r = &cf->cf_routes[i];
		unsigned b;

		if (r->cr_prog == UINT32_MAX)
			return cfg_fail(cp, r->cr_line, "route '%s' has no program", r->cr_name);
		if (cp->cp_rb[i][0] == '\0') {
			if (cf->cf_nbackends > 1)
				return cfg_fail(cp, r->cr_line,
						"route '%s' has no backend (needed with several backends)",
						r->cr_name);
			r->cr_backend = 0;
		} else {
			for (b = 0; b < cf->cf_nbackends; b++)
				if (!strcmp(cf->cf_backends[b].cb_name, cp->cp_rb[i]))
					break;
			if (b == cf->cf_nbackends)
				return cfg_fail(cp, cp->cp_rb_line[i], "route '%s': no backend named '%s'",
						r->cr_name, cp->cp_rb[i]);
			r->cr_backend = b;
		}
		for (unsigned j = 0; j < i; j++)
			if (cf->cf_routes[j].cr_prog == r->cr_prog)
				return cfg_fail(cp, r->cr_line, "route '%s': program %u already routed by '%s'",
						r->cr_name, r->cr_prog, cf->cf_routes[j].cr_name);
	}
	if (cf->cf_nroutes == 0)
		cfg_default_routes(cf);
	if (cf->cf_nlisten == 0) {
		const char *saved = cp->cp_name;

		cp->cp_name = "default listen";
		if (!cfg_add_listen(cp, "0.0.0.0:2049", 0))
			return false;
		cp->cp_name = saved;
	}
	if ((cf->cf_max_record + cf->cf_buffer_size - 1) / cf->cf_buffer_size + 1 > CFG_REC_MAX_BUFFERS)
		return cfg_fail(cp, 0, "max_record %u spans more than %d buffers of buffer_size %u; "
				"raise buffer_size", cf->cf_max_record, CFG_REC_MAX_BUFFERS - 1,
				cf->cf_buffer_size);
	if (cf->cf_bytes_per_client < cf->cf_max_record)
		return cfg_fail(cp, 0, "bytes_per_client %zu is below max_record %u",
				cf->cf_bytes_per_client, cf->cf_max_record);
	{
		/* Same worst case as gw_rx_record_buffers() (gateway/record.c):
		 * a receiver may leave min(4096, buffer_size / 8) bytes of a
		 * buffer unused.  One record per route is kept for replies,
		 * and clients need room for at least one record of their own. */
		uint32_t lowat = cf->cf_buffer_size / 8 < 4096 ? cf->cf_buffer_size / 8 : 4096;
		uint32_t per = cf->cf_buffer_size - lowat;
		uint64_t rec = (cf->cf_max_record + per - 1) / per + 1;
		uint64_t need = rec * (cf->cf_nroutes + 1) + 1;

		if (cf->cf_buffers < need)
			return cfg_fail(cp, 0, "buffers = %u is too few: %llu needed for max_record %u "
					"with %u routes (one record per route for replies, one for clients)",
					cf->cf_buffers, (unsigned long long)need, cf->cf_max_record,
					cf->cf_nroutes);
	}
	return true;
}

static struct cfg *cfg_run(struct cfg_parser *cp, const struct cfg_overrides *ov)
{
	struct cfg *cf = cp->cp_cfg;
	int rc = 0;

	cfg_defaults(cf);
	if (cp->cp_file || cp->cp_text) {
		rc = ini_parse_stream(cfg_reader, cp, cfg_handler, cp);
		if (cp->cp_long_line && !cp->cp_failed)
			cfg_fail(cp, cp->cp_long_line, "line too long (max %d characters)", INI_MAX_LINE - 3);
		if (rc > 0 && !cp->cp_failed)
			cfg_fail(cp, rc, "syntax error (expected [section] or key = value)");
		else if (rc < 0 && !cp->cp_failed)
			cfg_fail(cp, 0, "cannot parse (error %d)", rc);
	}
	if (!cp->cp_failed)
		cfg_apply_overrides(cp, ov);
	if (!cp->cp_failed)
		cfg_validate(cp);
	if (cp->cp_failed) {
		free(cf);
		return NULL;
	}
	return cf;
}

struct cfg *cfg_load(const char *path, const struct cfg_overrides *ov, char *err, size_t errlen)
{
	struct cfg_parser cp = { .cp_name = path ? path : "command line", .cp_err = err,
				 .cp_errlen = errlen };
	struct cfg *cf;

	if (err && errlen)
		err[0] = '\0';
	cf = calloc(1, sizeof(*cf));
	if (!cf) {
		cfg_fail(&cp, 0, "out of memory");
		return NULL;
	}
	cp.cp_cfg = cf;
	if (path) {
		snprintf(cf->cf_path, sizeof(cf->cf_path), "%s", path);
		cp.cp_file = fopen(path, "r");
		if (!cp.cp_file) {
			cfg_fail(&cp, 0, "cannot open: %s", strerror(errno));
			free(cf);
			return NULL;
		}
	}
	cf = cfg_run(&cp, ov);
	if (cp.cp_file)
		fclose(cp.cp_file);
	return cf;
}

struct cfg *cfg_parse_string(const char *text, const char *name, const struct cfg_overrides *ov,
			     char *err, size_t errlen)
{
	struct cfg_parser cp = { .cp_name = name, .cp_text = text, .cp_err = err, .cp_errlen = errlen };

	if (err && errlen)
		err[0] = '\0';
	cp.cp_cfg = calloc(1, sizeof(*cp.cp_cfg));
	if (!cp.cp_cfg) {
		cfg_fail(&cp, 0, "out of memory");
		return NULL;
	}
	snprintf(cp.cp_cfg->cf_path, sizeof(cp.cp_cfg->cf_path), "%s", name);
	return cfg_run(&cp, ov);
}

void cfg_free(struct cfg *cf)
{
	free(cf);
}

const struct cfg_route *cfg_route_find(const struct cfg *cf, uint32_t prog)
{
	for (unsigned i = 0; i < cf->cf_nroutes; i++)
		if (cf->cf_routes[i].cr_prog == prog)
			return &cf->cf_routes[i];
	return NULL;
}


/* ---- reload as a list of actions ---- */

/* First connection parameter that differs, or NULL (cb_line is no change). */
static const char *cfg_backend_change(const struct cfg_backend *a, const struct cfg_backend *b)
{
	if (strcmp(a->cb_host, b->cb_host))
		return "address";
	if (a->cb_port != b->cb_port)
		return "port";
	if (a->cb_rdma_port != b->cb_rdma_port)
		return "rdma_port";
	if (a->cb_connections != b->cb_connections)
		return "connections";
	if (a->cb_credits != b->cb_credits)
		return "credits";
	if (a->cb_inline_send != b->cb_inline_send || a->cb_inline_recv != b->cb_inline_recv)
		return "inline";
	if (a->cb_regmode != b->cb_regmode)
		return "registration";
	if (a->cb_ccp != b->cb_ccp)
		return "ccp";
	return NULL;
}

static unsigned cfg_backend_by_name(const struct cfg *cf, const char *name)
{
	for (unsigned i = 0; i < cf->cf_nbackends; i++)
		if (!strcmp(cf->cf_backends[i].cb_name, name))
			return i;
	return CFG_ACT_NONE;
}

static unsigned cfg_route_by_name(const struct cfg *cf, const char *name)
{
	for (unsigned i = 0; i < cf->cf_nroutes; i++)
		if (!strcmp(cf->cf_routes[i].cr_name, name))
			return i;
	return CFG_ACT_NONE;
}

static void cfg_diff_add(struct cfg_diff *d, enum cfg_act_kind k, unsigned o, unsigned n,
			 const char *what)
{
	if (d->cd_n == CFG_DIFF_MAX)	/* cannot happen: bounded by the section caps */
		return;
	d->cd_act[d->cd_n++] = (struct cfg_action){ k, o, n, what };
	if (k == CFG_ACT_RESTART)
		d->cd_nrestart++;
	else if (k != CFG_ACT_BACKEND_KEEP && k != CFG_ACT_ROUTE_KEEP)
		d->cd_nchanges++;
}

void cfg_diff(const struct cfg *a, const struct cfg *b, struct cfg_diff *d)
{
	bool bkeep[CFG_MAX_BACKENDS] = { false };	/* old backend index kept */

	memset(d, 0, sizeof(*d));
	/* Backends: removals (and changed ones) first, so that a name removed
	 * and added again frees its place before the new one takes it. */
	for (unsigned i = 0; i < a->cf_nbackends; i++) {
		unsigned j = cfg_backend_by_name(b, a->cf_backends[i].cb_name);
		const char *why = j == CFG_ACT_NONE ? "removed"
				  : cfg_backend_change(&a->cf_backends[i], &b->cf_backends[j]);

		if (why)
			cfg_diff_add(d, CFG_ACT_BACKEND_REMOVE, i, CFG_ACT_NONE, why);
		else
			bkeep[i] = true;
	}
	for (unsigned j = 0; j < b->cf_nbackends; j++) {
		unsigned i = cfg_backend_by_name(a, b->cf_backends[j].cb_name);

		if (i != CFG_ACT_NONE && bkeep[i])
			cfg_diff_add(d, CFG_ACT_BACKEND_KEEP, i, j, NULL);
		else
			cfg_diff_add(d, CFG_ACT_BACKEND_ADD, CFG_ACT_NONE, j, NULL);
	}
	/* Routes: a path is (program, backend, transport, port). */
	for (unsigned i = 0; i < a->cf_nroutes; i++) {
		const struct cfg_route *x = &a->cf_routes[i];
		unsigned j = cfg_route_by_name(b, x->cr_name);
		const struct cfg_route *y = j == CFG_ACT_NONE ? NULL : &b->cf_routes[j];
		const char *why = NULL;

		if (!y)
			why = "removed";
		else if (x->cr_prog != y->cr_prog)
			why = "program";
		else if (strcmp(a->cf_backends[x->cr_backend].cb_name, b->cf_backends[y->cr_backend].cb_name))
			why = "backend";
		else if (!bkeep[x->cr_backend])
			why = "backend changed";
		else if (x->cr_transport != y->cr_transport)
			why = "transport";
		else if (x->cr_port != y->cr_port)
			why = "port";
		if (why)
			cfg_diff_add(d, CFG_ACT_ROUTE_REMOVE, i, CFG_ACT_NONE, why);
	}
	for (unsigned j = 0; j < b->cf_nroutes; j++) {
		const struct cfg_route *y = &b->cf_routes[j];
		unsigned i = cfg_route_by_name(a, y->cr_name);
		bool kept = false;

		for (unsigned k = 0; i != CFG_ACT_NONE && k < d->cd_n; k++)
			if (d->cd_act[k].ac_kind == CFG_ACT_ROUTE_REMOVE && d->cd_act[k].ac_old == i)
				i = CFG_ACT_NONE;
		if (i != CFG_ACT_NONE) {
			const struct cfg_route *x = &a->cf_routes[i];

			kept = true;
			cfg_diff_add(d, CFG_ACT_ROUTE_KEEP, i, j, NULL);
			if (x->cr_vers_low != y->cr_vers_low || x->cr_vers_high != y->cr_vers_high)
				d->cd_nchanges++;
		}
		if (!kept)
			cfg_diff_add(d, CFG_ACT_ROUTE_ADD, CFG_ACT_NONE, j, NULL);
	}
	/* What only a restart changes: sockets opened and memory sized at start. */
	{
		bool listen = a->cf_nlisten != b->cf_nlisten;

		for (unsigned i = 0; !listen && i < a->cf_nlisten; i++)
			listen = a->cf_listen[i].cl_addrlen != b->cf_listen[i].cl_addrlen ||
				 memcmp(&a->cf_listen[i].cl_addr, &b->cf_listen[i].cl_addr,
					a->cf_listen[i].cl_addrlen);
		if (listen)
			cfg_diff_add(d, CFG_ACT_RESTART, CFG_ACT_NONE, CFG_ACT_NONE, "listen");
	}
	if (a->cf_buffers != b->cf_buffers || a->cf_buffer_size != b->cf_buffer_size ||
	    a->cf_hugepages != b->cf_hugepages)
		cfg_diff_add(d, CFG_ACT_RESTART, CFG_ACT_NONE, CFG_ACT_NONE, "buffer pool");
	if (a->cf_max_record != b->cf_max_record)
		cfg_diff_add(d, CFG_ACT_RESTART, CFG_ACT_NONE, CFG_ACT_NONE, "max_record");
	if (a->cf_max_calls != b->cf_max_calls)
		cfg_diff_add(d, CFG_ACT_RESTART, CFG_ACT_NONE, CFG_ACT_NONE, "max_calls");
	if (a->cf_max_clients != b->cf_max_clients)
		cfg_diff_add(d, CFG_ACT_RESTART, CFG_ACT_NONE, CFG_ACT_NONE, "max_clients");
	if (strcmp(a->cf_admin_listen, b->cf_admin_listen))
		cfg_diff_add(d, CFG_ACT_RESTART, CFG_ACT_NONE, CFG_ACT_NONE, "admin_listen");
	if (strcmp(a->cf_control_socket, b->cf_control_socket))
		cfg_diff_add(d, CFG_ACT_RESTART, CFG_ACT_NONE, CFG_ACT_NONE, "control_socket");
	/* Registrations are made once at start (rpcb_reg.c); a reload never redoes them. */
	if (a->cf_rpcbind_register != b->cf_rpcbind_register)
		cfg_diff_add(d, CFG_ACT_RESTART, CFG_ACT_NONE, CFG_ACT_NONE, "rpcbind_register");
	d->cd_values = a->cf_log_level != b->cf_log_level ||
		       a->cf_calls_per_client != b->cf_calls_per_client ||
		       a->cf_bytes_per_client != b->cf_bytes_per_client ||
		       a->cf_held_calls != b->cf_held_calls ||
		       a->cf_idle_timeout_ms != b->cf_idle_timeout_ms ||
		       a->cf_record_timeout_ms != b->cf_record_timeout_ms ||
		       a->cf_reconnect_ms != b->cf_reconnect_ms ||
		       a->cf_drc_window_ms != b->cf_drc_window_ms;
}
