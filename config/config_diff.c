// SPDX-License-Identifier: MIT
/*
 * This file contains cfg_diff(): a reload as a list of actions, computed
 * from the running and the new configuration (pure; gateway.c applies the
 * actions).  What a changed key means comes from the key table
 * (config_keys.c, ky_reload): a value applied in place, its backend or route
 * removed and added again, or a restart needed.
 */
#include <string.h>

#include "config_int.h"

/* Does key k have the same value in a (of ca) and b (of cb)? */
static bool cfg_key_same(const struct cfg *ca, const struct cfg *cb, const struct cfg_key *k,
			 const void *a, const void *b)
{
	char x[CFG_VALUE_MAX], y[CFG_VALUE_MAX];

	if (cfg_key_is_number(k))
		return cfg_key_get(k, a) == cfg_key_get(k, b);
	if (k->ky_type == CFG_KT_LISTEN) {	/* the addresses, not the text; their listeners */
		if (ca->cf_nlisten != cb->cf_nlisten || ca->cf_nlisteners != cb->cf_nlisteners)
			return false;
		for (unsigned i = 0; i < ca->cf_nlisten; i++)
			if (ca->cf_listen[i].cl_addrlen != cb->cf_listen[i].cl_addrlen ||
			    memcmp(&ca->cf_listen[i].cl_addr, &cb->cf_listen[i].cl_addr,
				   ca->cf_listen[i].cl_addrlen) ||
			    strcmp(ca->cf_listeners[ca->cf_listen[i].cl_listener].li_name,
				   cb->cf_listeners[cb->cf_listen[i].cl_listener].li_name))
				return false;
		for (unsigned i = 0; i < ca->cf_nlisteners; i++)
			if (strcmp(ca->cf_listeners[i].li_name, cb->cf_listeners[i].li_name))
				return false;
		return true;
	}
	cfg_key_text(ca, k, a, x, sizeof(x));
	cfg_key_text(cb, k, b, y, sizeof(y));
	return !strcmp(x, y);
}

static const char *cfg_key_what(const struct cfg_key *k)
{
	return k->ky_what ? k->ky_what : k->ky_name;
}

/* First key of section sec and reload class rl whose value differs between
 * a (of ca) and b (of cb), or NULL. */
static const struct cfg_key *cfg_first_diff(const struct cfg *ca, const struct cfg *cb,
					    enum cfg_section sec, enum cfg_reload rl, const void *a,
					    const void *b)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);

	for (size_t i = 0; i < n; i++)
		if (keys[i].ky_section == sec && keys[i].ky_reload == rl &&
		    !cfg_key_same(ca, cb, &keys[i], a, b))
			return &keys[i];
	return NULL;
}

/* First connection parameter that differs, or NULL (cb_line is no change). */
static const char *cfg_backend_change(const struct cfg *ca, const struct cfg *cb,
				      const struct cfg_backend *a, const struct cfg_backend *b)
{
	const struct cfg_key *k = cfg_first_diff(ca, cb, CFG_SEC_BACKEND, CFG_RELOAD_PATH, a, b);

	return k ? cfg_key_what(k) : NULL;
}

/* First path key of a route that differs (a backend that is not kept counts
 * as "backend changed"), or NULL. */
static const char *cfg_route_change(const struct cfg *ca, const struct cfg *cb,
				    const struct cfg_route *x, const struct cfg_route *y,
				    const bool *bkeep)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);

	for (size_t i = 0; i < n; i++) {
		const struct cfg_key *k = &keys[i];

		if (k->ky_section != CFG_SEC_ROUTE || k->ky_reload != CFG_RELOAD_PATH)
			continue;
		if (!cfg_key_same(ca, cb, k, x, y))
			return cfg_key_what(k);
		if (k->ky_type == CFG_KT_BACKEND && !bkeep[x->cr_backend])
			return "backend changed";
	}
	return NULL;
}

