// SPDX-License-Identifier: MIT
/* Unit tests of the configuration key table (config/config_keys.c):
 *   - the keys named by rpcrdma-gw.conf(5), by the sample
 *     config/rpcrdma-gw.conf and by docs/configuration.md, section by
 *     section, are exactly the table's keys and the ones the parser accepts;
 *     the sample shows every key, commented unless required, with its default;
 *   - the table is consistent (defaults in range, members wide enough);
 *   - cfg_dump() writes every key and parses back to the same configuration;
 *   - the sample (the package's conffile) has a '#' comment over every key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>

#include "config.h"

#define B "[backend s]\naddress = 10.99.0.1\n"
#define DOC_MAX_KEYS 96

static const char *const sec_names[] = { "gateway", "backend", "route", "listener" };
#define NSEC ((int)(sizeof(sec_names) / sizeof(sec_names[0])))

struct doc_key {
	char dk_name[CFG_NAME_MAX];
	int dk_sec;		/* index in sec_names */
	int dk_line;
	bool dk_commented;	/* sample: ";key = value" (or in a commented section) */
	char dk_value[128];	/* sample: the value shown */
};

struct doc {
	const char *dc_path;
	unsigned dc_n;
	struct doc_key dc_keys[DOC_MAX_KEYS];
};

static void doc_add(struct doc *d, const char *name, size_t len, int sec, int line)
{
	struct doc_key *k;

	if (d->dc_n == DOC_MAX_KEYS)
		fail_msg("%s: more than %d keys", d->dc_path, DOC_MAX_KEYS);
	if (len == 0 || len >= CFG_NAME_MAX)
		fail_msg("%s:%d: bad key name", d->dc_path, line);
	k = &d->dc_keys[d->dc_n++];
	memset(k, 0, sizeof(*k));
	memcpy(k->dk_name, name, len);
	k->dk_sec = sec;
	k->dk_line = line;
}

static FILE *doc_open(struct doc *d, const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		fail_msg("cannot open %s (run from the top of the tree)", path);
	memset(d, 0, sizeof(*d));
	d->dc_path = path;
	return f;
}

/* The section a heading names, or -1: "[gateway]", "[backend ...", "[route ...",
 * "[listener ...". */
static int sec_of(const char *s)
{
	for (int i = 0; i < NSEC; i++) {
		size_t n = strlen(sec_names[i]);

		if (s[0] == '[' && !strncmp(s + 1, sec_names[i], n) && (s[n + 1] == ']' || s[n + 1] == ' '))
			return i;
	}
	return -1;
}

/* rpcrdma-gw.conf(5): `.BI key ...` lines under `.SH "[section ...] KEYS"`. */
static void doc_man(struct doc *d)
{
	FILE *f = doc_open(d, "docs/man/rpcrdma-gw.conf.5");
	char line[512];
	int sec = -1, no = 0;

	while (fgets(line, sizeof(line), f)) {
		no++;
		if (!strncmp(line, ".SH ", 4)) {
			const char *h = line + 4 + (line[4] == '"');

			sec = strstr(line, " KEYS") ? sec_of(h) : -1;
			if (strstr(line, " KEYS") && sec < 0)
				fail_msg("%s:%d: KEYS heading of no known section", d->dc_path, no);
		} else if (sec >= 0 && !strncmp(line, ".BI ", 4)) {
			doc_add(d, line + 4, strcspn(line + 4, " \n"), sec, no);
		}
	}
	fclose(f);
}

/* docs/configuration.md: "| `key` |" rows under "## `[section ...]`". */
static void doc_md(struct doc *d)
{
	FILE *f = doc_open(d, "docs/configuration.md");
	char line[2048];
	int sec = -1, no = 0;

	while (fgets(line, sizeof(line), f)) {
		no++;
		if (!strncmp(line, "## ", 3))
			sec = !strncmp(line + 3, "`[", 2) ? sec_of(line + 4) : -1;
		else if (sec >= 0 && !strncmp(line, "| `", 3))
			doc_add(d, line + 3, strcspn(line + 3, "`"), sec, no);
	}
	fclose(f);
}

