// SPDX-License-Identifier: MIT
/*
 * This file contains the table of client hosts of the NLM owner map
 * (nlm_int.h): a slot per client host (its address), whose number is the
 * high bits of every svid' the gateway sends for that host's owners, the
 * slices of the slots that workers map into, and every worker's hosts by
 * slot for the grants and reboots one worker relays for another.
 *
 * Bounded: GW_NLM_MAX_HOSTS slots, allocated with the map, split between
 * the workers; a source (an address, an IPv6 /64) holds at most half of a
 * worker's slots; a slot goes to another host only when nothing of its
 * host's can be on the server (nm_idle).  A new host finding no slot is
 * refused (nlm_map.c: DENIED_NOLOCKS), never sent unmapped.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
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

/* The source whose share of the slots a host counts against (nh_src): its
 * address, IPv4 in the IPv4-mapped form; of an IPv6 address the /64 only,
 * as one host may hold any number of addresses there (RFC 4291 2.5.1: the
 * low 64 bits are the interface identifier; temporary addresses, RFC
 * 8981, change within the prefix).  A name that is no address (the unit
 * tests' hosts) is a source of its own: a hash of it after 8 bytes of
 * 0xff, where an address's source has a multicast prefix or zeroes. */
static void nm_source(const char *name, uint8_t src[16])
{
	struct in6_addr a6;
	struct in_addr a4;
	uint64_t h = 0xcbf29ce484222325ull;

	memset(src, 0, 16);
	if (inet_pton(AF_INET, name, &a4) == 1) {
		src[10] = src[11] = 0xff;
		memcpy(src + 12, &a4, 4);
	} else if (inet_pton(AF_INET6, name, &a6) == 1) {
		memcpy(src, &a6, IN6_IS_ADDR_V4MAPPED(&a6) ? 16 : 8);
	} else {
		for (const char *p = name; *p; p++)
			h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
		memset(src, 0xff, 8);
		memcpy(src + 8, &h, 8);
	}
}

/* May h's slot be given to another host?  Only when nothing of its owners
 * can be on the server: no lock or share tracked, and no LOCK, NM_LOCK or
 * SHARE sent for it lately (one whose reply the gateway did not see - the
 * client went away, the call timed out - may have been granted all the
 * same; a LOCK answered BLOCKED is tracked as held, as its grant may come
 * much later).  Another host in that slot would own its svid' space. */
static bool nm_idle(const struct gw_nlm *nm, const struct gw_nlm_host *h, uint64_t now)
{
	return h->nh_nlocks == 0 && gw_nsh_count(nm->nm_nsh, gw_nlm_slot(nm, h)) == 0 &&
	       (h->nh_lock_ms == 0 || now - h->nh_lock_ms >= nm->nm_quiet_ms);
}

/* A new host gets a free slot or, the worker's slots all taken, the idle
 * one used least lately; never a slot that is not idle.  One source holds
 * at most half of the worker's slots: past that its new host takes its
 * own least used idle slot, or is refused, so that hosts of one prefix
 * (or one host with many addresses) cannot take every slot. */
struct gw_nlm_host *gw_nlm_host_get(struct gw_nlm *nm, const char *name, bool create,
				    enum gw_ctr *full)
{
	struct gw_nlm_host *free_h = NULL, *lru = NULL, *lru_src = NULL, *h;
	unsigned nsrc = 0, cap = (nm->nm_hi - nm->nm_lo) / 2;
	uint64_t now = gw_pass_ms(nm->nm_st);
	uint8_t src[16];

	nm_source(name, src);
	for (unsigned i = nm->nm_lo; i < nm->nm_hi; i++) {
		bool same;

		h = &nm->nm_hosts[i];
		if (!h->nh_used) {
			free_h = free_h ? free_h : h;
			continue;
		}
		if (strcmp(h->nh_name, name) == 0) {
			h->nh_seq = ++nm->nm_seq;
			return h;
		}
		same = memcmp(h->nh_src, src, sizeof(src)) == 0;
		nsrc += same;
		if (!nm_idle(nm, h, now))
			continue;
		if (!lru || h->nh_seq < lru->nh_seq)
			lru = h;
		if (same && (!lru_src || h->nh_seq < lru_src->nh_seq))
			lru_src = h;
	}
	if (!create)
		return NULL;
	h = nsrc >= (cap ? cap : 1) ? lru_src : free_h ? free_h : lru;
	if (!h || strlen(name) >= sizeof(h->nh_name)) {
		*full = nsrc >= (cap ? cap : 1) ? GW_CTR_NLM_SOURCE_FULL : GW_CTR_NLM_HOSTS_FULL;
		return NULL;
	}
	memset(h, 0, sizeof(*h));
	h->nh_used = true;
	snprintf(h->nh_name, sizeof(h->nh_name), "%s", name);
	memcpy(h->nh_src, src, sizeof(src));
	h->nh_seq = ++nm->nm_seq;
	nm_names_set(nm->nm_names, gw_nlm_slot(nm, h), name);
	return h;
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
		nm->nm_hosts[i].nh_lock_ms = 0;	/* nothing granted before is held */
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
