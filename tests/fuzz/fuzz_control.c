// SPDX-License-Identifier: MIT
/*
 * This file contains the libFuzzer target of the control socket
 * (gateway/control.c): the request of an rpcrdma-gwctl client, against the
 * in-process gateway of fuzz_gw.h (one backend, every route on the fake
 * transport; reload and log-level hooks that only count).
 *
 * Input: byte 0 bit 0 picks the way in - the command line straight to
 * gw_ctl_exec(), or the bytes over a real connection to the control socket
 * (the request reader: line limit, a line in pieces, the peer closing);
 * bits 1-3 the largest write (1 << n bytes); the rest is the request.
 *
 * Checks: an answer is lines ending with "." (done) or "!ERR reason"; a
 * "json" command that succeeds answers one line of valid JSON; over the
 * socket, a request whose newline comes within the line limit is answered.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <json.h>

#include "fuzz_gw.h"
#include "ops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MAX_LINE	512	/* control.c's GW_CTL_MAX_LINE */

static const char fz_conf[] =
	"[gateway]\nbuffer_size = 4k\nbuffers = 128\nmax_record = 32k\nmax_calls = 16\n"
	"admin_listen =\ncontrol_socket =\n"
	"[backend srv]\naddress = 127.0.0.1\n"
	"[route nfs]\nprogram = nfs\ntransport = rdma\n"
	"[route mount]\nprogram = mount\ntransport = rdma\n"
	"[route nlm]\nprogram = nlm\ntransport = rdma\n"
	"[route nsm]\nprogram = nsm\ntransport = rdma\n"
	"[route nfs_acl]\nprogram = nfs_acl\ntransport = rdma\n";

struct fz_env {
	struct fg_gw fze_h;
	struct gw_ctl *fze_ctl;
	char fze_path[108];
	unsigned fze_reloads, fze_levels;
};

static int fz_reload(void *arg, char *msg, size_t len)
{
	struct fz_env *e = arg;

	/* Every other reload fails, as a bad file would. */
	if (++e->fze_reloads % 2) {
		snprintf(msg, len, "fuzz: reload refused");
		return -EINVAL;
	}
	return 0;
}

static void fz_log_level(void *arg, int level)
{
	struct fz_env *e = arg;

	FG_CHECK(level >= CFG_LOG_ERR && level <= CFG_LOG_DEBUG);
	e->fze_levels++;
}

static const char *fz_config_path(void *arg)
{
	(void)arg;
	return "fuzz.conf";
}

/* One gateway and control socket per process (libFuzzer calls in). */
static struct fz_env fz_the_env;
static bool fz_started;

static void fz_cleanup(void)
{
	unlink(fz_the_env.fze_path);
}

static struct fz_env *fz_env(void)
{
	struct fz_env *e = &fz_the_env;
	struct gw_ctl_hooks hooks = { .ch_reload = fz_reload, .ch_log_level = fz_log_level,
				      .ch_config_path = fz_config_path, .ch_arg = e };

	if (fz_started)
		return e;
	fg_start(&e->fze_h, fz_conf);
	snprintf(e->fze_path, sizeof(e->fze_path), "/tmp/fuzz_control.%d.sock", (int)getpid());
	e->fze_ctl = gw_ctl_new(e->fze_h.fg_base, e->fze_h.fg_gw, e->fze_path, &hooks);
	FG_CHECK(e->fze_ctl != NULL);
	fz_started = true;
	atexit(fz_cleanup);
	return e;
}

/* The answer's shape; json: the request asked for JSON. */
static void fz_check_answer(const char *req, const char *out, size_t n)
{
	const char *last, *nl;
	char cmd[16] = "";
	bool json = false;

	FG_CHECK(n > 0 && out[n - 1] == '\n' && !memchr(out, '\0', n));
	for (last = out + n - 1; last > out && last[-1] != '\n'; last--)
		;
	if (!strcmp(last, ".\n")) {
		/* Done.  "json status|stats|clients|backends": one JSON line. */
		json = sscanf(req, " json %15s", cmd) == 1;
		if (json && (!strcmp(cmd, "status") || !strcmp(cmd, "stats") ||
			     !strcmp(cmd, "clients") || !strcmp(cmd, "backends"))) {
			struct json_object *o;
			char *line;

			nl = strchr(out, '\n');
			FG_CHECK(nl + 1 == last);
			line = strndup(out, (size_t)(nl - out));
			FG_CHECK(line != NULL);
			o = json_tokener_parse(line);
			FG_CHECK(o != NULL && json_object_is_type(o, json_type_object));
			json_object_put(o);
			free(line);
		}
	} else {
		FG_CHECK(!strncmp(last, "!ERR ", 5) && last[5] != '\n');
	}
}

static void fz_direct(struct fz_env *e, const uint8_t *data, size_t size)
{
	struct evbuffer *o = evbuffer_new();
	char *line = strndup((const char *)data, size);	/* a NUL ends the line */
	size_t n;

	FG_CHECK(o && line);
	gw_ctl_exec(e->fze_ctl, line, o);
	n = evbuffer_get_length(o);
	evbuffer_add(o, "", 1);
	fz_check_answer(line, (const char *)evbuffer_pullup(o, -1), n);
	evbuffer_free(o);
	free(line);
}

static void fz_socket(struct fz_env *e, const uint8_t *data, size_t size, unsigned maxw)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	static char out[256 * 1024];
	const uint8_t *lf = memchr(data, '\n', size);
	size_t off = 0, have = 0;
	bool eof = false;
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", e->fze_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	FG_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	for (unsigned turn = 0; !eof && turn < 10000; turn++) {
		ssize_t r;

		if (off < size) {
			size_t want = size - off < maxw ? size - off : maxw;

			r = send(fd, data + off, want, MSG_NOSIGNAL);
			if (r > 0)
				off += (size_t)r;
			else if (errno != EAGAIN)
				off = size;	/* the server closed on us */
			if (off == size)
				shutdown(fd, SHUT_WR);
		} else if (turn == 0) {
			shutdown(fd, SHUT_WR);	/* nothing to send */
		}
		event_base_loop(e->fze_h.fg_base, EVLOOP_NONBLOCK);
		r = read(fd, out + have, sizeof(out) - 1 - have);
		if (r > 0)
			have += (size_t)r;
		else if (r == 0 || errno != EAGAIN)
			eof = true;
		FG_CHECK(have < sizeof(out) - 1);
	}
	FG_CHECK(eof);
	close(fd);
	out[have] = '\0';
	if (lf && lf - data <= FZ_MAX_LINE)
		FG_CHECK(have > 0);
	if (have) {
		char *line = strndup((const char *)data, lf ? (size_t)(lf - data) : size);

		FG_CHECK(lf != NULL && line != NULL);	/* an answer needs a whole line */
		fz_check_answer(line, out, have);
		free(line);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_env *e = fz_env();

	if (size < 1 || size > 4096)
		return 0;
	if (data[0] & 1)
		fz_socket(e, data + 1, size - 1, 1u << ((data[0] >> 1) & 7));
	else
		fz_direct(e, data + 1, size - 1);
	return 0;
}
