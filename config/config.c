// SPDX-License-Identifier: MIT
/*
 * This file contains the configuration parser of rpcrdma-gw: libinih reads
 * the INI text, one handler looks each key up in the key table
 * (config_keys.c) and sets the member it names, then a validation pass
 * checks what only the whole file can tell (a route naming a backend defined
 * later, limits that contradict each other).  Every message is
 * `file:line: reason`.
 *
 * inih does not pass line numbers to handlers in Debian's build, so the file
 * is read through our own fgets-style reader that counts lines; the handler
 * runs right after the reader returned the line that holds the key, so the
 * count is that key's line.  After the main file the reader goes on with
 * the files of its conf.d/ (config_src.c), each starting in [gateway] as
 * the main file does; a line is a location (CFG_LOC: file and line), so
 * every message names the file it is about.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <ini.h>

#include "config_int.h"

/* The record iovec list (gateway/record.h GW_REC_MAX_IOV) bounds how many
 * pool buffers one record may span; keep two spare for fragment splits. */
#define CFG_REC_MAX_BUFFERS	62

struct cfg_parser {
	struct cfg *cp_cfg;
	const char *cp_name;		/* file name for messages */
	int cp_line;			/* CFG_LOC of the line last handed to inih */
	unsigned cp_file;		/* file being read (index in cf_files) */
	int cp_ini_lines;		/* lines handed to inih (its numbering: all files) */
	int cp_ini_first[CFG_MAX_FILES];	/* inih's number of a file's line 0 */
	int cp_long_line;		/* first line longer than inih's buffer */
	int cp_section_line;		/* line of the last [section] header */
	bool cp_section_new;		/* a header was read since the last key */
	size_t cp_bytes;		/* read so far, against CFG_FILE_MAX */
	bool cp_too_large;
	FILE *cp_file_f;		/* reader source: a FILE ... */
	const char *cp_text;		/* ... or a string */
	char cp_section[128];		/* last section seen */
	struct cfg_backend *cp_backend;	/* section being filled */
	struct cfg_route *cp_route;
	struct cfg_listener *cp_listener;
	/* Line of each key given, by table index: [gateway] (it may be opened
	 * again), the [backend]/[route] being filled (each opened once) and
	 * every [listener] (its unset keys are inherited at the end). */
	int cp_gw_seen[CFG_KEYS_MAX];
	int cp_sec_seen[CFG_KEYS_MAX];
	int cp_li_seen[CFG_MAX_LISTENERS][CFG_KEYS_MAX];
	char cp_rb[CFG_MAX_ROUTES][CFG_NAME_MAX];	/* route -> backend name */
	int cp_rb_line[CFG_MAX_ROUTES];
	char *cp_err;
	size_t cp_errlen;
	bool cp_failed;
};

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
		n = snprintf(cp->cp_err, cp->cp_errlen, "%s:%d: ", CFG_LOC_FILE(line) &&
			     CFG_LOC_FILE(line) < cp->cp_cfg->cf_nfiles ?
			     cp->cp_cfg->cf_files[CFG_LOC_FILE(line)] : cp->cp_name, CFG_LOC_LINE(line));
	else
		n = snprintf(cp->cp_err, cp->cp_errlen, "%s: ", cp->cp_name);
	if (n < 0 || (size_t)n >= cp->cp_errlen)
		return false;
	va_start(ap, fmt);
	vsnprintf(cp->cp_err + n, cp->cp_errlen - n, fmt, ap);
	va_end(ap);
	return false;
}

/* An earlier location for a message: "line N" in the file being read,
 * else "FILE:N". */
static const char *cfg_at(const struct cfg_parser *cp, int loc, char *buf, size_t len)
{
	if (CFG_LOC_FILE(loc) == cp->cp_file)
		snprintf(buf, len, "line %d", CFG_LOC_LINE(loc));
	else
		cfg_loc_text(cp->cp_cfg, loc, buf, len);
	return buf;
}

/* ---- defaults, from the table ---- */

static bool cfg_key_set(struct cfg_parser *cp, const struct cfg_key *k, void *obj,
			const char *value, int line);

