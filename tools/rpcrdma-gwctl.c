// SPDX-License-Identifier: MIT
/*
 * This file contains rpcrdma-gwctl, the control CLI of rpcrdma-gw: it sends
 * one command line over the gateway's control socket (gateway/control.c)
 * and prints the answer.  Protocol: "[json ]COMMAND [ARG]\n"; the answer
 * ends with a line "." (success) or "!ERR reason" (failure), then the
 * gateway closes.
 *
 * Exit status (rpcrdma-gwctl(8)): 0 success, 1 the gateway refused the
 * command, 2 usage error, 3 the control socket could not be reached or
 * answered badly (with --json: an answer that is not valid JSON), 4
 * `status` answered that the gateway is not ready (scripts: `rpcrdma-gwctl
 * status >/dev/null && ...`).
 *
 * COMMAND and ARGUMENT must be one word each: a blank or control byte in
 * them would end the request line early or start another one.
 *
 * `stats --ops -i N` asks for `json stats ops` every N seconds and prints
 * the difference of the last two answers (gw_ops_table), as nfsstat -i.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <json.h>

#include "config.h"
#include "log.h"
#include "ops.h"

#define GWCTL_TIMEOUT_MS	10000
#define GWCTL_NOT_READY		4	/* exit status of status when not ready */

/* One word of printable bytes: the request is one line, split on blanks. */
static bool word_ok(const char *w)
{
	if (!*w)
		return false;
	for (; *w; w++)
		if ((unsigned char)*w <= ' ' || *w == 0x7f)
			return false;
	return true;
}

/* The whole of s[0..len) is one JSON value. */
static bool json_ok(const char *s, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *jo;
	bool ok;

	if (!tok)
		return false;
	jo = json_tokener_parse_ex(tok, s, (int)len);
	ok = jo && json_tokener_get_error(tok) == json_tokener_success &&
	     json_tokener_get_parse_end(tok) == len;
	json_object_put(jo);
	json_tokener_free(tok);
	return ok;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rpcrdma-gwctl [--json] [-s SOCKET] COMMAND [ARGUMENT]\n"
		"\n"
		"commands:\n"
		"  status [--workers]  version, uptime, readiness, capacity, paths (one row\n"
		"                      each; --workers: each worker's own)\n"
		"  stats               calls per procedure (nfsstat-like), counters, CPU us\n"
		"                      and syscalls per forwarded call\n"
		"  stats --ops [-i N [-c COUNT]]\n"
		"                      per NFS operation and per path: count, mean, p50, p99\n"
		"                      (interpolated from the histogram buckets), CPU and\n"
		"                      syscalls per call; with\n"
		"                      -i, --interval N: every N seconds the last interval's,\n"
		"                      -c, --count COUNT times\n"
		"  clients [--top N] [--by calls|bytes|latency]\n"
		"                      client connections; --top: the N first by the key\n"
		"  backends [--workers]\n"
		"                      backend paths, connections, credits (one row per\n"
		"                      path; --workers: each worker's paths)\n"
		"  metrics             the Prometheus exposition\n"
		"  drain NAME          hold new calls of a path (route/backend) or backend\n"
		"  undrain NAME        send them again\n"
		"  reload              reload the configuration file (as SIGHUP)\n"
		"  log-level LEVEL     error, warn, info or debug\n"
		"  help                the commands the gateway knows\n"
		"\n"
		"  -s, --socket PATH   control socket (default " CFG_DEFAULT_CONTROL ")\n"
		"      --json          status, stats, clients, backends: one line of JSON\n"
		"  -h, --help          this text\n"
		"      --version       print the version\n");
}

/* Send req, read the whole answer into *ans (malloc'd, NUL-terminated).
 * Returns 0, or 3 (printed) when the socket failed. */