/* Does a kept route change a value it takes in place (its versions)? */
static bool cfg_route_values(const struct cfg *ca, const struct cfg *cb,
			     const struct cfg_route *x, const struct cfg_route *y)
{
	return cfg_first_diff(ca, cb, CFG_SEC_ROUTE, CFG_RELOAD_VALUE, x, y) != NULL;
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

/* One more changed value for cdf_values_what: name, after prefix (a
 * listener's or a route's). */
static void cfg_diff_value(struct cfg_diff *d, const char *prefix, const char *name)
{
	size_t o = strlen(d->cdf_values_what), len = sizeof(d->cdf_values_what);
	int n;

	if (o + 4 >= len || !strcmp(d->cdf_values_what + (o >= 3 ? o - 3 : 0), "..."))
		return;
	n = snprintf(d->cdf_values_what + o, len - o, "%s%s%s", o ? ", " : "", prefix, name);
	if (n < 0 || (size_t)n >= len - o)	/* cut: say so */
		snprintf(d->cdf_values_what + (len - 4 > o ? o : len - 4), 4, "...");
}

static void cfg_diff_add(struct cfg_diff *d, enum cfg_act_kind k, unsigned o, unsigned n,
			 const char *what)
{
	if (d->cdf_n == CFG_DIFF_MAX)	/* cannot happen: bounded by the section caps */
		return;
	d->cdf_act[d->cdf_n++] = (struct cfg_action){ k, o, n, what };
	if (k == CFG_ACT_RESTART)
		d->cdf_nrestart++;
	else if (k != CFG_ACT_BACKEND_KEEP && k != CFG_ACT_ROUTE_KEEP)
		d->cdf_nchanges++;
}

/* [gateway] (x, y: a and b) or a [listener] (x, y: the same listener in
 * a and b): restart-only keys become CFG_ACT_RESTART (one per ky_what: the
 * three pool keys are one "buffer pool"); the others set cdf_values. */
static void cfg_diff_values(const struct cfg *a, const struct cfg *b, enum cfg_section sec,
			    const void *x, const void *y, struct cfg_diff *d)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);

	for (size_t i = 0; i < n; i++) {
		const struct cfg_key *k = &keys[i];
		bool listed = false;

		if (k->ky_section != sec || cfg_key_same(a, b, k, x, y))
			continue;
		if (k->ky_reload != CFG_RELOAD_RESTART) {
			char pre[CFG_NAME_MAX + 16] = "";

			if (sec == CFG_SEC_LISTENER)
				snprintf(pre, sizeof(pre), "[listener %s] ",
					 ((const struct cfg_listener *)x)->li_name);
			d->cdf_values = true;
			cfg_diff_value(d, pre, k->ky_name);
			continue;
		}
		for (unsigned j = 0; j < d->cdf_n; j++)
			if (d->cdf_act[j].ac_kind == CFG_ACT_RESTART &&
			    !strcmp(d->cdf_act[j].ac_what, cfg_key_what(k)))
				listed = true;
		if (!listed)
			cfg_diff_add(d, CFG_ACT_RESTART, CFG_ACT_NONE, CFG_ACT_NONE, cfg_key_what(k));
	}
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
				  : cfg_backend_change(a, b, &a->cf_backends[i], &b->cf_backends[j]);

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
		const char *why = j == CFG_ACT_NONE ? "removed"
				  : cfg_route_change(a, b, x, &b->cf_routes[j], bkeep);

		if (why)
			cfg_diff_add(d, CFG_ACT_ROUTE_REMOVE, i, CFG_ACT_NONE, why);
	}
	for (unsigned j = 0; j < b->cf_nroutes; j++) {
		const struct cfg_route *y = &b->cf_routes[j];
		unsigned i = cfg_route_by_name(a, y->cr_name);

		for (unsigned k = 0; i != CFG_ACT_NONE && k < d->cdf_n; k++)
			if (d->cdf_act[k].ac_kind == CFG_ACT_ROUTE_REMOVE && d->cdf_act[k].ac_old == i)
				i = CFG_ACT_NONE;
		if (i == CFG_ACT_NONE) {
			cfg_diff_add(d, CFG_ACT_ROUTE_ADD, CFG_ACT_NONE, j, NULL);
			continue;
		}
		cfg_diff_add(d, CFG_ACT_ROUTE_KEEP, i, j, NULL);
		if (cfg_route_values(a, b, &a->cf_routes[i], y)) {
			char pre[CFG_NAME_MAX + 16];

			d->cdf_nchanges++;
			snprintf(pre, sizeof(pre), "route %s ", y->cr_name);
			cfg_diff_value(d, pre, "versions");	/* counted in cdf_nchanges */
		}
	}
	/* What only a restart changes: sockets opened and memory sized at start.
	 * Listeners are the same ones (by name) or "listen" asks for a restart;
	 * their effective policies (inherited values included) are compared. */
	cfg_diff_values(a, b, CFG_SEC_GATEWAY, a, b, d);
	for (unsigned i = 1; i < a->cf_nlisteners && i < b->cf_nlisteners; i++)
		if (!strcmp(a->cf_listeners[i].li_name, b->cf_listeners[i].li_name))
			cfg_diff_values(a, b, CFG_SEC_LISTENER, &a->cf_listeners[i], &b->cf_listeners[i], d);
}
