// SPDX-License-Identifier: MIT
/*
 * This file contains the shape of a log line on standard error
 * (log_format): its time first (UTC, RFC 3339 with milliseconds), then
 *
 *   text    TIME rpcrdma-gw[LEVEL] (worker N) FUNCTION: MESSAGE
 *   logfmt  ts=TIME level=LEVEL worker=N func=FUNCTION msg="MESSAGE" client=... xid=...
 *   json    {"ts":"TIME","level":"LEVEL","worker":"N","func":"FUNCTION","msg":"MESSAGE",...}
 *
 * (the worker only with several workers: gl_worker).
 *
 * The peer's fields (client, backend, xid, prog, vers, proc, error: those
 * journald gets, journal.c) follow in logfmt and JSON when the line is
 * about one peer.  A line is built in one buffer and written with one
 * write, so lines of several threads do not mix.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

/* A message is cut at GW_LOG_MSG_MAX bytes (at a character's start), so that
 * its line, every byte escaped (six for one) and the peer's fields added,
 * fits GW_LOG_LINE_MAX: a JSON line is always whole. */
#define GW_LOG_MSG_MAX	1024
#define GW_LOG_LINE_MAX	8192

static const char *const gw_fmt_level[] = { "error", "warn", "info", "debug" };

struct gw_lbuf {
	char *lb_p;
	size_t lb_len, lb_off;
};

static void lb_add(struct gw_lbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lb_add(struct gw_lbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->lb_off + 1 >= b->lb_len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->lb_p + b->lb_off, b->lb_len - b->lb_off, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->lb_off += (size_t)n < b->lb_len - b->lb_off ? (size_t)n : b->lb_len - b->lb_off - 1;
}

/* v as a JSON string body (quotes added by the caller), or a logfmt value
 * that needs quotes: '"' and '\' escaped, control bytes as \n, \t or
 * \u00XX (JSON) / \xXX (logfmt). */
static void lb_escaped(struct gw_lbuf *b, const char *v, bool json)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (*p == '"' || *p == '\\')
			lb_add(b, "\\%c", *p);
		else if (*p == '\n')
			lb_add(b, "\\n");
		else if (*p == '\t')
			lb_add(b, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			lb_add(b, json ? "\\u%04x" : "\\x%02x", *p);
		else
			lb_add(b, "%c", *p);
	}
}

/* One name and value: JSON ,"k":"v"; logfmt  k=v, quoted when v is empty
 * or holds a blank, '=', '"' or a control byte. */
static void lb_field(struct gw_lbuf *b, enum cfg_log_format fmt, const char *k, const char *v)
{
	if (fmt == CFG_LOGFMT_JSON) {
		lb_add(b, ",\"%s\":\"", k);
		lb_escaped(b, v, true);
		lb_add(b, "\"");
		return;
	}
	lb_add(b, " %s=", k);
	if (v[0] && !v[strcspn(v, " =\"\\\t\n\r")]) {
		lb_add(b, "%s", v);
		return;
	}
	lb_add(b, "\"");
	lb_escaped(b, v, false);
	lb_add(b, "\"");
}

static void lb_peer(struct gw_lbuf *b, enum cfg_log_format fmt, const struct gw_log_ev *ev)
{
	char n[16];

	if (ev->le_client)
		lb_field(b, fmt, "client", ev->le_client);
	if (ev->le_backend)
		lb_field(b, fmt, "backend", ev->le_backend);
	if (ev->le_has_xid) {
		snprintf(n, sizeof(n), "%#x", ev->le_xid);
		lb_field(b, fmt, "xid", n);
	}
	if (ev->le_prog) {
		snprintf(n, sizeof(n), "%u", ev->le_prog);
		lb_field(b, fmt, "prog", n);
		snprintf(n, sizeof(n), "%u", ev->le_vers);
		lb_field(b, fmt, "vers", n);
		snprintf(n, sizeof(n), "%u", ev->le_proc);
		lb_field(b, fmt, "proc", n);
	}
	if (ev->le_error)
		lb_field(b, fmt, "error", ev->le_error);
}

size_t gw_log_format(enum cfg_log_format fmt, uint64_t unix_ms, enum cfg_log_level lvl,
		     unsigned worker, const char *func, const struct gw_log_ev *ev, const char *msg, char *buf,
		     size_t len)
{
	struct gw_lbuf b = { .lb_p = buf, .lb_len = len };
	const char *level = (unsigned)lvl < 4 ? gw_fmt_level[lvl] : "?";
	time_t secs = (time_t)(unix_ms / 1000);
	char ts[40], cut[GW_LOG_MSG_MAX + 1], wk[16] = "";
	size_t n = strlen(msg);
	struct tm tm;

	if (!len)
		return 0;
	buf[0] = '\0';
	if (n > GW_LOG_MSG_MAX) {
		for (n = GW_LOG_MSG_MAX; n > 0 && ((unsigned char)msg[n] & 0xc0) == 0x80; n--)
			;
		memcpy(cut, msg, n);
		cut[n] = '\0';
		msg = cut;
	}
	gmtime_r(&secs, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + strlen(ts), sizeof(ts) - strlen(ts), ".%03uZ", (unsigned)(unix_ms % 1000));
	if (worker)
		snprintf(wk, sizeof(wk), "%u", worker - 1);
	if (fmt == CFG_LOGFMT_JSON)
		lb_add(&b, "{\"ts\":\"%s\",\"level\":\"%s\"", ts, level);
	else if (fmt == CFG_LOGFMT_LOGFMT)
		lb_add(&b, "ts=%s level=%s", ts, level);
	else
		lb_add(&b, "%s rpcrdma-gw[%s] %s%s%s%s: %s", ts, level, wk[0] ? "(worker " : "", wk,
		       wk[0] ? ") " : "", func, msg);
	if (fmt != CFG_LOGFMT_TEXT) {
		if (wk[0])
			lb_field(&b, fmt, "worker", wk);
		lb_field(&b, fmt, "func", func);
		lb_field(&b, fmt, "msg", msg);
	}
	if (ev && fmt != CFG_LOGFMT_TEXT)
		lb_peer(&b, fmt, ev);
	lb_add(&b, fmt == CFG_LOGFMT_JSON ? "}\n" : "\n");
	return b.lb_off;
}

void gw_log_stderr(const struct gw_log *lg, enum cfg_log_level lvl, const char *func,
		   const struct gw_log_ev *ev, const char *msg)
{
	char line[GW_LOG_LINE_MAX];
	struct timespec now;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &now);
	n = gw_log_format(lg ? lg->gl_format : CFG_LOGFMT_TEXT,
			  (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000, lvl,
			  lg ? lg->gl_worker : 0, func, ev,
			  msg, line, sizeof(line));
	if (write(STDERR_FILENO, line, n) < 0)
		return;	/* nowhere to say so */
}