/* The sample: "[section]" or ";[section]" headers, "key = value" or
 * ";key = value" lines; prose comments start with '#'. */
static void doc_sample(struct doc *d)
{
	FILE *f = doc_open(d, "config/rpcrdma-gw.conf");
	char line[512];
	int sec = 0, no = 0;
	bool sec_commented = false;

	while (fgets(line, sizeof(line), f)) {
		char *p = line, *eq;
		bool commented = false;

		no++;
		line[strcspn(line, "\n")] = '\0';
		if (*p == '#' || *p == '\0')
			continue;
		if (*p == ';') {
			commented = true;
			p++;
		}
		if (*p == '[') {
			sec = sec_of(p);
			if (sec < 0)
				fail_msg("%s:%d: unknown section %s", d->dc_path, no, p);
			sec_commented = commented;
			continue;
		}
		eq = strstr(p, " = ");
		if (!eq)
			fail_msg("%s:%d: neither a key, a section nor a '#' comment", d->dc_path, no);
		doc_add(d, p, (size_t)(eq - p), sec, no);
		d->dc_keys[d->dc_n - 1].dk_commented = commented || sec_commented;
		snprintf(d->dc_keys[d->dc_n - 1].dk_value, sizeof(d->dc_keys[0].dk_value), "%s", eq + 3);
	}
	fclose(f);
}

static bool doc_has(const struct doc *d, int sec, const char *name)
{
	for (unsigned i = 0; i < d->dc_n; i++)
		if (d->dc_keys[i].dk_sec == sec && !strcmp(d->dc_keys[i].dk_name, name))
			return true;
	return false;
}

/* Does the parser know key `name` in a section of kind sec?  A known key
 * with a bad value fails with another message than "unknown key". */
static bool parser_knows(int sec, const char *name)
{
	char text[256], err[256] = "";
	struct cfg *cf;

	if (sec == 0)
		snprintf(text, sizeof(text), "[gateway]\n%s = @\n" B, name);
	else if (sec == 1)
		snprintf(text, sizeof(text), B "%s = @\n", name);
	else if (sec == 3)
		snprintf(text, sizeof(text), B "[listener l]\nlisten = 127.0.0.9\n%s = @\n", name);
	else
		snprintf(text, sizeof(text), B "[route r]\n%s = @\n", name);
	cf = cfg_parse_string(text, "probe", NULL, err, sizeof(err));
	cfg_free(cf);
	return !strstr(err, "unknown key");
}

/* 1. Every key of each document is one the parser accepts in that section,
 * and the three documents name the same keys. */
static void t01_docs_agree(void **state)
{
	static struct doc docs[3];
	unsigned bad = 0;

	(void)state;
	doc_man(&docs[0]);
	doc_sample(&docs[1]);
	doc_md(&docs[2]);
	for (int i = 0; i < 3; i++) {
		if (docs[i].dc_n == 0)
			fail_msg("%s: no keys found (layout changed? update this test)", docs[i].dc_path);
		for (unsigned k = 0; k < docs[i].dc_n; k++) {
			const struct doc_key *dk = &docs[i].dc_keys[k];

			if (!parser_knows(dk->dk_sec, dk->dk_name)) {
				print_error("%s:%d: [%s] %s: the parser has no such key\n", docs[i].dc_path,
					    dk->dk_line, sec_names[dk->dk_sec], dk->dk_name);
				bad++;
			}
			for (int j = 0; j < 3; j++)
				if (!doc_has(&docs[j], dk->dk_sec, dk->dk_name)) {
					print_error("%s: [%s] %s (named in %s:%d) is missing\n",
						    docs[j].dc_path, sec_names[dk->dk_sec], dk->dk_name,
						    docs[i].dc_path, dk->dk_line);
					bad++;
				}
		}
	}
	if (bad)
		fail_msg("%u disagreements between the documents and the parser", bad);
}

static const char *key_label(const struct cfg_key *k)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "[%s] %s", sec_names[k->ky_section], k->ky_name);
	return buf;
}

