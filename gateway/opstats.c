// SPDX-License-Identifier: MIT
/*
 * This file contains the operator's view of the latency histograms
 * (`rpcrdma-gwctl stats --ops`): the control socket's JSON answer of
 * `stats ops` (gw_ops_json: per NFS operation and per path, the raw
 * buckets), and the table made from one such answer or from the
 * difference of two (gw_ops_table: the `-i N` interval mode, as nfsstat -i
 * and mountstats do).  The table shows count, mean, p50 and p99; the
 * percentiles are interpolated inside the bucket that holds them
 * (gw_hist_quantile), so they are only as fine as the bucket bounds.
 *
 * Used by the daemon (control.c) and by rpcrdma-gwctl, which links the
 * same library; nothing here is on the data path.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <json.h>

#include "client.h"
#include "config.h"
#include "gateway.h"
#include "log.h"
#include "ops.h"
#include "transport.h"

static struct json_object *gw_ops_hist_json(const struct gw_hist *gh)
{
	struct json_object *r = json_object_new_object(), *b = json_object_new_array();

	json_object_object_add(r, "count", json_object_new_uint64(gh->gh_count));
	json_object_object_add(r, "sum_us", json_object_new_uint64(gh->gh_sum_us));
	for (unsigned i = 0; i < GW_HIST_NBUCKETS; i++)
		json_object_array_add(b, json_object_new_uint64(gh->gh_bucket[i]));
	json_object_object_add(r, "buckets", b);
	return r;
}

static void gw_hist_sum(struct gw_hist *d, const struct gw_hist *s)
{
	for (unsigned b = 0; b < GW_HIST_NBUCKETS; b++)
		d->gh_bucket[b] += s->gh_bucket[b];
	d->gh_count += s->gh_count;
	d->gh_sum_us += s->gh_sum_us;
}

struct gw_stats *gw_stats_all(struct gw_ctx *const *gws, unsigned n)
{
	struct gw_stats *sum = calloc(1, sizeof(*sum));

	for (unsigned w = 0; sum && w < n; w++)
		gw_stats_sum(sum, gw_ctx_stats(gws[w]));
	return sum;
}

void gw_paths_hist_sum(struct gw_ctx *const *gws, unsigned n, const char *name, struct gw_hist *h)
{
	memset(h, 0, sizeof(*h));
	for (unsigned w = 0; w < n; w++)
		for (unsigned j = 0; j < gw_ctx_npaths(gws[w]); j++)
			if (!strcmp(gw_path_name(gw_ctx_path(gws[w], j)), name))
				gw_hist_sum(h, gw_path_hist(gw_ctx_path(gws[w], j)));
}

struct json_object *gw_ops_json(const struct gw_stats *st, struct gw_ctx *gw)
{
	return gw_ops_json_all(st, &gw, gw ? 1 : 0);
}

struct json_object *gw_ops_json_all(const struct gw_stats *st, struct gw_ctx *const *gws, unsigned n)
{
	struct json_object *o = json_object_new_object(), *ops = json_object_new_array(),
			   *bk = json_object_new_array(), *bounds = json_object_new_array();

	for (unsigned i = 0; i < GW_HIST_NBUCKETS - 1; i++)
		json_object_array_add(bounds, json_object_new_uint64(gw_hist_bound_us[i]));
	json_object_object_add(o, "bounds_us", bounds);
	for (unsigned i = 0; st && i < GW_OPH_SLOTS; i++) {
		struct json_object *r;
		const char *vers, *op;

		if (!st->gs_op_hist[i].gh_count)
			continue;
		op = gw_op_slot_name(i, &vers);
		r = gw_ops_hist_json(&st->gs_op_hist[i]);
		json_object_object_add(r, "vers", json_object_new_string(vers));
		json_object_object_add(r, "op", json_object_new_string(op));
		json_object_array_add(ops, r);
	}
	json_object_object_add(o, "ops", ops);
	for (unsigned i = 0; n && i < gw_ctx_npaths(gws[0]); i++) {
		const char *name = gw_path_name(gw_ctx_path(gws[0], i));
		struct gw_hist h;
		struct json_object *r;

		gw_paths_hist_sum(gws, n, name, &h);
		r = gw_ops_hist_json(&h);
		json_object_object_add(r, "path", json_object_new_string(name));
		json_object_array_add(bk, r);
	}
	json_object_object_add(o, "backends", bk);
	if (st)
		json_object_object_add(o, "cpu", gw_cpu_json(st));
	return o;
}


void gw_stats_sum(struct gw_stats *dst, const struct gw_stats *src)
{
	for (unsigned c = 0; c < GW_CTR__COUNT; c++)
		dst->gs_ctr[c] += src->gs_ctr[c];
	for (unsigned h = 0; h < GW_HIST__COUNT; h++)
		gw_hist_sum(&dst->gs_hist[h], &src->gs_hist[h]);
	for (unsigned h = 0; h < GW_OPH_SLOTS; h++)
		gw_hist_sum(&dst->gs_op_hist[h], &src->gs_op_hist[h]);
	for (unsigned i = 0; i < GW_STATS_PROCS; i++) {
		const struct gw_proc_stat *ps = &src->gs_proc[i];

		if (ps->ps_calls)	/* through the hash: the two tables differ */
			gw_stats_proc_add(dst, ps->ps_prog, ps->ps_vers, ps->ps_proc, ps->ps_calls);
	}
	dst->gs_proc_overflow += src->gs_proc_overflow;
	for (unsigned i = 0; i < GW_NFS4_OPS; i++)
		dst->gs_nfs4_op[i] += src->gs_nfs4_op[i];
	if (src->gs_tls_cert_expiry &&
	    (!dst->gs_tls_cert_expiry || src->gs_tls_cert_expiry < dst->gs_tls_cert_expiry))
		dst->gs_tls_cert_expiry = src->gs_tls_cert_expiry;
	dst->gs_cpu_user_us += src->gs_cpu_user_us;
	dst->gs_cpu_sys_us += src->gs_cpu_sys_us;
}

