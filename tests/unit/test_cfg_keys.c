// SPDX-License-Identifier: MIT
/* Unit tests of the configuration keys against their documentation: the
 * keys named by rpcrdma-gw.conf(5), by the sample config/rpcrdma-gw.conf and
 * by docs/configuration.md, section by section, are the keys the parser
 * accepts - nothing missing, nothing extra. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"

#define B "[backend s]\naddress = 10.99.0.1\n"
#define DOC_MAX_KEYS 96

static const char *const sec_names[] = { "gateway", "backend", "route" };

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

/* The section a heading names, or -1: "[gateway]", "[backend ...", "[route ...". */
static int sec_of(const char *s)
{
	for (int i = 0; i < 3; i++) {
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_docs_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