/* 2. Every key of the table is in the three documents, in its section, and
 * the documents name no key the table lacks.  In the sample a required key
 * is set, an optional one is commented out. */
static void t02_table_documented(void **state)
{
	static struct doc docs[3];
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	unsigned bad = 0;

	(void)state;
	doc_man(&docs[0]);
	doc_sample(&docs[1]);
	doc_md(&docs[2]);
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < 3; j++)
			if (!doc_has(&docs[j], (int)keys[i].ky_section, keys[i].ky_name)) {
				print_error("%s: %s is not documented\n", docs[j].dc_path, key_label(&keys[i]));
				bad++;
			}
	for (int j = 0; j < 3; j++)
		for (unsigned k = 0; k < docs[j].dc_n; k++) {
			const struct doc_key *dk = &docs[j].dc_keys[k];
			bool found = false;

			for (size_t i = 0; i < n; i++)
				found |= (int)keys[i].ky_section == dk->dk_sec && !strcmp(keys[i].ky_name, dk->dk_name);
			if (!found) {
				print_error("%s:%d: [%s] %s is not in the key table\n", docs[j].dc_path,
					    dk->dk_line, sec_names[dk->dk_sec], dk->dk_name);
				bad++;
			}
		}
	for (unsigned k = 0; k < docs[1].dc_n; k++) {
		const struct doc_key *dk = &docs[1].dc_keys[k];

		for (size_t i = 0; i < n; i++) {
			bool req = keys[i].ky_flags & CFG_KF_REQUIRED;

			if ((int)keys[i].ky_section != dk->dk_sec || strcmp(keys[i].ky_name, dk->dk_name))
				continue;
			/* in a commented-out section every key is commented */
			if (!req && !dk->dk_commented) {
				print_error("%s:%d: optional key %s is set; comment it out\n",
					    docs[1].dc_path, dk->dk_line, dk->dk_name);
				bad++;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		bool set = false;

		if (!(keys[i].ky_flags & CFG_KF_REQUIRED))
			continue;
		for (unsigned k = 0; k < docs[1].dc_n; k++)
			set |= docs[1].dc_keys[k].dk_sec == (int)keys[i].ky_section &&
			       !strcmp(docs[1].dc_keys[k].dk_name, keys[i].ky_name) &&
			       !docs[1].dc_keys[k].dk_commented;
		/* a required key is set wherever its section is active: [route]
		 * is optional and commented out as a whole */
		if (!set && keys[i].ky_section == CFG_SEC_BACKEND) {
			print_error("%s: required key %s is not set\n", docs[1].dc_path,
				    key_label(&keys[i]));
			bad++;
		}
	}
	if (bad)
		fail_msg("%u differences between the key table and its documentation", bad);
}

/* The value of number key k in the struct cfg that text parses to; the
 * member is read through the table (ky_off, ky_size). */
static uint64_t parsed_number(const struct cfg_key *k, const char *value)
{
	char text[512], err[256];
	struct cfg *cf;
	const char *obj;
	uint64_t v = 0;

	if (k->ky_section == CFG_SEC_GATEWAY)
		snprintf(text, sizeof(text), "[gateway]\n%s = %s\n" B, k->ky_name, value);
	else if (k->ky_section == CFG_SEC_BACKEND)
		snprintf(text, sizeof(text), "[backend s]\n%s = %s\n%s", k->ky_name, value,
			 strcmp(k->ky_name, "address") ? "address = 10.99.0.1\n" : "");
	else
		snprintf(text, sizeof(text), B "[route r]\nprogram = nfs\n%s = %s\n", k->ky_name, value);
	cf = cfg_parse_string(text, "sample", NULL, err, sizeof(err));
	if (!cf)
		fail_msg("%s = %s: %s", k->ky_name, value, err);
	obj = k->ky_section == CFG_SEC_GATEWAY ? (const char *)cf :
	      k->ky_section == CFG_SEC_BACKEND ? (const char *)&cf->cf_backends[0]
					       : (const char *)&cf->cf_routes[0];
	obj += k->ky_off;
	switch (k->ky_size) {
	case 1: v = *(const bool *)obj; break;
	case 2: v = *(const uint16_t *)obj; break;
	case 4: v = *(const uint32_t *)obj; break;
	default: v = *(const uint64_t *)obj; break;
	}
	cfg_free(cf);
	return v;
}

/* 3. The sample shows each key's default (the first line of a repeatable
 * key; versions shows an example, its default "all" is a range). */
static void t03_sample_defaults(void **state)
{
	static struct doc sample;
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	unsigned bad = 0;

	(void)state;
	doc_sample(&sample);
	for (size_t i = 0; i < n; i++) {
		const struct cfg_key *k = &keys[i];
		const struct doc_key *dk = NULL;

		for (unsigned j = 0; j < sample.dc_n && !dk; j++)
			if (sample.dc_keys[j].dk_sec == (int)k->ky_section &&
			    !strcmp(sample.dc_keys[j].dk_name, k->ky_name))
				dk = &sample.dc_keys[j];
		/* a [listener] inherits: its sample values are examples */
		if (!dk || (k->ky_flags & CFG_KF_REQUIRED) || k->ky_type == CFG_KT_VERSIONS ||
		    k->ky_section == CFG_SEC_LISTENER ||
		    (k->ky_type > CFG_KT_ENUM && !k->ky_def_text))	/* backend: no default */
			continue;
		if (k->ky_type <= CFG_KT_ENUM ? parsed_number(k, dk->dk_value) != k->ky_def
					      : !k->ky_def_text || strcmp(dk->dk_value, k->ky_def_text)) {
			print_error("%s:%d: %s = %s is not the default\n", sample.dc_path, dk->dk_line,
				    k->ky_name, dk->dk_value);
			bad++;
		}
	}
	if (bad)
		fail_msg("%u sample values differ from the table's defaults", bad);
}

/* 4. The table itself: names unique per section, number defaults within
 * their range, members wide enough for the range, enum names present,
 * required keys without a default, every reload class known. */
static void t04_table_sane(void **state)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);

	(void)state;
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		const struct cfg_key *k = &keys[i];
		const char *l = key_label(k);

		for (size_t j = 0; j < i; j++)
			if (keys[j].ky_section == k->ky_section && !strcmp(keys[j].ky_name, k->ky_name))
				fail_msg("%s: twice in the table", l);
		if (k->ky_flags & CFG_KF_REQUIRED) {
			if (k->ky_def_text || k->ky_def)
				fail_msg("%s: required, yet has a default", l);
		} else if (k->ky_type <= CFG_KT_ENUM) {
			if (k->ky_def < k->ky_min || k->ky_def > k->ky_max ||
			    (k->ky_align && k->ky_def % k->ky_align))
				fail_msg("%s: default %llu outside %llu..%llu", l,
					 (unsigned long long)k->ky_def, (unsigned long long)k->ky_min,
					 (unsigned long long)k->ky_max);
			if (k->ky_size != 1 && k->ky_size != 2 && k->ky_size != 4 && k->ky_size != 8)
				fail_msg("%s: member of %zu bytes", l, k->ky_size);
			if (k->ky_size < 8 && k->ky_max >> (8 * k->ky_size) != 0)
				fail_msg("%s: maximum does not fit its member", l);
			if (k->ky_type == CFG_KT_BOOL && (k->ky_size != sizeof(bool) || k->ky_max != 1))
				fail_msg("%s: a boolean is a bool 0..1", l);
		}
		if (k->ky_type == CFG_KT_ENUM)
			for (uint64_t e = 0; e <= k->ky_max; e++)
				if (!k->ky_names || !k->ky_names[e])
					fail_msg("%s: value %llu has no name", l, (unsigned long long)e);
		if (k->ky_reload > CFG_RELOAD_PATH)
			fail_msg("%s: unknown reload class", l);
		/* a [backend] or [route] key changes its path or a value in
		 * place; only [gateway] and [listener] keys need a restart */
		if (((k->ky_section == CFG_SEC_GATEWAY || k->ky_section == CFG_SEC_LISTENER) &&
		     k->ky_reload == CFG_RELOAD_PATH) ||
		    (k->ky_section != CFG_SEC_GATEWAY && k->ky_section != CFG_SEC_LISTENER &&
		     k->ky_reload == CFG_RELOAD_RESTART))
			fail_msg("%s: reload class does not fit its section", l);
		/* a [listener] key inherits the [gateway] key of its name: the
		 * same type and member size (config.c copies the bytes) */
		if (k->ky_section == CFG_SEC_LISTENER) {
			const struct cfg_key *g = NULL;

			for (size_t j = 0; j < n; j++)
				if (keys[j].ky_section == CFG_SEC_GATEWAY && !strcmp(keys[j].ky_name, k->ky_name))
					g = &keys[j];
			if (!g || g->ky_type != k->ky_type || g->ky_reload != k->ky_reload ||
			    (k->ky_type != CFG_KT_LISTEN && g->ky_size != k->ky_size) ||
			    (k->ky_flags & CFG_KF_NEGATE) != (g->ky_flags & CFG_KF_NEGATE) ||
			    g->ky_min != k->ky_min || g->ky_max != k->ky_max)
				fail_msg("%s: not the same key as in [gateway]", l);
		}
	}
}

