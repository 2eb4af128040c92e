// SPDX-License-Identifier: MIT
/*
 * This file contains where configuration values come from: the files read
 * (the main file, then the *.conf files of its conf.d/ directory in name
 * order), the location (file and line) of each key, and path values that
 * name systemd's credentials directory ($CREDENTIALS_DIRECTORY/NAME, filled
 * by the unit's LoadCredential=).
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

int cfg_confd_list(struct cfg *cf, const char *path, char *err, size_t errlen)
{
	char pat[CFG_HOST_MAX + 16];
	const char *slash = strrchr(path, '/');
	glob_t g;
	int rc;

	snprintf(cf->cf_files[0], sizeof(cf->cf_files[0]), "%s", path);
	cf->cf_nfiles = 1;
	/* GLOB_ERR off: a conf.d/ that does not exist is no error. */
	snprintf(pat, sizeof(pat), "%.*s%s/*.conf", slash ? (int)(slash - path + 1) : 0, path,
		 CFG_CONFD);
	rc = glob(pat, 0, NULL, &g);
	if (rc == GLOB_NOMATCH)
		return 0;
	if (rc != 0) {
		snprintf(err, errlen, "%s: cannot list: %s", pat, rc == GLOB_NOSPACE ? "out of memory"
			 : "read error");
		return -EIO;
	}
	if (g.gl_pathc > CFG_MAX_FILES - 1) {
		snprintf(err, errlen, "%s: %zu files, at most %d", pat, g.gl_pathc, CFG_MAX_FILES - 1);
		globfree(&g);
		return -E2BIG;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		if (strlen(g.gl_pathv[i]) >= sizeof(cf->cf_files[0])) {
			snprintf(err, errlen, "%s: name too long", g.gl_pathv[i]);
			globfree(&g);
			return -ENAMETOOLONG;
		}
		snprintf(cf->cf_files[cf->cf_nfiles++], sizeof(cf->cf_files[0]), "%s", g.gl_pathv[i]);
	}
	globfree(&g);
	return 0;
}

const char *cfg_loc_text(const struct cfg *cf, int loc, char *buf, size_t len)
{
	unsigned f = CFG_LOC_FILE(loc);
	const char *name = f < cf->cf_nfiles ? cf->cf_files[f] : cf->cf_path;

	snprintf(buf, len, "%s:%d", name, CFG_LOC_LINE(loc));
	return buf;
}

bool cfg_key_where(const struct cfg *cf, unsigned li, const char *key, char *buf, size_t len)
{
	const struct cfg_key *k = li ? cfg_key_find(CFG_SEC_LISTENER, key) : NULL;
	int loc = k && li < cf->cf_nlisteners ? cf->cf_src[li][cfg_key_index(k)] : 0;

	if (!loc && (k = cfg_key_find(CFG_SEC_GATEWAY, key)))
		loc = cf->cf_src[0][cfg_key_index(k)];
	if (len)
		buf[0] = '\0';
	if (!loc)
		return false;
	cfg_loc_text(cf, loc, buf, len);
	return true;
}

int cfg_path_resolve(const char *path, char *out, size_t len)
{
	const char *dir;
	int n;

	if (strncmp(path, CFG_CRED_PREFIX, strlen(CFG_CRED_PREFIX))) {
		n = snprintf(out, len, "%s", path);
	} else {
		dir = getenv("CREDENTIALS_DIRECTORY");
		if (!dir || !dir[0]) {
			if (len)
				out[0] = '\0';
			return -ENOENT;
		}
		n = snprintf(out, len, "%s/%s", dir, path + strlen(CFG_CRED_PREFIX));
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