struct json_object *gw_cpu_json(const struct gw_stats *st)
{
	struct json_object *o = json_object_new_object(), *sc = json_object_new_object();
	uint64_t user, sys;
	const char *name;
	enum gw_ctr c;

	user = st->gs_cpu_user_us;	/* sampled when the workers stopped */
	sys = st->gs_cpu_sys_us;
	if (!user && !sys)	/* one loop: this thread */
		gw_cpu_thread_us(&user, &sys);
	json_object_object_add(o, "calls_forwarded",
			       json_object_new_uint64(st->gs_hist[GW_HIST_CALL].gh_count));
	json_object_object_add(o, "user_us", json_object_new_uint64(user));
	json_object_object_add(o, "system_us", json_object_new_uint64(sys));
	for (unsigned i = 0; (name = gw_sys_call_name(i, &c)); i++)
		json_object_object_add(sc, name, json_object_new_uint64(st->gs_ctr[c]));
	json_object_object_add(o, "syscalls", sc);
	return o;
}

/* Worker w's JSON answer into base (worker 0's): its per-worker lists
 * (paths, clients) appended, each entry with its "worker"; counts summed;
 * ready only when every worker is; what the configuration says (version,
 * limits, listeners) is the same in all and stays worker 0's. */
void gw_ops_json_merge(struct json_object *base, struct json_object *add, unsigned w)
{
	json_object_object_foreach(add, key, val) {
		struct json_object *dst = NULL;

		if (!strcmp(key, "listeners") || !json_object_object_get_ex(base, key, &dst))
			continue;
		if (json_object_is_type(val, json_type_array) && json_object_is_type(dst, json_type_array)) {
			for (size_t i = 0; i < json_object_array_length(val); i++) {
				struct json_object *e = json_object_array_get_idx(val, i);

				if (json_object_is_type(e, json_type_object))
					json_object_object_add(e, "worker", json_object_new_int((int)w));
				json_object_array_add(dst, json_object_get(e));
			}
		} else if (json_object_is_type(val, json_type_int) && strcmp(key, "uptime_s") &&
			   strcmp(key, "tls_cert_expiry")) {
			json_object_set_int64(dst, json_object_get_int64(dst) + json_object_get_int64(val));
		} else if (!strcmp(key, "ready") && json_object_get_boolean(dst) &&
			   !json_object_get_boolean(val)) {
			struct json_object *why = NULL;

			json_object_set_boolean(dst, false);
			if (json_object_object_get_ex(add, "ready_reason", &why))
				json_object_object_add(base, "ready_reason", json_object_get(why));
		}
	}
}

/* ---- the table ---- */

static const char *gw_ops_str(struct json_object *r, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(r, key, &v) ? json_object_get_string(v) : "";
}

static uint64_t gw_ops_u64(struct json_object *r, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(r, key, &v) ? json_object_get_uint64(v) : 0;
}

/* A row's key: "vers op" or the path. */
static void gw_ops_key(struct json_object *r, bool path, char *buf, size_t len)
{
	if (path)
		snprintf(buf, len, "%s", gw_ops_str(r, "path"));
	else
		snprintf(buf, len, "%s %s", gw_ops_str(r, "vers"), gw_ops_str(r, "op"));
}