/* Texts whose dump must parse back to the same configuration. */
static const char *const dump_cases[] = {
	/* 1: defaults and the five default routes */
	B,
	/* 2: every key away from its default */
	"[gateway]\nlisten = [::1]:2050\nlisten = 127.0.0.1\nlog_level = debug\nbuffer_size = 128k\n"
	"buffers = 300\nhugepages = yes\nmax_record = 300000\nmax_calls = 77\nmax_clients = 99\n"
	"calls_per_client = 3\nbytes_per_client = 1000001\nheld_calls = 0\nidle_timeout = 0\n"
	"record_timeout = 1500ms\nwrite_timeout = 7s\nevict_timeout = 3s\nreceive_ahead = 9\n"
	"realtime_priority = 3\n"
	"reconnect_interval = 90s\ndrc_window = 5m\nadmin_listen =\n"
	"control_socket =\nrpcbind_register = on\nallow = 10.0.0.0/8 ::1\ndeny = 10.1.0.0/16\n"
	"secure_port = no\nmax_conns_per_source = 3\nproxy_protocol = yes\nsquash = all\n"
	"anonuid = 7\nanongid = 8\nreject_auth_none = yes\n"
	"[backend b1]\naddress = nfs.example.com\nport = 2050\nrdma_port = 20050\nconnections = 4\n"
	"credits = 128\ninline_send = 8k\ninline_recv = 1024\nregistration = persistent\nccp = on\nunsafe_persistent = yes\n"
	"[backend b2]\naddress = 10.0.0.2\n"
	"[route r1]\nprogram = 100099\nversions = 3\nbackend = b2\ntransport = tcp\nport = 111\n"
	"[route r2]\nprogram = mountd\nversions = 1-3\nbackend = b1\n",
	/* 3: an admin listener on IPv6, another control socket, one route */
	"[gateway]\nadmin_listen = [::1]:9000\ncontrol_socket = /tmp/ctl\nlog_level = error\n" B
	"registration = reg\n[route n]\nprogram = nfs\nversions = 4-4\n",
	/* 4: listeners, one setting every key, one inheriting all but listen */
	"[gateway]\nlisten = 127.0.0.1:2049\nallow = 10.0.0.0/8\nsquash = root\n" B
	"[listener edge]\nlisten = 192.0.2.1:2049\nlisten = [2001:db8::1]:2049\nallow = 192.0.2.0/24\n"
	"deny = 192.0.2.9\nsecure_port = no\nmax_conns_per_source = 5\nproxy_protocol = yes\n"
	"squash = all\nanonuid = 9\nanongid = 10\nreject_auth_none = yes\ntls = required\n"
	"tls_cert = /c.pem\ntls_key = /k.pem\ntls_ca = /ca.pem\ntls_client_cert = require\n"
	"tls_allow_identity = a.test b.test\ntls_identity_squash = a.test:none b.test:root\n"
	"[listener lan]\nlisten = 127.0.0.2:2049\n",
	/* 5: a listener's section before [gateway]'s listen (found by fuzz_config):
	 * the same addresses, whatever order the file gives them in */
	"[listener edge]\nlisten = [2001:db8::1]:2049\n[gateway]\nlisten = 0.0.0.0\n" B,
};

