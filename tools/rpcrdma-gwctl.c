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
 * answered badly (with --json: an answer that is not valid JSON).
 *
 * COMMAND and ARGUMENT must be one word each: a blank or control byte in
 * them would end the request line early or start another one.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <json.h>

#include "config.h"
#include "log.h"

#define GWCTL_TIMEOUT_MS	10000

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
		"  status              version, uptime, readiness, paths\n"
		"  stats               calls per procedure (nfsstat-like) and counters\n"
		"  clients             client connections\n"
		"  backends            backend paths, connections, credits\n"
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = CFG_DEFAULT_CONTROL;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char req[512], *buf, *last, *end;
	size_t cap = 1 << 16, have = 0;
	bool json = false;
	int opt, fd, n, rc = 3;

	while ((opt = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': path = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("rpcrdma-gwctl %s\n", GW_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc || argc - optind > 2) {	/* COMMAND [ARGUMENT] */
		usage(stderr);
		return 2;
	}
	for (int i = optind; i < argc; i++)
		if (!word_ok(argv[i])) {
			fprintf(stderr, "rpcrdma-gwctl: '%s': blanks and control characters are "
				"not allowed in a command or name\n", argv[i]);
			return 2;
		}
	n = snprintf(req, sizeof(req), "%s%s%s%s\n", json ? "json " : "", argv[optind],
		     argc - optind == 2 ? " " : "", argc - optind == 2 ? argv[optind + 1] : "");
	if (n < 0 || (size_t)n >= sizeof(req) || strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "rpcrdma-gwctl: command or socket path too long\n");
		return 2;
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		fprintf(stderr, "rpcrdma-gwctl: %s: %s (is rpcrdma-gw running, with control_socket?)\n",
			path, strerror(errno));
		return 3;
	}
	if (write(fd, req, (size_t)n) != n) {
		fprintf(stderr, "rpcrdma-gwctl: %s: write: %s\n", path, strerror(errno));
		return 3;
	}
	buf = malloc(cap);
	if (!buf)
		return 3;
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&pfd, 1, GWCTL_TIMEOUT_MS) <= 0) {
			fprintf(stderr, "rpcrdma-gwctl: %s: no answer\n", path);
			free(buf);
			return 3;
		}
		if (have + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return 3;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + have, cap - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "rpcrdma-gwctl: %s: read: %s\n", path, strerror(errno));
			free(buf);
			return 3;
		}
		if (r == 0)
			break;
		have += (size_t)r;
	}
	close(fd);
	buf[have] = '\0';
	/* The last line is the status. */
	end = buf + have;
	if (end > buf && end[-1] == '\n')
		*--end = '\0';
	last = strrchr(buf, '\n');
	last = last ? last + 1 : buf;
	/* status, stats, clients and backends answer JSON; the others text. */
	if (json && (!strcmp(argv[optind], "status") || !strcmp(argv[optind], "stats") ||
		     !strcmp(argv[optind], "clients") || !strcmp(argv[optind], "backends")) &&
	    !strcmp(last, ".") && (last == buf || !json_ok(buf, (size_t)(last - 1 - buf)))) {
		fprintf(stderr, "rpcrdma-gwctl: the answer from %s is not valid JSON\n", path);
		free(buf);
		return 3;
	}
	fwrite(buf, 1, (size_t)(last - buf), stdout);
	if (!strcmp(last, "."))
		rc = 0;
	else if (!strncmp(last, "!ERR ", 5)) {
		fprintf(stderr, "rpcrdma-gwctl: %s\n", last + 5);
		rc = 1;
	} else {
		fprintf(stderr, "rpcrdma-gwctl: truncated answer from %s\n", path);
	}
	free(buf);
	return rc;
}
