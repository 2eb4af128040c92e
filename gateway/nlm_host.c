// SPDX-License-Identifier: MIT
/*
 * This file contains the table of client hosts of the NLM owner map
 * (nlm_int.h): a slot per client host (its address), whose number is the
 * high bits of every svid' the gateway sends for that host's owners, the
 * slices of the slots that workers map into, and every worker's hosts by
 * slot for the grants and reboots one worker relays for another.
 *
 * Bounded: GW_NLM_MAX_HOSTS slots, allocated with the map.  A host with
 * no tracked lock is the one reused when the table is full.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nlm_int.h"
#include "nlm_share.h"

struct gw_nlm_names *gw_nlm_names_new(void)
{
	struct gw_nlm_names *nn = calloc(1, sizeof(*nn));

	if (nn && pthread_mutex_init(&nn->nn_mu, NULL) != 0) {
		free(nn);
		return NULL;
	}
	return nn;
}

void gw_nlm_names_free(struct gw_nlm_names *nn)
{
	if (!nn)
		return;
	pthread_mutex_destroy(&nn->nn_mu);
	free(nn);
}

static void nm_names_set(struct gw_nlm_names *nn, unsigned slot, const char *name)
{
	if (!nn)
		return;
	pthread_mutex_lock(&nn->nn_mu);
	snprintf(nn->nn_name[slot], sizeof(nn->nn_name[slot]), "%s", name);
	pthread_mutex_unlock(&nn->nn_mu);
}

bool gw_nlm_names_get(struct gw_nlm_names *nn, unsigned slot, char *out, size_t len)
{
	if (!nn || slot >= GW_NLM_MAX_HOSTS)
		return false;
	pthread_mutex_lock(&nn->nn_mu);
	snprintf(out, len, "%s", nn->nn_name[slot]);
	pthread_mutex_unlock(&nn->nn_mu);
	return out[0] != '\0';
}

/* Workers: all reach the server's lockd from one address, so worker index
 * of count maps hosts only to its own share of the slots (svid' spaces
 * never overlap). */
void gw_nlm_set_slice(struct gw_nlm *nm, unsigned index, unsigned count)
{
	nm->nm_lo = index * GW_NLM_MAX_HOSTS / count;
	nm->nm_hi = (index + 1) * GW_NLM_MAX_HOSTS / count;
}

struct gw_nlm_host *gw_nlm_host_get(struct gw_nlm *nm, const char *name, bool create)
{
	struct gw_nlm_host *free_h = NULL, *lru = NULL;

	for (unsigned i = nm->nm_lo; i < nm->nm_hi; i++) {
		struct gw_nlm_host *h = &nm->nm_hosts[i];

		if (!h->nh_used) {
			if (!free_h)
				free_h = h;
		} else if (strcmp(h->nh_name, name) == 0) {
			h->nh_seq = ++nm->nm_seq;
			return h;
		} else if (h->nh_nlocks == 0 && gw_nsh_count(nm->nm_nsh, i) == 0 &&
			   (!lru || h->nh_seq < lru->nh_seq)) {
			lru = h;
		}
	}
	if (!create || strlen(name) >= sizeof(free_h->nh_name))
		return NULL;
	if (!free_h)
		free_h = lru;	/* nothing of its owners (locks, shares) is tracked on the server */
	if (!free_h)
		return NULL;
	memset(free_h, 0, sizeof(*free_h));
	free_h->nh_used = true;
	snprintf(free_h->nh_name, sizeof(free_h->nh_name), "%s", name);
	free_h->nh_seq = ++nm->nm_seq;
	nm_names_set(nm->nm_names, gw_nlm_slot(nm, free_h), name);
	return free_h;
}

struct gw_nlm_host *gw_nlm_owner(struct gw_nlm *nm, int32_t m, int32_t *svid)
{
	uint32_t slot = ((uint32_t)m >> GW_NLM_SVID_BITS);

	if (m < 0 || slot <= nm->nm_lo || slot > nm->nm_hi || !nm->nm_hosts[slot - 1].nh_used)
		return NULL;
	*svid = (int32_t)((uint32_t)m & NM_SVID_MASK);
	return &nm->nm_hosts[slot - 1];
}

unsigned gw_nlm_host_locks(const struct gw_nlm *nm, const char *host)
{
	for (unsigned i = 0; i < GW_NLM_MAX_HOSTS; i++)
		if (nm->nm_hosts[i].nh_used && strcmp(nm->nm_hosts[i].nh_name, host) == 0)
			return nm->nm_hosts[i].nh_nlocks;
	return 0;
}

void gw_nlm_forget_all(struct gw_nlm *nm)
{
	for (unsigned i = nm->nm_lo; i < nm->nm_hi; i++) {
		nm->nm_hosts[i].nh_nlocks = 0;
		gw_nsh_forget(nm->nm_nsh, i);	/* shares went with the locks */
	}
}

void gw_nlm_epoch_check(struct gw_nlm *nm)
{
	uint64_t e;

	if (!nm->nm_names)
		return;
	e = __atomic_load_n(&nm->nm_names->nn_epoch, __ATOMIC_ACQUIRE);
	if (e != nm->nm_epoch) {
		nm->nm_epoch = e;
		gw_nlm_forget_all(nm);
	}
}