static char *dump_text(const struct cfg *cf)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	cfg_dump(cf, f);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* Does text set key k (a line "name = ...") inside a section of its kind? */
static bool dump_has(const char *text, const struct cfg_key *k)
{
	char want[64];
	int sec = -1;

	snprintf(want, sizeof(want), "%s = ", k->ky_name);
	for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		if (*p == '[')
			sec = sec_of(p);
		else if (sec == (int)k->ky_section && !strncmp(p, want, strlen(want)))
			return true;
	}
	return false;
}

/* 5. --dump: every key of every section written; the text parses back to a
 * configuration cfg_diff() finds equal, whose dump is the same text. */
static void t05_dump_round_trip(void **state)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	char err[256];

	(void)state;
	for (size_t c = 0; c < sizeof(dump_cases) / sizeof(dump_cases[0]); c++) {
		struct cfg *a = cfg_parse_string(dump_cases[c], "t.conf", NULL, err, sizeof(err));
		struct cfg *b;
		struct cfg_diff d;
		char *t1, *t2;

		if (!a)
			fail_msg("case %zu: %s", c + 1, err);
		t1 = dump_text(a);
		for (size_t i = 0; i < n; i++)
			if ((keys[i].ky_section != CFG_SEC_LISTENER || a->cf_nlisteners > 1) &&
			    !dump_has(t1, &keys[i]))
				fail_msg("case %zu: dump lacks %s:\n%s", c + 1, key_label(&keys[i]), t1);
		b = cfg_parse_string(t1, "dump", NULL, err, sizeof(err));
		if (!b)
			fail_msg("case %zu: the dump does not parse: %s\n%s", c + 1, err, t1);
		cfg_diff(a, b, &d);
		if (d.cdf_nchanges || d.cdf_nrestart || d.cdf_values)
			fail_msg("case %zu: parsed dump differs: %u changes, %u restarts, values %d\n%s",
				 c + 1, d.cdf_nchanges, d.cdf_nrestart, d.cdf_values, t1);
		assert_int_equal(a->cf_nbackends, b->cf_nbackends);
		assert_int_equal(a->cf_nroutes, b->cf_nroutes);
		t2 = dump_text(b);
		if (strcmp(t1, t2))
			fail_msg("case %zu: dump of the parsed dump differs:\n%s\n----\n%s", c + 1, t1, t2);
		free(t1);
		free(t2);
		cfg_free(a);
		cfg_free(b);
	}
}