/* Every key of section s that has a default; listen's is added by
 * cfg_validate() when no listen was given. */
static void cfg_section_defaults(struct cfg_parser *cp, enum cfg_section s, void *obj)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);

	for (size_t i = 0; i < n; i++) {
		const struct cfg_key *k = &keys[i];

		if (k->ky_section != s)
			continue;
		if (cfg_key_is_number(k))
			cfg_key_put(k, obj, k->ky_def);
		else if (k->ky_def_text && k->ky_type != CFG_KT_LISTEN)
			cfg_key_set(cp, k, obj, k->ky_def_text, 0);
	}
}

static void cfg_backend_defaults(struct cfg_parser *cp, struct cfg_backend *b, const char *name,
				 int line)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->cb_name, sizeof(b->cb_name), "%s", name);
	b->cb_line = line;
	cfg_section_defaults(cp, CFG_SEC_BACKEND, b);
}

static void cfg_route_defaults(struct cfg_parser *cp, struct cfg_route *r, const char *name,
			       int line)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->cr_name, sizeof(r->cr_name), "%s", name);
	r->cr_prog = UINT32_MAX;	/* unset; validate insists */
	r->cr_line = line;
	cfg_section_defaults(cp, CFG_SEC_ROUTE, r);
}

/* ---- the inih reader and handler ---- */

static bool cfg_open(struct cfg_parser *cp, const char *path);

/* The main file has ended: the next file of conf.d/, which starts in
 * [gateway] (a header handed to inih, on no line of the file). */
static bool cfg_next_file(struct cfg_parser *cp, char *str, int num)
{
	const char *path;

	if (cp->cp_file + 1 >= cp->cp_cfg->cf_nfiles || cp->cp_failed)
		return false;
	fclose(cp->cp_file_f);
	cp->cp_file_f = NULL;
	path = cp->cp_cfg->cf_files[++cp->cp_file];
	cp->cp_line = CFG_LOC(cp->cp_file, 0);
	if (!cfg_open(cp, path))
		return false;
	cp->cp_ini_first[cp->cp_file] = ++cp->cp_ini_lines;
	cp->cp_bytes = 0;	/* CFG_FILE_MAX is per file */
	cp->cp_section_line = cp->cp_line;
	cp->cp_section_new = true;
	snprintf(str, num, "[gateway]\n");
	return true;
}