static int gwctl_request(const char *path, const char *req, char **ans, size_t *len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t cap = 1 << 16, have = 0, n = strlen(req);
	char *buf;
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		fprintf(stderr, "rpcrdma-gwctl: %s: %s (is rpcrdma-gw running, with control_socket?)\n",
			path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 3;
	}
	if (write(fd, req, n) != (ssize_t)n) {
		fprintf(stderr, "rpcrdma-gwctl: %s: write: %s\n", path, strerror(errno));
		close(fd);
		return 3;
	}
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return 3;
	}
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&pfd, 1, GWCTL_TIMEOUT_MS) <= 0) {
			fprintf(stderr, "rpcrdma-gwctl: %s: no answer\n", path);
			goto fail;
		}
		if (have + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				goto fail;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + have, cap - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "rpcrdma-gwctl: %s: read: %s\n", path, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		have += (size_t)r;
	}
	close(fd);
	buf[have] = '\0';
	*ans = buf;
	*len = have;
	return 0;
fail:
	close(fd);
	free(buf);
	return 3;
}

/* Split off the status line: returns it; the body is buf[0..*body_len). */
static char *gwctl_status_line(char *buf, size_t have, size_t *body_len)
{
	char *end = buf + have, *last;

	if (end > buf && end[-1] == '\n')
		*--end = '\0';
	last = strrchr(buf, '\n');
	last = last ? last + 1 : buf;
	*body_len = (size_t)(last - buf);
	return last;
}

/* Print the answer's body; returns the exit status of its status line. */
static int gwctl_finish(const char *path, char *last, const char *buf, size_t body)
{
	fwrite(buf, 1, body, stdout);
	if (!strcmp(last, "."))
		return 0;
	if (!strncmp(last, "!ERR ", 5)) {
		fprintf(stderr, "rpcrdma-gwctl: %s\n", last + 5);
		return 1;
	}
	fprintf(stderr, "rpcrdma-gwctl: truncated answer from %s\n", path);
	return 3;
}

/* status: 0 when its answer (buf[0..body)) says the gateway is ready, else
 * GWCTL_NOT_READY: the text's "ready: yes" line, or JSON's "ready": true. */
static int gwctl_ready_rc(const char *buf, size_t body, bool json)
{
	char *text = strndup(buf, body);
	struct json_object *jo, *r;
	bool ready = false;

	if (!text)
		return 3;
	if (json) {
		jo = json_tokener_parse(text);
		ready = jo && json_object_object_get_ex(jo, "ready", &r) && json_object_get_boolean(r);
		json_object_put(jo);
	} else {
		ready = !strncmp(text, "ready: yes", 10) || strstr(text, "\nready: yes");
	}
	free(text);
	return ready ? 0 : GWCTL_NOT_READY;
}

/* stats --ops -i N: every interval, the difference of the last two answers. */
static int gwctl_ops_interval(const char *path, unsigned secs, unsigned count, bool json)
{
	struct json_object *prev = NULL;
	struct evbuffer *eb = evbuffer_new();
	int rc = 0;

	if (!eb)
		return 3;
	for (unsigned shown = 0; !count || shown < count;) {
		char *buf, *last;
		size_t have, body;
		struct json_object *cur;

		if ((rc = gwctl_request(path, "json stats ops\n", &buf, &have)) != 0)
			break;
		last = gwctl_status_line(buf, have, &body);
		if (strcmp(last, ".") || !json_ok(buf, body ? body - 1 : 0)) {
			rc = gwctl_finish(path, last, "", 0);
			if (!rc) {
				fprintf(stderr, "rpcrdma-gwctl: the answer from %s is not valid JSON\n", path);
				rc = 3;
			}
			free(buf);
			break;
		}
		buf[body - 1] = '\0';
		cur = json_tokener_parse(buf);
		free(buf);
		if (prev) {
			time_t now = time(NULL);
			char ts[32];

			strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
			if (!json)
				evbuffer_add_printf(eb, "%s-- %s, last %u s --\n", shown ? "\n" : "", ts,
						    secs);
			gw_ops_table(prev, cur, eb, json);
			evbuffer_write(eb, STDOUT_FILENO);
			shown++;
		}
		json_object_put(prev);
		prev = cur;
		if (!count || shown < count)
			sleep(secs);
	}
	json_object_put(prev);
	evbuffer_free(eb);
	return rc;
}