/* 6. The sample (the package's conffile) says why for every key: the line
 * above a key's first line is a '#' comment. */
static void t06_sample_explained(void **state)
{
	static char lines[512][256];
	static struct doc sample;
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	FILE *f = fopen("config/rpcrdma-gw.conf", "r");
	unsigned nl = 0, bad = 0;

	(void)state;
	assert_non_null(f);
	while (nl < 512 && fgets(lines[nl], sizeof(lines[0]), f))
		nl++;
	fclose(f);
	doc_sample(&sample);
	for (size_t i = 0; i < n; i++) {
		int first = 0;

		for (unsigned k = 0; k < sample.dc_n && !first; k++)
			if (sample.dc_keys[k].dk_sec == (int)keys[i].ky_section &&
			    !strcmp(sample.dc_keys[k].dk_name, keys[i].ky_name))
				first = sample.dc_keys[k].dk_line;
		/* dk_line counts from 1: lines[first - 2] is the line above */
		if (first >= 2 && lines[first - 2][0] != '#') {
			print_error("%s:%d: %s has no '#' comment line above it\n", sample.dc_path,
				    first, key_label(&keys[i]));
			bad++;
		}
	}
	if (bad)
		fail_msg("%u keys of the sample without a comment", bad);
}

/* ---- 7. defaults as the documents state them ---- */