static char *cfg_reader(char *str, int num, void *stream)
{
	struct cfg_parser *cp = stream;
	size_t n;

	if (cp->cp_file_f) {
		if (!fgets(str, num, cp->cp_file_f))
			return cfg_next_file(cp, str, num) ? str : NULL;
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
	cp->cp_bytes += n;
	if (cp->cp_bytes > CFG_FILE_MAX) {	/* also a file that grows while read */
		cp->cp_too_large = true;
		return NULL;
	}
	cp->cp_line++;
	cp->cp_ini_lines++;
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

/* An address of listener li (index in cf_listeners).  One address serves
 * one listener: given twice, which policy applies would be a guess. */
static bool cfg_add_listen(struct cfg_parser *cp, const char *v, int line, unsigned li)
{
	struct cfg *cf = cp->cp_cfg;
	struct cfg_listen *l;

	if (cf->cf_nlisten == CFG_MAX_LISTEN)
		return cfg_fail(cp, line, "too many listen addresses (max %d)", CFG_MAX_LISTEN);
	l = &cf->cf_listen[cf->cf_nlisten];
	if (!cfg_parse_sockaddr(v, 2049, &l->cl_addr, &l->cl_addrlen))
		return cfg_fail(cp, line, "listen: '%s' is not ADDRESS[:PORT] (IPv6 as [ADDR]:PORT)", v);
	for (unsigned i = 0; i < cf->cf_nlisten; i++) {
		const struct cfg_listen *o = &cf->cf_listen[i];

		if (o->cl_addrlen == l->cl_addrlen && !memcmp(&o->cl_addr, &l->cl_addr, l->cl_addrlen))
		{
			char at[CFG_HOST_MAX + 16];

			return cfg_fail(cp, line, "listen: %s is listed already (%s, [%s%s])", v,
					cfg_at(cp, o->cl_line, at, sizeof(at)), o->cl_listener ? "listener " : "",
					cf->cf_listeners[o->cl_listener].li_name);
		}
	}
	snprintf(l->cl_text, sizeof(l->cl_text), "%s", v);
	l->cl_line = line;
	l->cl_listener = li;
	cf->cf_nlisten++;
	return true;
}

/* Addresses grouped by listener ([gateway]'s first, then the sections'
 * order), in file order within each: the order the dump writes them in,
 * so that a file listing a [listener] before [gateway]'s listen is the
 * same configuration as its dump (cfg_diff compares them in order). */
static void cfg_listen_order(struct cfg *cf)
{
	for (unsigned i = 1; i < cf->cf_nlisten; i++) {
		struct cfg_listen l = cf->cf_listen[i];
		unsigned j = i;

		for (; j > 0 && cf->cf_listen[j - 1].cl_listener > l.cl_listener; j--)
			cf->cf_listen[j] = cf->cf_listen[j - 1];
		cf->cf_listen[j] = l;
	}
}

/* unix:PATH: an absolute path of name characters (a ';' or '#' would not
 * survive the dump), short enough for sun_path. */
static bool cfg_parse_unix(const char *path, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_un *sun = (struct sockaddr_un *)ss;
	size_t n = strlen(path);

	if (path[0] != '/' || n >= sizeof(sun->sun_path) ||
	    path[strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/")])
		return false;
	memset(ss, 0, sizeof(*ss));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, n + 1);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	return true;
}

/* A path value: empty (off), absolute, or in the credentials directory
 * (CFG_CRED_PREFIX, resolved when the file is opened: cfg_path_resolve). */
static bool cfg_path_ok(const char *value, size_t size)
{
	return !value[0] || ((value[0] == '/' || !strncmp(value, CFG_CRED_PREFIX,
							   strlen(CFG_CRED_PREFIX))) &&
			     strlen(value) < size);
}

/* Set one key of obj (the struct cfg, a backend or a route) from its text. */
static bool cfg_key_set(struct cfg_parser *cp, const struct cfg_key *k, void *obj,
			const char *value, int line)
{
	char *member = (char *)obj + k->ky_off;
	struct cfg *cf = cp->cp_cfg;
	struct cfg_route *r = obj;
	char hint[96];
	uint64_t v;

	/* The dump writes "key = value": it must fit the reader's line too. */
	if (strlen(k->ky_name) + 3 + strlen(value) > INI_MAX_LINE - 3)
		goto bad;
	switch (k->ky_type) {
	case CFG_KT_UINT: case CFG_KT_SIZE: case CFG_KT_DURATION: case CFG_KT_BOOL: case CFG_KT_ENUM:
		if (!cfg_key_number(k, value, &v))
			break;
		cfg_key_put(k, obj, v);
		return true;
	case CFG_KT_HOST:
		/* Names and addresses only: a ';' or '#' would not survive the
		 * dump (the reader takes it for a comment). */
		if (value[0] == '\0' || strlen(value) >= k->ky_size ||
		    value[strspn(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				 "0123456789.-_:%")] != '\0')
			break;
		snprintf(member, k->ky_size, "%s", value);
		return true;
	case CFG_KT_NAMES:
	case CFG_KT_IDSQUASH:
		/* Certificate names (DNS, e-mail, CN): no ';' or '#' (see HOST). */
		if (strlen(value) >= k->ky_size ||
		    value[strspn(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				 "0123456789.-_:@*, \t")] != '\0')
			break;
		if (k->ky_type == CFG_KT_IDSQUASH) {
			const char *pos = value, *name;
			enum cfg_squash m;
			size_t n;

			while (cfg_idsq_next(&pos, &name, &n, &m))
				;
			if (pos[strspn(pos, " \t,")] != '\0')	/* stopped at a bad entry */
				break;
		}
		snprintf(member, k->ky_size, "%s", value);
		return true;
	case CFG_KT_PATH:
		if (!cfg_path_ok(value, k->ky_size))
			break;
		snprintf(member, k->ky_size, "%s", value);
		return true;
	case CFG_KT_LISTEN:
		return cfg_add_listen(cp, value, line,
				      cp->cp_listener ? (unsigned)(cp->cp_listener - cf->cf_listeners) : 0);
	case CFG_KT_ADDR:
		if (value[0] && (strlen(value) >= k->ky_size ||
				 !(strncmp(value, "unix:", 5) ?
				   cfg_parse_sockaddr(value, CFG_ADMIN_PORT, &cf->cf_admin_addr,
						      &cf->cf_admin_addrlen) :
				   cfg_parse_unix(value + 5, &cf->cf_admin_addr, &cf->cf_admin_addrlen))))
			break;
		snprintf(member, k->ky_size, "%s", value);
		return true;
	case CFG_KT_PROG:
		if (!cfg_parse_prog(value, &r->cr_prog))
			break;
		return true;
	case CFG_KT_VERSIONS:
		if (!cfg_parse_versions(value, &r->cr_vers_low, &r->cr_vers_high))
			break;
		return true;
	case CFG_KT_BACKEND:	/* resolved by cfg_validate(): it may come later */
		if (!cfg_name_ok(value))
			break;
		snprintf(cp->cp_rb[r - cf->cf_routes], CFG_NAME_MAX, "%s", value);
		cp->cp_rb_line[r - cf->cf_routes] = line;
		return true;
	case CFG_KT_NETS:
		if (!cfg_parse_nets(value, (struct cfg_nets *)member))
			break;
		return true;
	}
bad:
	cfg_key_hint(k, hint, sizeof(hint));
	return cfg_fail(cp, line, "%s: invalid value '%s' (%s)", k->ky_name, value, hint);
}

/* May a [kind name] section start here?  first is the line of an earlier
 * one of that name (-1: none), count of max the kind's sections so far. */
static bool cfg_new_section(struct cfg_parser *cp, int line, const char *kind, const char *name,
			    int first, unsigned count, unsigned max)
{
	if (!cfg_name_ok(name))
		return cfg_fail(cp, line, "%s name '%s' must be 1-31 of [A-Za-z0-9._-]", kind, name);
	if (first >= 0) {
		char at[CFG_HOST_MAX + 16];

		return cfg_fail(cp, line, "%s '%s' defined twice (first at %s)", kind, name,
				cfg_at(cp, first, at, sizeof(at)));
	}
	if (count == max)
		return cfg_fail(cp, line, "too many %ss (max %u)", kind, max);
	return true;
}

/* A new section header: start the object it describes. */
static bool cfg_section_start(struct cfg_parser *cp, const char *section, int line)
{
	struct cfg *cf = cp->cp_cfg;
	const char *name;
	int first = -1;

	snprintf(cp->cp_section, sizeof(cp->cp_section), "%s", section);
	cp->cp_section_new = false;
	cp->cp_backend = NULL;
	cp->cp_route = NULL;
	cp->cp_listener = NULL;
	memset(cp->cp_sec_seen, 0, sizeof(cp->cp_sec_seen));
	if (!strcmp(section, "gateway") || section[0] == '\0')
		return true;
	if (cfg_section_is(section, "backend", &name)) {
		for (unsigned i = 0; i < cf->cf_nbackends && first < 0; i++)
			if (!strcmp(cf->cf_backends[i].cb_name, name))
				first = cf->cf_backends[i].cb_line;
		if (!cfg_new_section(cp, line, "backend", name, first, cf->cf_nbackends,
				     CFG_MAX_BACKENDS))
			return false;
		cp->cp_backend = &cf->cf_backends[cf->cf_nbackends++];
		cfg_backend_defaults(cp, cp->cp_backend, name, line);
		return true;
	}
	if (cfg_section_is(section, "route", &name)) {
		for (unsigned i = 0; i < cf->cf_nroutes && first < 0; i++)
			if (!strcmp(cf->cf_routes[i].cr_name, name))
				first = cf->cf_routes[i].cr_line;
		if (!cfg_new_section(cp, line, "route", name, first, cf->cf_nroutes, CFG_MAX_ROUTES))
			return false;
		cp->cp_route = &cf->cf_routes[cf->cf_nroutes++];
		cfg_route_defaults(cp, cp->cp_route, name, line);
		return true;
	}
	if (cfg_section_is(section, "listener", &name)) {
		for (unsigned i = 0; i < cf->cf_nlisteners && first < 0; i++)
			if (!strcmp(cf->cf_listeners[i].li_name, name))
				first = cf->cf_listeners[i].li_line;
		if (!strcmp(name, CFG_LISTENER_GATEWAY))	/* [gateway]'s own listener */
			return cfg_fail(cp, line, "listener name '%s' is reserved", name);
		if (!cfg_new_section(cp, line, "listener", name, first, cf->cf_nlisteners - 1,
				     CFG_MAX_LISTEN))
			return false;
		cp->cp_listener = &cf->cf_listeners[cf->cf_nlisteners++];
		snprintf(cp->cp_listener->li_name, sizeof(cp->cp_listener->li_name), "%s", name);
		cp->cp_listener->li_line = line;
		return true;
	}
	return cfg_fail(cp, line, "unknown section [%s] (gateway, backend NAME, route NAME, "
			"listener NAME)", section);
}

/* A key and its alias (CFG_KF_NEGATE) set one member: when the other was
 * given too, this value must set the member to what it already holds. */
static bool cfg_alias_agrees(struct cfg_parser *cp, const struct cfg_key *k, const void *obj,
			     const char *value, const int *seen, int line)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	char at[CFG_HOST_MAX + 16];
	uint64_t v;

	if (!cfg_key_is_number(k) || !cfg_key_number(k, value, &v))
		return true;	/* cfg_key_set() reports a bad value */
	for (size_t i = 0; i < n; i++) {
		const struct cfg_key *o = &keys[i];

		if (o != k && o->ky_section == k->ky_section && o->ky_off == k->ky_off &&
		    seen[cfg_key_index(o)] && cfg_key_get(o, obj) != v)
			return cfg_fail(cp, line, "%s = %s contradicts %s at %s (%s = yes is %s = no)",
					k->ky_name, value, o->ky_name,
					cfg_at(cp, seen[cfg_key_index(o)], at, sizeof(at)),
					(k->ky_flags & CFG_KF_NEGATE ? k : o)->ky_name,
					(k->ky_flags & CFG_KF_NEGATE ? o : k)->ky_name);
	}
	return true;
}

static int cfg_handler(void *user, const char *section, const char *name, const char *value)
{
	struct cfg_parser *cp = user;
	int line = cp->cp_line;
	enum cfg_section s = CFG_SEC_GATEWAY;
	const struct cfg_key *k;
	void *obj = cp->cp_cfg;
	char label[CFG_NAME_MAX + 16] = "[gateway]";
	int *seen = cp->cp_gw_seen;

	if (cp->cp_failed)
		return 0;
	if ((cp->cp_section_new || strcmp(section, cp->cp_section) != 0) &&
	    !cfg_section_start(cp, section, cp->cp_section_line ? cp->cp_section_line : line))
		return 0;
	if (cp->cp_backend) {
		s = CFG_SEC_BACKEND;
		obj = cp->cp_backend;
		snprintf(label, sizeof(label), "[backend %s]", cp->cp_backend->cb_name);
	} else if (cp->cp_route) {
		s = CFG_SEC_ROUTE;
		obj = cp->cp_route;
		snprintf(label, sizeof(label), "[route %s]", cp->cp_route->cr_name);
	} else if (cp->cp_listener) {
		s = CFG_SEC_LISTENER;
		obj = cp->cp_listener;
		snprintf(label, sizeof(label), "[listener %s]", cp->cp_listener->li_name);
	}
	if (s == CFG_SEC_LISTENER)
		seen = cp->cp_li_seen[cp->cp_listener - cp->cp_cfg->cf_listeners];
	else if (s != CFG_SEC_GATEWAY)
		seen = cp->cp_sec_seen;
	k = cfg_key_find(s, name);
	if (!k)
		return cfg_fail(cp, line, "unknown key '%s' in %s", name, label);
	/* A second value would silently win over the first: refuse it. */
	if (!(k->ky_flags & CFG_KF_REPEAT) && seen[cfg_key_index(k)]) {
		char at[CFG_HOST_MAX + 16];

		return cfg_fail(cp, line, "%s: duplicate key in %s (first at %s)", name, label,
				cfg_at(cp, seen[cfg_key_index(k)], at, sizeof(at)));
	}
	seen[cfg_key_index(k)] = line;
	if (!cfg_alias_agrees(cp, k, obj, value, seen, line))
		return 0;
	return cfg_key_set(cp, k, obj, value, line);
}

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
			if (!cfg_add_listen(cp, ov->co_listen[i], 0, 0))
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
			cfg_backend_defaults(cp, b, "default", 0);
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
		if (port) {
			const struct cfg_key *k = cfg_key_find(CFG_SEC_BACKEND, "port");
			uint64_t p;

			if (!cfg_key_number(k, port, &p))
				goto bad;
			cfg_key_put(k, b, p);
		}
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

/* v4_only: a route an NFSv4-only site cannot serve is a mistake to say,
 * not a path left down for ever. */
static bool cfg_v4_only_route(struct cfg_parser *cp, const struct cfg_route *r)
{
	if (!cp->cp_cfg->cf_v4_only)
		return true;
	if (r->cr_prog != CFG_PROG_NFS)
		return cfg_fail(cp, r->cr_line, "route '%s': program %u with v4_only = yes (NFSv4 "
				"uses no MOUNT, NLM, NSM or NFS_ACL): remove the route or v4_only",
				r->cr_name, r->cr_prog);
	if (r->cr_vers_low < 4)
		return cfg_fail(cp, r->cr_line, "route '%s': versions include NFS %u with v4_only = "
				"yes: set versions = 4", r->cr_name, r->cr_vers_low ? r->cr_vers_low : 2);
	return true;
}

/* Without any [route], NFS goes to the first backend and MOUNT/NLM/NSM
 * follow it over TCP, ports from the server's rpcbind; NFS_ACL (which Linux
 * clients probe with NFSv3) goes over TCP to the NFS port. */
static void cfg_default_routes(struct cfg_parser *cp)
{
	static const struct { const char *name; uint32_t prog; enum cfg_transport tr; } defs[] = {
		{ "nfs", CFG_PROG_NFS, CFG_TRANSPORT_RDMA },
		{ "mount", CFG_PROG_MOUNT, CFG_TRANSPORT_TCP },
		{ "nlm", CFG_PROG_NLM, CFG_TRANSPORT_TCP },
		{ "nsm", CFG_PROG_NSM, CFG_TRANSPORT_TCP },
		{ "nfs_acl", CFG_PROG_NFS_ACL, CFG_TRANSPORT_TCP },
	};
	struct cfg *cf = cp->cp_cfg;

	for (unsigned i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		struct cfg_route *r;

		if (cf->cf_v4_only && defs[i].prog != CFG_PROG_NFS)
			continue;	/* v4_only: NFSv4 needs none of them */
		r = &cf->cf_routes[cf->cf_nroutes++];
		cfg_route_defaults(cp, r, defs[i].name, 0);
		r->cr_prog = defs[i].prog;
		r->cr_backend = 0;
		r->cr_transport = defs[i].tr;
		if (cf->cf_v4_only)
			r->cr_vers_low = r->cr_vers_high = 4;
	}
}

static bool cfg_routes_finish(struct cfg_parser *cp)
{
	struct cfg *cf = cp->cp_cfg;

	if (cf->cf_nroutes == 0) {
		cfg_default_routes(cp);
		return true;
	}
	for (unsigned i = 0; i < cf->cf_nroutes; i++)
		if (!cfg_v4_only_route(cp, &cf->cf_routes[i]))
			return false;
	return true;
}

/* Was the member key k sets given in listener li (k or its alias)? */
static bool cfg_li_given(const struct cfg_parser *cp, unsigned li, const struct cfg_key *k)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);

	for (size_t i = 0; i < n; i++)
		if (keys[i].ky_section == CFG_SEC_LISTENER && keys[i].ky_type != CFG_KT_LISTEN &&
		    keys[i].ky_off == k->ky_off &&
		    cp->cp_li_seen[li][i])
			return true;
	return false;
}

