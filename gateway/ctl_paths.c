// SPDX-License-Identifier: MIT
/*
 * This file contains the paths as the control socket's text answers show
 * them (`status`, `backends`): one row per path however many workers run.
 *
 * Each worker has its own path to every server (its own connections,
 * held calls, credits), so a list per worker printed every path once per
 * worker: with 16 workers a down MOUNT route was 16 lines saying the same
 * thing.  Here the same-named paths of all workers make one row: counts
 * summed, the state the workers agree on or the first that differs with
 * how many workers are in it ("down 3/16"), and the reason of the first
 * worker whose path is not up.  `status workers` and `backends workers`
 * still show each worker's own (gw_ctl_paths_worker), for when the
 * workers disagree.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "config.h"
#include "gateway.h"
#include "ops.h"
#include "transport.h"

const char *gw_path_state_str(struct gw_path *pa)
{
	return gw_path_retiring(pa) ? "removing" : gw_path_draining(pa) ? "draining"
	       : gw_path_up(pa) ? "up" : gw_path_on_fallback(pa) ? "fallback" : "down";
}

void gw_ops_when(uint64_t mono_ms, char *buf, size_t len)
{
	time_t t = (time_t)(gw_wall_ms(mono_ms) / 1000);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
}

void gw_path_why_phrase(struct gw_path *pa, char *buf, size_t len)
{
	const char *text;
	uint64_t since;
	enum gw_why w = gw_path_why(pa, &text, &since);
	char when[32];

	gw_ops_when(since, when, sizeof(when));
	if (w == GW_WHY_NONE) {
		snprintf(buf, len, "up since %s", when);
		return;
	}
	snprintf(buf, len, "%s%s: %s since %s", gw_path_on_fallback(pa)
		 ? gw_path_fallback_up(pa) ? "on TCP fallback (tcp up) because "
		 : "on TCP fallback (tcp not connected yet) because " : "",
		 gw_why_str(w), text ? text : "-", when);
}

/* One path of every worker that has it: prw_pa[w], NULL where none. */
struct gw_prow {
	struct gw_path *prw_pa[CFG_MAX_WORKERS];
	struct gw_path *prw_first;	/* the first worker's, for its name and kind */
};

/* Path i of gw: the active ones, then those a reload retires. */
static struct gw_path *gw_path_nth(struct gw_ctx *gw, unsigned i)
{
	return i < gw_ctx_npaths(gw) ? gw_ctx_path(gw, i) : gw_ctx_retiring(gw, i - gw_ctx_npaths(gw));
}

/* The rows of n workers' paths, in the first worker's order: a path and
 * the one of the same name (retiring or not) of each other worker. */
static unsigned gw_prows(struct gw_ctx *const *gws, unsigned n, struct gw_prow *rows, unsigned cap)
{
	unsigned nr = 0;

	for (unsigned w = 0; w < n && w < CFG_MAX_WORKERS; w++)
		for (unsigned i = 0; i < gw_ctx_npaths(gws[w]) + gw_ctx_nretiring(gws[w]); i++) {
			struct gw_path *pa = gw_path_nth(gws[w], i);
			unsigned r;

			for (r = 0; r < nr; r++)
				if (!strcmp(gw_path_name(rows[r].prw_first), gw_path_name(pa)) &&
				    gw_path_retiring(rows[r].prw_first) == gw_path_retiring(pa) &&
				    !rows[r].prw_pa[w])
					break;
			if (r == nr) {
				if (nr == cap)
					continue;
				memset(&rows[nr], 0, sizeof(rows[nr]));
				rows[nr++].prw_first = pa;
			}
			rows[r].prw_pa[w] = pa;
		}
	return nr;
}

/* The row's state: the one all its workers are in, else the first that
 * differs from the first worker's, with how many are in it ("down 1/2");
 * *odd gets the first worker not up (-1: all up). */
static void gw_prow_state(const struct gw_prow *r, unsigned n, char *buf, size_t len, int *odd)
{
	const char *s0 = gw_path_state_str(r->prw_first), *diff = NULL;
	unsigned have = 0, k = 0;

	*odd = -1;
	for (unsigned w = 0; w < n; w++) {
		if (!r->prw_pa[w])
			continue;
		have++;
		if (*odd < 0 && !gw_path_up(r->prw_pa[w]))
			*odd = (int)w;
		if (!diff && strcmp(gw_path_state_str(r->prw_pa[w]), s0))
			diff = gw_path_state_str(r->prw_pa[w]);
	}
	if (!diff) {
		snprintf(buf, len, "%s", s0);
		return;
	}
	for (unsigned w = 0; w < n; w++)
		k += r->prw_pa[w] && !strcmp(gw_path_state_str(r->prw_pa[w]), diff);
	snprintf(buf, len, "%s %u/%u", diff, k, have);
}

/* Why the row is not up: its first worker not up says, named when the
 * workers disagree. */
static void gw_prow_why(const struct gw_prow *r, unsigned n, int odd, const char *state,
			char *buf, size_t len)
{
	size_t o;

	gw_path_why_phrase(odd >= 0 ? r->prw_pa[odd] : r->prw_first, buf, len);
	o = strlen(buf);
	if (n > 1 && odd >= 0 && strchr(state, '/'))
		snprintf(buf + o, len - o, " (worker %d)", odd);
}

static struct gw_prow *gw_prows_new(struct gw_ctx *const *gws, unsigned n, unsigned *nr)
{
	struct gw_prow *rows = calloc(GW_PATH_SLOTS, sizeof(*rows));