/* value (a default as a document writes it) as the number key k sets, when
 * the parser takes it; "A + B" adds two sizes ("1m + 8k"). */
static bool doc_number(const struct cfg_key *k, const char *value, uint64_t *v)
{
	char text[512], err[256], a[64];
	const char *plus = strstr(value, " + ");
	struct cfg *cf;
	const char *obj;
	uint64_t w = 0;

	if (plus && (size_t)(plus - value) < sizeof(a)) {
		memcpy(a, value, plus - value);
		a[plus - value] = '\0';
		return doc_number(k, a, v) && doc_number(k, plus + 3, &w) && (*v += w, true);
	}
	if (k->ky_section == CFG_SEC_GATEWAY)
		snprintf(text, sizeof(text), "[gateway]\n%s = %s\n" B, k->ky_name, value);
	else if (k->ky_section == CFG_SEC_BACKEND)
		snprintf(text, sizeof(text), "[backend s]\n%s = %s\naddress = 10.99.0.1\n", k->ky_name,
			 value);
	else
		snprintf(text, sizeof(text), B "[route r]\nprogram = nfs\n%s = %s\n", k->ky_name, value);
	cf = cfg_parse_string(text, "doc", NULL, err, sizeof(err));
	if (!cf)
		return false;
	obj = k->ky_section == CFG_SEC_GATEWAY ? (const char *)cf :
	      k->ky_section == CFG_SEC_BACKEND ? (const char *)&cf->cf_backends[0]
					       : (const char *)&cf->cf_routes[0];
	obj += k->ky_off;
	switch (k->ky_size) {
	case 1: *v = *(const bool *)obj; break;
	case 2: *v = *(const uint16_t *)obj; break;
	case 4: *v = *(const uint32_t *)obj; break;
	default: *v = *(const uint64_t *)obj; break;
	}
	cfg_free(cf);
	return true;
}

/* Does the default a document states (text: "" for empty) match the table? */
static bool doc_default_ok(const struct cfg_key *k, const char *text)
{
	uint64_t v;

	if (k->ky_type <= CFG_KT_ENUM)
		return doc_number(k, text, &v) && v == k->ky_def;
	return !strcmp(text, k->ky_def_text ? k->ky_def_text : "");
}

/* The key checked for a default: not required, not [listener] (inherits),
 * not a repeatable listen (an example) or versions (a range, "all"). */
static const struct cfg_key *doc_default_key(int sec, const char *name)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);

	for (size_t i = 0; i < n; i++)
		if ((int)keys[i].ky_section == sec && !strcmp(keys[i].ky_name, name))
			return keys[i].ky_section == CFG_SEC_LISTENER || (keys[i].ky_flags & CFG_KF_REQUIRED) ||
			       keys[i].ky_type == CFG_KT_LISTEN || keys[i].ky_type == CFG_KT_VERSIONS ||
			       keys[i].ky_type == CFG_KT_BACKEND ? NULL : &keys[i];
	return NULL;
}

/* A man page's default: the words after "Default:" on its line, else the
 * next line's first argument (.BR value .), cut at a blank, "(", "." or ","
 * at the end; "\-" is "-", "empty" is "". */
static void man_default(const char *after, const char *next, char *out, size_t len)
{
	const char *p = after;
	size_t n;

	while (*p == ' ')
		p++;
	if (!*p || *p == '\n') {
		p = next;
		if (*p == '.')
			p += strcspn(p, " ");
		while (*p == ' ')
			p++;
	}
	n = 0;
	for (; *p && *p != '\n' && n + 1 < len; p++) {
		if (p[0] == '\\' && p[1] == '-')
			continue;
		out[n++] = *p;
	}
	out[n] = '\0';
	if (strstr(out, " + "))		/* "1m + 8k." */
		out[strcspn(out, ".")] = '\0';
	else
		out[strcspn(out, " (")] = '\0';
	n = strlen(out);
	while (n && (out[n - 1] == '.' || out[n - 1] == ','))
		out[--n] = '\0';
	if (!strcmp(out, "empty"))
		out[0] = '\0';
}

