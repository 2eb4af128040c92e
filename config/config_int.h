/* SPDX-License-Identifier: MIT */
/*
 * config_int.h - shared by the files of config/ only (other modules read
 * config.h).
 *
 * This file contains what config.c (the parser) and config_diff.c take from
 * config_keys.c: finding a key of the table, reading and writing the member
 * a key describes, and the value syntaxes of the file (parse, the accepted
 * values for messages, format back).
 */
#ifndef RPCRDMA_GW_CONFIG_INT_H
#define RPCRDMA_GW_CONFIG_INT_H

#include "config.h"

/* Longest value cfg_key_text() writes (a host name; an address and port). */
#define CFG_VALUE_MAX	(CFG_HOST_MAX + 16)

/* UINT, SIZE, DURATION, BOOL, ENUM: a number in the member. */
static inline bool cfg_key_is_number(const struct cfg_key *k)
{
	return k->ky_type <= CFG_KT_ENUM;
}
/* The key `name` of a section of kind s, or NULL. */
const struct cfg_key *cfg_key_find(enum cfg_section s, const char *name);
/* Its index in cfg_keys(), < CFG_KEYS_MAX. */
unsigned cfg_key_index(const struct cfg_key *k);
/* CFG_KT_UINT, SIZE, DURATION, BOOL and ENUM: the text as a number within the
 * key's range (ENUM: the name's index). */
bool cfg_key_number(const struct cfg_key *k, const char *value, uint64_t *v);
/* The member of obj (a struct cfg, cfg_backend or cfg_route) a number key sets. */
uint64_t cfg_key_get(const struct cfg_key *k, const void *obj);
void cfg_key_put(const struct cfg_key *k, void *obj, uint64_t v);
/* What the key accepts, for "invalid value" messages: "1..64", "mw, reg or persistent". */
void cfg_key_hint(const struct cfg_key *k, char *buf, size_t len);
/* The value of every type but CFG_KT_LISTEN in the file's syntax; cf gives
 * the backend name a route refers to. */
void cfg_key_text(const struct cfg *cf, const struct cfg_key *k, const void *obj, char *buf,
		  size_t len);

/* config_src.c: cf_files = path, then the *.conf of path's directory's
 * conf.d/ in name order.  0, or a negative errno with the reason in err. */
int cfg_confd_list(struct cfg *cf, const char *path, char *err, size_t errlen);

bool cfg_parse_prog(const char *s, uint32_t *prog);
bool cfg_parse_versions(const char *s, uint32_t *lo, uint32_t *hi);
/* allow =, deny =: networks separated by blanks or commas. */
bool cfg_parse_nets(const char *s, struct cfg_nets *out);
/* A [backend NAME], [route NAME] or [listener NAME] name: 1..31 of A-Z a-z 0-9 . _ - */
bool cfg_name_ok(const char *name);

#endif /* RPCRDMA_GW_CONFIG_INT_H */
