// SPDX-License-Identifier: MIT
/*
 * This file contains the structured side of logging: where lines go
 * (stderr, or journald with fields when systemd connected stderr to the
 * journal), the per-peer events of gw_logf_ev() with their journald fields,
 * and the rate limit that keeps one misbehaving client or server from
 * flooding the log.
 *
 * Rate limit: a small table of peers (hash of the peer name, open
 * addressing over GW_LOG_RL_SLOTS slots; the oldest slot is reused when
 * full).  Each slot counts the lines of the current second; beyond
 * GW_LOG_RATE they are dropped and counted, and the first line of a later
 * second from that peer is preceded by "peer P: suppressed N messages".
 * No allocation per line: the table is allocated at start.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <systemd/sd-journal.h>

#include "chunking.h"
#include "config.h"
#include "log.h"

#define GW_LOG_RL_SLOTS	64

struct gw_log_rl_slot {
	uint64_t ls_hash;		/* 0 = free */
	uint64_t ls_second;
	unsigned ls_lines;		/* this second */
	uint64_t ls_suppressed;		/* not yet reported */
};
struct gw_log_rl {
	struct gw_stats *rl_stats;
	struct gw_log_rl_slot rl_slot[GW_LOG_RL_SLOTS];
};

struct gw_log_rl *gw_log_rl_new(struct gw_stats *st)
{
	struct gw_log_rl *rl = calloc(1, sizeof(*rl));

	if (rl)
		rl->rl_stats = st;
	return rl;
}

void gw_log_rl_free(struct gw_log_rl *rl)
{
	free(rl);
}

enum gw_log_target gw_log_target_auto(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat sb;

	/* systemd.exec(5): JOURNAL_STREAM=DEV:INODE of the stream it gave us;
	 * stderr redirected elsewhere (a shell in the unit) keeps stderr. */
	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &sb) < 0)
		return GW_LOG_STDERR;
	return (unsigned long long)sb.st_dev == dev && (unsigned long long)sb.st_ino == ino
	       ? GW_LOG_JOURNAL : GW_LOG_STDERR;
}

/* Hash of the peer name without its port ("10.0.0.1:876" and
 * "[fe80::1]:876" count per host: a client reconnecting in a loop gets a
 * new port each time). */
static uint64_t gw_log_hash(const char *s)
{
	const char *end = strrchr(s, ':');
	uint64_t h = 14695981039346656037ull;

	if (!end || (s[0] != '[' && strchr(s, ':') != end))
		end = s + strlen(s);
	while (s < end)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h ? h : 1;
}

/* true: emit; *report: suppressed lines to report first (0 = none). */
static bool gw_log_rl_pass(struct gw_log_rl *rl, const char *peer, uint64_t *report)
{
	uint64_t h = gw_log_hash(peer), now = gw_now_ms() / 1000;
	struct gw_log_rl_slot *s = NULL, *oldest = NULL;

	*report = 0;
	for (unsigned n = 0; n < GW_LOG_RL_SLOTS; n++) {
		struct gw_log_rl_slot *t = &rl->rl_slot[(h + n) % GW_LOG_RL_SLOTS];

		if (t->ls_hash == h || !t->ls_hash) {
			s = t;
			break;
		}
		if (!oldest || t->ls_second < oldest->ls_second)
			oldest = t;
	}
	if (!s) {		/* table full: forget the quietest peer */
		s = oldest;
		memset(s, 0, sizeof(*s));
	}
	if (s->ls_hash != h) {
		s->ls_hash = h;
		s->ls_second = now;
		s->ls_lines = 0;
		s->ls_suppressed = 0;
	}
	if (s->ls_second != now) {
		s->ls_second = now;
		s->ls_lines = 0;
		*report = s->ls_suppressed;
		s->ls_suppressed = 0;
	}
	if (s->ls_lines >= GW_LOG_RATE) {
		s->ls_suppressed++;
		gw_stat_inc(rl->rl_stats, GW_CTR_LOG_SUPPRESSED);
		return false;
	}
	s->ls_lines++;
	return true;
}

/* syslog priorities of enum cfg_log_level */
static const int gw_ev_prio[] = { 3, 4, 6, 7 };

static void gw_log_emit(const struct gw_log *lg, enum cfg_log_level lvl, const char *func,
			const struct gw_log_ev *ev, const char *msg)
{
	unsigned l = (unsigned)lvl < 4 ? (unsigned)lvl : 0;
	char xid[16] = "", prog[16] = "", vers[16] = "", proc[16] = "", wk[16] = "";

	if (lg->gl_worker)
		snprintf(wk, sizeof(wk), "%u", lg->gl_worker - 1);
	if (lg->gl_target != GW_LOG_JOURNAL) {
		gw_log_stderr(lg, lvl, func, ev, msg);
		return;
	}
	if (ev && ev->le_has_xid)
		snprintf(xid, sizeof(xid), "%#x", ev->le_xid);
	if (ev && ev->le_prog) {
		snprintf(prog, sizeof(prog), "%u", ev->le_prog);
		snprintf(vers, sizeof(vers), "%u", ev->le_vers);
		snprintf(proc, sizeof(proc), "%u", ev->le_proc);
	}
	/* Empty fields are sent empty: sd_journal_send takes a fixed list. */
	sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", gw_ev_prio[l], "CODE_FUNC=%s", func,
			"SYSLOG_IDENTIFIER=rpcrdma-gw",
			"RPC_XID=%s", xid,
			"CLIENT=%s", ev && ev->le_client ? ev->le_client : "",
			"BACKEND=%s", ev && ev->le_backend ? ev->le_backend : "",
			"RPC_PROG=%s", prog, "RPC_VERS=%s", vers, "RPC_PROC=%s", proc,
			"ERROR=%s", ev && ev->le_error ? ev->le_error : "",
			"WORKER=%s", wk,
			NULL);
}

void gw_log_line(const struct gw_log *lg, enum cfg_log_level lvl, const char *func, const char *msg)
{
	gw_log_emit(lg, lvl, func, NULL, msg);
}

void gw_logf_ev(const struct gw_log *lg, enum cfg_log_level lvl, const char *func,
		const struct gw_log_ev *ev, const char *fmt, ...)
{
	const char *peer = ev ? (ev->le_client ? ev->le_client : ev->le_backend) : NULL;
	char line[1024];
	uint64_t report = 0;
	va_list ap;

	if (peer && lg->gl_rl && !gw_log_rl_pass(lg->gl_rl, peer, &report))
		return;
	if (report) {
		snprintf(line, sizeof(line), "peer %s: suppressed %llu messages (more than %d a second)",
			 peer, (unsigned long long)report, GW_LOG_RATE);
		gw_log_emit(lg, CFG_LOG_WARN, func, ev, line);
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	gw_log_emit(lg, lvl, func, ev, line);
}