/* The row of prev (array) with the same key as r, or NULL. */
static struct json_object *gw_ops_find(struct json_object *prev, struct json_object *r, bool path)
{
	char want[128], have[128];

	gw_ops_key(r, path, want, sizeof(want));
	for (size_t i = 0; prev && i < json_object_array_length(prev); i++) {
		struct json_object *p = json_object_array_get_idx(prev, i);

		gw_ops_key(p, path, have, sizeof(have));
		if (!strcmp(want, have))
			return p;
	}
	return NULL;
}

/* Buckets, count and sum of cur minus prev (prev NULL: cur).  A count
 * that went down means the gateway restarted or the path was made anew:
 * cur is taken whole, as Prometheus treats a counter reset. */
static void gw_ops_delta(struct json_object *cur, struct json_object *prev, struct gw_hist *d)
{
	struct json_object *cb = NULL, *pb = NULL;

	memset(d, 0, sizeof(*d));
	if (prev && gw_ops_u64(prev, "count") > gw_ops_u64(cur, "count"))
		prev = NULL;
	json_object_object_get_ex(cur, "buckets", &cb);
	if (prev)
		json_object_object_get_ex(prev, "buckets", &pb);
	d->gh_count = gw_ops_u64(cur, "count") - (prev ? gw_ops_u64(prev, "count") : 0);
	d->gh_sum_us = gw_ops_u64(cur, "sum_us") - (prev ? gw_ops_u64(prev, "sum_us") : 0);
	for (unsigned i = 0; i < GW_HIST_NBUCKETS; i++) {
		uint64_t c = cb ? json_object_get_uint64(json_object_array_get_idx(cb, i)) : 0;
		uint64_t p = pb ? json_object_get_uint64(json_object_array_get_idx(pb, i)) : 0;

		d->gh_bucket[i] = c >= p ? c - p : 0;
	}
}

/* cur's key minus prev's (0 when it went down: a restart). */
static uint64_t gw_cpu_delta(struct json_object *cur, struct json_object *prev, const char *key)
{
	uint64_t c = gw_ops_u64(cur, key), p = prev ? gw_ops_u64(prev, key) : 0;

	return c >= p ? c - p : c;
}

/* v per call; 0 with no call (jout's zeros). */
static double gw_cpu_per(uint64_t v, uint64_t calls)
{
	return calls ? (double)v / (double)calls : 0;
}

void gw_cpu_per_call(struct json_object *prev, struct json_object *cur, struct evbuffer *out,
		     struct json_object *jout)
{
	struct json_object *csc = NULL, *psc = NULL, *jsc = jout ? json_object_new_object() : NULL;
	uint64_t calls;
	const char *name;
	enum gw_ctr c;

	if (prev && gw_ops_u64(prev, "calls_forwarded") > gw_ops_u64(cur, "calls_forwarded"))
		prev = NULL;	/* the gateway restarted: cur whole */
	calls = gw_cpu_delta(cur, prev, "calls_forwarded");
	if (!calls && !jout) {
		evbuffer_add_printf(out, "per forwarded call (0 calls): none\n");
		return;
	}
	json_object_object_get_ex(cur, "syscalls", &csc);
	if (prev)
		json_object_object_get_ex(prev, "syscalls", &psc);
	if (jout) {
		json_object_object_add(jout, "calls_forwarded", json_object_new_uint64(calls));
		json_object_object_add(jout, "cpu_user_us_per_call", json_object_new_double(
			gw_cpu_per(gw_cpu_delta(cur, prev, "user_us"), calls)));
		json_object_object_add(jout, "cpu_system_us_per_call", json_object_new_double(
			gw_cpu_per(gw_cpu_delta(cur, prev, "system_us"), calls)));
	} else {
		evbuffer_add_printf(out, "per forwarded call (%" PRIu64 " calls): cpu user %.1f us, "
				    "system %.1f us; syscalls", calls,
				    gw_cpu_per(gw_cpu_delta(cur, prev, "user_us"), calls),
				    gw_cpu_per(gw_cpu_delta(cur, prev, "system_us"), calls));
	}
	for (unsigned i = 0; (name = gw_sys_call_name(i, &c)); i++) {
		double v = gw_cpu_per(gw_cpu_delta(csc, psc, name), calls);

		if (jsc)
			json_object_object_add(jsc, name, json_object_new_double(v));
		else
			evbuffer_add_printf(out, "%s %s %.2f", i ? "," : "", name, v);
	}
	if (jout)
		json_object_object_add(jout, "syscalls_per_call", jsc);
	else
		evbuffer_add_printf(out, "\n");
}