/* Every listener's policy: what its section sets, the rest from
 * [gateway] (all of it for cf_listeners[0]); then what only the whole
 * policy can tell (TLS files). */
static bool cfg_listeners_resolve(struct cfg_parser *cp)
{
	struct cfg *cf = cp->cp_cfg;
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);

	for (unsigned li = 0; li < cf->cf_nlisteners; li++) {
		struct cfg_listener *l = &cf->cf_listeners[li];
		const struct cfg_policy *p = &l->li_pol;

		for (size_t i = 0; i < n; i++) {
			const struct cfg_key *k = &keys[i], *g;

			if (k->ky_section != CFG_SEC_LISTENER || k->ky_type == CFG_KT_LISTEN ||
			    (li && cfg_li_given(cp, li, k)))
				continue;
			g = cfg_key_find(CFG_SEC_GATEWAY, k->ky_name);
			memcpy((char *)l + k->ky_off, (const char *)cf + g->ky_off, k->ky_size);
		}
		if (li == 0)
			continue;
		if (!cp->cp_li_seen[li][cfg_key_index(cfg_key_find(CFG_SEC_LISTENER, "listen"))])
			return cfg_fail(cp, l->li_line, "listener '%s' has no listen address", l->li_name);
		if (p->pol_tls != CFG_TLS_OFF && (!p->pol_tls_cert[0] || !p->pol_tls_key[0]))
			return cfg_fail(cp, l->li_line, "listener '%s': tls = %s needs tls_cert and tls_key",
					l->li_name, p->pol_tls == CFG_TLS_REQUIRED ? "required" : "allowed");
		if (p->pol_tls != CFG_TLS_OFF && p->pol_tls_client_cert != CFG_TLS_CC_NONE &&
		    !p->pol_tls_ca[0])
			return cfg_fail(cp, l->li_line, "listener '%s': tls_client_cert = %s needs tls_ca",
					l->li_name, p->pol_tls_client_cert == CFG_TLS_CC_REQUIRE
					? "require" : "request");
	}
	return true;
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
		/* One rkey over every buffer, read and write, for the daemon's
		 * life: a server bug or a stolen key reaches every client's data. */
		if (b->cb_regmode == CFG_REG_PERSISTENT && !b->cb_unsafe_persistent)
			return cfg_fail(cp, b->cb_line, "backend '%s': registration = persistent exposes the "
					"whole buffer pool (every client's data, read and write) to the server "
					"under one remote key; set unsafe_persistent = yes to accept that",
					b->cb_name);
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
	if (!cfg_routes_finish(cp))	/* the default routes, or v4_only's check */
		return false;
	if (cf->cf_nlisten == 0) {
		const char *saved = cp->cp_name;

		cp->cp_name = "default listen";
		if (!cfg_add_listen(cp, cfg_key_find(CFG_SEC_GATEWAY, "listen")->ky_def_text, 0, 0))
			return false;
		cp->cp_name = saved;
	}
	cfg_listen_order(cf);
	if ((cf->cf_max_record + cf->cf_buffer_size - 1) / cf->cf_buffer_size + 1 > CFG_REC_MAX_BUFFERS)
		return cfg_fail(cp, 0, "max_record %u spans more than %d buffers of buffer_size %u; "
				"raise buffer_size", cf->cf_max_record, CFG_REC_MAX_BUFFERS - 1,
				cf->cf_buffer_size);
	if (cf->cf_tls != CFG_TLS_OFF && (!cf->cf_tls_cert[0] || !cf->cf_tls_key[0]))
		return cfg_fail(cp, 0, "tls = %s needs tls_cert and tls_key",
				cf->cf_tls == CFG_TLS_REQUIRED ? "required" : "allowed");
	if (cf->cf_tls != CFG_TLS_OFF && cf->cf_tls_client_cert != CFG_TLS_CC_NONE && !cf->cf_tls_ca[0])
		return cfg_fail(cp, 0, "tls_client_cert = %s needs tls_ca (the CAs client certificates "
				"must chain to)", cf->cf_tls_client_cert == CFG_TLS_CC_REQUIRE ? "require" : "request");
	if (!cfg_listeners_resolve(cp))
		return false;
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

