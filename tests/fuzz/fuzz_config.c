// SPDX-License-Identifier: MIT
/*
 * This file contains the libFuzzer target of the configuration parser
 * (config/config.c, config_keys.c): the input is a configuration file.
 *
 * It is parsed twice, from a string (cfg_parse_string) and from a file
 * (cfg_load of a memfd, the reader the daemon uses), and both must agree:
 * both refuse it with the same message or both accept it.  An accepted
 * file is dumped (what `rpcrdma-gw --check-config --dump` prints) and the
 * dump must parse again, dump to the same bytes and differ from the first
 * configuration in nothing (cfg_diff: every backend and route kept, no
 * value changed, no restart).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <ini.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FC_CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_config: %s\n", #c); abort(); } } while (0)

/* The configuration as the dump prints it; caller frees. */
static char *fc_dump(const struct cfg *cf, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	FC_CHECK(f != NULL);
	cfg_dump(cf, f);
	FC_CHECK(fclose(f) == 0);
	return buf;
}

/* One memfd for the file reader, rewritten per input. */
static struct cfg *fc_load_file(const char *text, size_t len, char *err, size_t errlen)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("fuzz_config", MFD_CLOEXEC);
		FC_CHECK(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	FC_CHECK(ftruncate(fd, 0) == 0);
	FC_CHECK(pwrite(fd, text, len, 0) == (ssize_t)len);
	return cfg_load(path, NULL, err, errlen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char err1[16384], err2[16384];
	char *text, *d1, *d2;
	struct cfg *cf1, *cf2, *cf3;
	struct cfg_diff diff;
	size_t n1, n2, len;

	if (size > 64 * 1024)
		return 0;
	text = malloc(size + 1);
	FC_CHECK(text != NULL);
	memcpy(text, data, size);
	text[size] = '\0';
	len = strlen(text);	/* a NUL ends the string: the file gets the same bytes */

	cf1 = cfg_parse_string(text, "fuzz", NULL, err1, sizeof(err1));
	cf2 = fc_load_file(text, len, err2, sizeof(err2));
	FC_CHECK(!cf1 == !cf2);
	if (!cf1) {
		/* Same message but for the name the parser puts in front. */
		const char *m1 = strstr(err1, ": "), *m2 = strstr(err2, ": ");

		FC_CHECK(err1[0] && err2[0]);
		if (!m1 || !m2 || strcmp(m1, m2)) {
			fprintf(stderr, "fuzz_config: string and file differ:\n%s\n%s\n", err1, err2);
			abort();
		}
		free(text);
		return 0;
	}
	d1 = fc_dump(cf1, &n1);
	d2 = fc_dump(cf2, &n2);
	FC_CHECK(n1 == n2 && !memcmp(d1, d2, n1));
	free(d2);

	/* Round trip: the dump is a configuration file giving the same one. */
	cf3 = cfg_parse_string(d1, "dump", NULL, err1, sizeof(err1));
	if (!cf3) {
		fprintf(stderr, "fuzz_config: the dump does not parse: %s\n%s", err1, d1);
		abort();
	}
	d2 = fc_dump(cf3, &n2);
	if (n1 != n2 || memcmp(d1, d2, n1)) {
		fprintf(stderr, "fuzz_config: dump of the dump differs\n--- first\n%s--- second\n%s", d1, d2);
		abort();
	}
	cfg_diff(cf1, cf3, &diff);
	FC_CHECK(diff.cdf_nrestart == 0 && diff.cdf_nchanges == 0 && !diff.cdf_values);
	for (unsigned i = 0; i < diff.cdf_n; i++)	/* every backend and route kept */
		FC_CHECK(diff.cdf_act[i].ac_kind == CFG_ACT_BACKEND_KEEP ||
			 diff.cdf_act[i].ac_kind == CFG_ACT_ROUTE_KEEP);

	free(d1);
	free(d2);
	cfg_free(cf1);
	cfg_free(cf2);
	cfg_free(cf3);
	free(text);
	return 0;
}