/* One section (ops or backends) of the table, or of the JSON answer. */
static unsigned gw_ops_section(struct json_object *prev, struct json_object *cur, bool path,
			       struct evbuffer *o, struct json_object *jarr)
{
	unsigned rows = 0;

	for (size_t i = 0; cur && i < json_object_array_length(cur); i++) {
		struct json_object *r = json_object_array_get_idx(cur, i);
		struct gw_hist d;
		double mean, p50, p99;

		gw_ops_delta(r, gw_ops_find(prev, r, path), &d);
		if (!d.gh_count)
			continue;
		mean = (double)d.gh_sum_us / (double)d.gh_count;
		p50 = gw_hist_quantile(d.gh_bucket, 0.50);
		p99 = gw_hist_quantile(d.gh_bucket, 0.99);
		rows++;
		if (jarr) {
			struct json_object *j = json_object_new_object();

			if (path) {
				json_object_object_add(j, "path", json_object_new_string(gw_ops_str(r, "path")));
			} else {
				json_object_object_add(j, "vers", json_object_new_string(gw_ops_str(r, "vers")));
				json_object_object_add(j, "op", json_object_new_string(gw_ops_str(r, "op")));
			}
			json_object_object_add(j, "count", json_object_new_uint64(d.gh_count));
			json_object_object_add(j, "mean_us", json_object_new_double(mean));
			json_object_object_add(j, "p50_us", json_object_new_double(p50));
			json_object_object_add(j, "p99_us", json_object_new_double(p99));
			json_object_array_add(jarr, j);
			continue;
		}
		if (path)
			evbuffer_add_printf(o, "%-29s", gw_ops_str(r, "path"));
		else
			evbuffer_add_printf(o, "%-4s %-24s", gw_ops_str(r, "vers"), gw_ops_str(r, "op"));
		evbuffer_add_printf(o, " %12" PRIu64 " %10.3f %10.3f %10.3f\n", d.gh_count,
				    mean / 1000.0, p50 / 1000.0, p99 / 1000.0);
	}
	return rows;
}

void gw_ops_table(struct json_object *prev, struct json_object *cur, struct evbuffer *o, bool json)
{
	struct json_object *pops = NULL, *pbk = NULL, *cops = NULL, *cbk = NULL, *ccpu = NULL,
			   *pcpu = NULL;
	static const char hdr[] = "%-29s %12s %10s %10s %10s\n";

	if (prev) {
		json_object_object_get_ex(prev, "ops", &pops);
		json_object_object_get_ex(prev, "backends", &pbk);
	}
	json_object_object_get_ex(cur, "ops", &cops);
	json_object_object_get_ex(cur, "backends", &cbk);
	json_object_object_get_ex(cur, "cpu", &ccpu);
	if (prev)
		json_object_object_get_ex(prev, "cpu", &pcpu);
	if (json) {
		struct json_object *jo = json_object_new_object(), *a = json_object_new_array(),
				   *b = json_object_new_array();

		gw_ops_section(pops, cops, false, NULL, a);
		gw_ops_section(pbk, cbk, true, NULL, b);
		json_object_object_add(jo, "ops", a);
		json_object_object_add(jo, "backends", b);
		if (ccpu) {
			struct json_object *pc = json_object_new_object();

			gw_cpu_per_call(pcpu, ccpu, NULL, pc);
			json_object_object_add(jo, "per_call", pc);
		}
		evbuffer_add_printf(o, "%s\n", json_object_to_json_string_ext(jo,
				    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(jo);
		return;
	}
	evbuffer_add_printf(o, "NFS operations, received to replied (ms; p50, p99 interpolated "
			    "within histogram buckets):\n");
	evbuffer_add_printf(o, hdr, "vers op", "count", "mean", "p50", "p99");
	if (!gw_ops_section(pops, cops, false, o, NULL))
		evbuffer_add_printf(o, "(none)\n");
	evbuffer_add_printf(o, "\nbackends, first hand-off to the transport to the reply (ms):\n");
	evbuffer_add_printf(o, hdr, "path", "count", "mean", "p50", "p99");
	if (!gw_ops_section(pbk, cbk, true, o, NULL))
		evbuffer_add_printf(o, "(none)\n");
	if (ccpu) {
		evbuffer_add_printf(o, "\n");
		gw_cpu_per_call(pcpu, ccpu, o, NULL);
	}
}