	*nr = rows ? gw_prows(gws, n, rows, GW_PATH_SLOTS) : 0;
	return rows;
}

void gw_ctl_paths_status(struct gw_ctx *const *gws, unsigned n, struct evbuffer *o)
{
	unsigned nr;
	struct gw_prow *rows = gw_prows_new(gws, n, &nr);

	for (unsigned i = 0; i < nr; i++) {
		char state[32], why[320];
		unsigned held = 0;
		int odd;

		for (unsigned w = 0; w < n; w++)
			held += rows[i].prw_pa[w] ? gw_path_nheld(rows[i].prw_pa[w]) : 0;
		gw_prow_state(&rows[i], n, state, sizeof(state), &odd);
		gw_prow_why(&rows[i], n, odd, state, why, sizeof(why));
		evbuffer_add_printf(o, "path %-24s %-5s %-8s %u held; %s\n",
				    gw_path_name(rows[i].prw_first), gw_path_transport(rows[i].prw_first),
				    state, held, why);
	}
	free(rows);
}

static void gw_backends_head(struct evbuffer *o)
{
	evbuffer_add_printf(o, "%-24s %-10s %-5s %-8s %5s %6s %8s  %s\n", "path", "backend",
			    "tp", "state", "held", "queued", "inflight",
			    "connections (conn:state credits granted/in use, inline send/recv)");
}

void gw_ctl_paths_worker(struct gw_ctx *gw, struct evbuffer *o)
{
	struct gw_tp_info ti;

	gw_backends_head(o);
	for (unsigned i = 0; i < gw_ctx_npaths(gw) + gw_ctx_nretiring(gw); i++) {
		struct gw_path *pa = gw_path_nth(gw, i);
		bool have = gw_path_tp_info(pa, &ti) == 0;

		evbuffer_add_printf(o, "%-24s %-10s %-5s %-8s %5u", gw_path_name(pa),
				    gw_path_info(pa)->pi_backend->cb_name, gw_path_transport(pa),
				    gw_path_state_str(pa), gw_path_nheld(pa));
		if (!have) {
			evbuffer_add_printf(o, " %6s %8s  -", "-", "-");
		} else {
			evbuffer_add_printf(o, " %6u %8u ", ti.ti_queued, ti.ti_inflight);
			for (unsigned k = 0; k < ti.ti_nconns; k++)
				evbuffer_add_printf(o, " %u:%s credits %u/%u inline %" PRIu32 "/%" PRIu32,
						    k, ti.ti_conn[k].tc_up ? "up" : "down",
						    ti.ti_conn[k].tc_credits, ti.ti_conn[k].tc_inflight,
						    ti.ti_conn[k].tc_send_threshold,
						    ti.ti_conn[k].tc_recv_threshold);
		}
		if (!gw_path_up(pa)) {
			char why[256];

			gw_path_why_phrase(pa, why, sizeof(why));
			evbuffer_add_printf(o, "\n  %s", why);
		}
		evbuffer_add_printf(o, "\n");
	}
}

/* One row of `backends` over n > 1 workers: sums, and the connections
 * of all of them counted ("conns 3/4 up, credits 96/5"). */
static void gw_prow_backend(const struct gw_prow *r, unsigned n, struct evbuffer *o)
{
	unsigned held = 0, queued = 0, inflight = 0, conns = 0, up = 0, cred = 0, used = 0;
	bool have = false;
	char state[32], why[320];
	struct gw_tp_info ti;
	int odd;

	for (unsigned w = 0; w < n; w++) {
		if (!r->prw_pa[w])
			continue;
		held += gw_path_nheld(r->prw_pa[w]);
		if (gw_path_tp_info(r->prw_pa[w], &ti) != 0)
			continue;
		have = true;
		queued += ti.ti_queued;
		inflight += ti.ti_inflight;
		for (unsigned k = 0; k < ti.ti_nconns; k++, conns++) {
			up += ti.ti_conn[k].tc_up;
			cred += ti.ti_conn[k].tc_credits;
			used += ti.ti_conn[k].tc_inflight;
		}
	}
	gw_prow_state(r, n, state, sizeof(state), &odd);
	evbuffer_add_printf(o, "%-24s %-10s %-5s %-8s %5u", gw_path_name(r->prw_first),
			    gw_path_info(r->prw_first)->pi_backend->cb_name,
			    gw_path_transport(r->prw_first), state, held);
	if (have)
		evbuffer_add_printf(o, " %6u %8u  conns %u/%u up, credits %u/%u", queued, inflight,
				    up, conns, cred, used);
	else
		evbuffer_add_printf(o, " %6s %8s  -", "-", "-");
	if (odd >= 0) {
		gw_prow_why(r, n, odd, state, why, sizeof(why));
		evbuffer_add_printf(o, "\n  %s", why);
	}
	evbuffer_add_printf(o, "\n");
}

void gw_ctl_paths_backends(struct gw_ctx *const *gws, unsigned n, struct evbuffer *o)
{
	unsigned nr;
	struct gw_prow *rows;

	if (n < 2) {		/* one worker: every connection on its own */
		gw_ctl_paths_worker(gws[0], o);
		return;
	}
	rows = gw_prows_new(gws, n, &nr);
	gw_backends_head(o);
	for (unsigned i = 0; i < nr; i++)
		gw_prow_backend(&rows[i], n, o);
	evbuffer_add_printf(o, "(%u workers, each with its own paths: summed; rpcrdma-gwctl "
			    "backends --workers shows each)\n", n);
	free(rows);
}