static unsigned t07_man(void)
{
	FILE *f = fopen("docs/man/rpcrdma-gw.conf.5", "r");
	char line[512], next[512], key[CFG_NAME_MAX] = "", val[128];
	int sec = -1, no = 0, keyline = 0;
	unsigned bad = 0, seen = 0;

	assert_non_null(f);
	if (!fgets(line, sizeof(line), f))
		fail_msg("empty man page");
	for (bool more = true; more; no++) {
		const char *d;

		more = fgets(next, sizeof(next), f) != NULL;
		if (!more)
			next[0] = '\0';
		if (!strncmp(line, ".SH ", 4))
			sec = strstr(line, " KEYS") ? sec_of(line + 4 + (line[4] == '"')) : -1;
		else if (sec >= 0 && !strncmp(line, ".BI ", 4)) {
			snprintf(key, sizeof(key), "%.*s", (int)strcspn(line + 4, " \n"), line + 4);
			keyline = no + 1;
		} else if (sec >= 0 && key[0] && (d = strstr(line, "Default:"))) {
			const struct cfg_key *k = doc_default_key(sec, key);

			man_default(d + 8, next, val, sizeof(val));
			if (k && (seen++, !doc_default_ok(k, val))) {
				print_error("docs/man/rpcrdma-gw.conf.5:%d: %s: default '%s' is not the "
					    "table's\n", keyline, key, val);
				bad++;
			}
			key[0] = '\0';
		}
		memcpy(line, next, sizeof(line));
	}
	fclose(f);
	if (seen < 40)
		fail_msg("only %u defaults found in the man page: update this test", seen);
	return bad;
}

static unsigned t07_md(void)
{
	FILE *f = fopen("docs/configuration.md", "r");
	char line[4096], name[CFG_NAME_MAX], val[256];
	int sec = -1, no = 0;
	unsigned bad = 0, seen = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		const struct cfg_key *k;
		char *c;

		no++;
		if (!strncmp(line, "## ", 3))
			sec = !strncmp(line + 3, "`[", 2) ? sec_of(line + 4) : -1;
		if (sec < 0 || strncmp(line, "| `", 3))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(line + 3, "`"), line + 3);
		c = strchr(line + 3 + strlen(name) + 1, '|');	/* the default's cell */
		if (!c || !(k = doc_default_key(sec, name)))
			continue;
		c++;
		while (*c == ' ')
			c++;
		if (!strncmp(c, "(empty)", 7))
			val[0] = '\0';
		else if (*c == '`')
			snprintf(val, sizeof(val), "%.*s", (int)strcspn(c + 1, "`"), c + 1);
		else
			continue;	/* words ("the only backend"): not a value */
		seen++;
		if (!doc_default_ok(k, val)) {
			print_error("docs/configuration.md:%d: %s: default '%s' is not the table's\n", no,
				    name, val);
			bad++;
		}
	}
	fclose(f);
	if (seen < 40)
		fail_msg("only %u defaults found in docs/configuration.md: update this test", seen);
	return bad;
}

/* 7. Every default docs/configuration.md and rpcrdma-gw.conf(5) state is the
 * key table's (parsed as the file would be: 64k, 1m + 8k, 5m, yes, empty). */
static void t07_doc_defaults(void **state)
{
	unsigned bad;

	(void)state;
	bad = t07_md() + t07_man();
	if (bad)
		fail_msg("%u documented defaults differ from config/config_keys.c", bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_docs_agree),
		cmocka_unit_test(t02_table_documented),
		cmocka_unit_test(t03_sample_defaults),
		cmocka_unit_test(t04_table_sane),
		cmocka_unit_test(t05_dump_round_trip),
		cmocka_unit_test(t06_sample_explained),
		cmocka_unit_test(t07_doc_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