/* inih's line number (it counts the lines of every file) as a location. */
static int cfg_ini_loc(const struct cfg_parser *cp, int ini)
{
	unsigned f = cp->cp_file;

	while (f > 0 && cp->cp_ini_first[f] >= ini)
		f--;
	return CFG_LOC(f, ini - cp->cp_ini_first[f]);
}

/* Where each key was set (cfg_key_where): [gateway]'s and each listener's. */
static void cfg_keep_src(const struct cfg_parser *cp)
{
	struct cfg *cf = cp->cp_cfg;

	memcpy(cf->cf_src[0], cp->cp_gw_seen, sizeof(cf->cf_src[0]));
	for (unsigned li = 1; li < cf->cf_nlisteners; li++)
		memcpy(cf->cf_src[li], cp->cp_li_seen[li], sizeof(cf->cf_src[li]));
}

static struct cfg *cfg_run(struct cfg_parser *cp, const struct cfg_overrides *ov)
{
	struct cfg *cf = cp->cp_cfg;
	int rc = 0;

	cfg_section_defaults(cp, CFG_SEC_GATEWAY, cf);
	cf->cf_nlisteners = 1;
	snprintf(cf->cf_listeners[0].li_name, sizeof(cf->cf_listeners[0].li_name), "%s",
		 CFG_LISTENER_GATEWAY);
	if (cp->cp_file_f || cp->cp_text) {
		rc = ini_parse_stream(cfg_reader, cp, cfg_handler, cp);
		if (cp->cp_too_large && !cp->cp_failed)
			cfg_fail(cp, 0, "too large (more than %u bytes)", CFG_FILE_MAX);
		if (cp->cp_long_line && !cp->cp_failed)
			cfg_fail(cp, cp->cp_long_line, "line too long (max %d characters)", INI_MAX_LINE - 3);
		if (rc > 0 && !cp->cp_failed)
			cfg_fail(cp, cfg_ini_loc(cp, rc), "syntax error (expected [section] or key = value)");
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
	cfg_keep_src(cp);
	return cf;
}

/* The path must be a regular file of at most CFG_FILE_MAX bytes: a device
 * or a FIFO would feed the reader forever or block it.  O_NONBLOCK keeps the
 * open of a FIFO from waiting for a writer; it is no-op on a regular file. */
static bool cfg_open(struct cfg_parser *cp, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	int e;

	if (fd < 0)
		return cfg_fail(cp, 0, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return cfg_fail(cp, 0, "cannot stat: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return cfg_fail(cp, 0, "not a regular file");
	}
	if (st.st_size > (off_t)CFG_FILE_MAX) {
		close(fd);
		return cfg_fail(cp, 0, "too large (%lld bytes, max %u)", (long long)st.st_size,
				CFG_FILE_MAX);
	}
	cp->cp_file_f = fdopen(fd, "r");
	if (!cp->cp_file_f) {
		e = errno;
		close(fd);
		return cfg_fail(cp, 0, "cannot open: %s", strerror(e));
	}
	return true;
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
		if (cfg_confd_list(cf, path, err, errlen) < 0) {
			free(cf);
			return NULL;
		}
		if (!cfg_open(&cp, path)) {
			free(cf);
			return NULL;
		}
	}
	cf = cfg_run(&cp, ov);
	if (cp.cp_file_f)
		fclose(cp.cp_file_f);
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
	snprintf(cp.cp_cfg->cf_files[0], sizeof(cp.cp_cfg->cf_files[0]), "%s", name);
	cp.cp_cfg->cf_nfiles = 1;
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

unsigned cfg_backend_conns(const struct cfg_backend *b, unsigned nworkers)
{
	if (b->cb_connections)
		return b->cb_connections;
	return nworkers > 1 ? 1 : 2;
}