static bool gwctl_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || v < lo || v > hi)
		return false;
	*out = (unsigned)v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "ops", no_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "top", required_argument, NULL, 't' },
		{ "by", required_argument, NULL, 'b' },
		{ "workers", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = CFG_DEFAULT_CONTROL, *by = NULL, *cmd;
	struct sockaddr_un sun;
	char req[512], top_arg[32] = "", by_arg[32] = "", *buf, *last;
	size_t have, body;
	bool json = false, ops = false, workers = false;
	unsigned interval = 0, count = 0, top = 0;
	int opt, n, rc;

	while ((opt = getopt_long(argc, argv, "s:i:c:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': path = optarg; break;
		case 'j': json = true; break;
		case 'o': ops = true; break;
		case 'i':
			if (!gwctl_uint(optarg, 1, 86400, &interval)) {
				fprintf(stderr, "rpcrdma-gwctl: --interval takes 1 to 86400 seconds\n");
				return 2;
			}
			break;
		case 'c':
			if (!gwctl_uint(optarg, 1, 1000000, &count)) {
				fprintf(stderr, "rpcrdma-gwctl: --count takes a number from 1\n");
				return 2;
			}
			break;
		case 't':
			if (!gwctl_uint(optarg, 1, 1024, &top)) {
				fprintf(stderr, "rpcrdma-gwctl: --top takes 1 to 1024\n");
				return 2;
			}
			break;
		case 'b': by = optarg; break;
		case 'w': workers = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("rpcrdma-gwctl %s\n", GW_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc || argc - optind > 2) {	/* COMMAND [ARGUMENT] */
		usage(stderr);
		return 2;
	}
	cmd = argv[optind];
	if ((ops || interval || count) && (strcmp(cmd, "stats") || !ops || argc - optind > 1 ||
					   (count && !interval))) {
		fprintf(stderr, "rpcrdma-gwctl: --ops belongs to stats; -i to stats --ops; "
			"-c to -i\n");
		return 2;
	}
	if ((top || by) && (strcmp(cmd, "clients") || argc - optind > 1)) {
		fprintf(stderr, "rpcrdma-gwctl: --top and --by belong to clients\n");
		return 2;
	}
	if (workers && ((strcmp(cmd, "status") && strcmp(cmd, "backends")) || argc - optind > 1)) {
		fprintf(stderr, "rpcrdma-gwctl: --workers belongs to status and backends\n");
		return 2;
	}
	if (by && strcmp(by, "calls") && strcmp(by, "bytes") && strcmp(by, "latency")) {
		fprintf(stderr, "rpcrdma-gwctl: --by takes calls, bytes or latency\n");
		return 2;
	}
	for (int i = optind; i < argc; i++)
		if (!word_ok(argv[i])) {
			fprintf(stderr, "rpcrdma-gwctl: '%s': blanks and control characters are "
				"not allowed in a command or name\n", argv[i]);
			return 2;
		}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "rpcrdma-gwctl: command or socket path too long\n");
		return 2;
	}
	if (interval)
		return gwctl_ops_interval(path, interval, count, json);
	if (top)
		snprintf(top_arg, sizeof(top_arg), " top=%u", top);
	if (by)
		snprintf(by_arg, sizeof(by_arg), " by=%s", by);
	n = snprintf(req, sizeof(req), "%s%s%s%s%s%s%s%s\n", json ? "json " : "", cmd,
		     argc - optind == 2 ? " " : "", argc - optind == 2 ? argv[optind + 1] : "",
		     ops ? " ops" : "", top_arg, by_arg, workers ? " workers" : "");
	if (n < 0 || (size_t)n >= sizeof(req)) {
		fprintf(stderr, "rpcrdma-gwctl: command or socket path too long\n");
		return 2;
	}
	if ((rc = gwctl_request(path, req, &buf, &have)) != 0)
		return rc;
	last = gwctl_status_line(buf, have, &body);
	/* status, stats, clients and backends answer JSON; the others text. */
	if (json && (!strcmp(cmd, "status") || !strcmp(cmd, "stats") ||
		     !strcmp(cmd, "clients") || !strcmp(cmd, "backends")) &&
	    !strcmp(last, ".") && (last == buf || !json_ok(buf, body - 1))) {
		fprintf(stderr, "rpcrdma-gwctl: the answer from %s is not valid JSON\n", path);
		free(buf);
		return 3;
	}
	rc = gwctl_finish(path, last, buf, body);
	if (rc == 0 && !strcmp(cmd, "status"))
		rc = gwctl_ready_rc(buf, body, json);
	free(buf);
	return rc;
}
