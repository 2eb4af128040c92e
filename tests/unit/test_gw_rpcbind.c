// SPDX-License-Identifier: MIT
/* Unit tests of the rpcbind lookup (gateway/rpcbind.c, gw_rpcbind_getport)
 * against a fake rpcbind on 127.0.0.1:111 in a network namespace of the
 * test's own: GETADDR version 3 (RFC 1833 section 2.2.1), a program not
 * registered, the portmapper's GETPORT (version 2, section 3) where
 * version 3 is refused, and nobody listening.  Many lookups in a row: under
 * SANITIZE=1, LeakSanitizer sees any per-lookup leak (libtirpc's
 * rpcb_getaddr() leaked one per call). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "rpcbind.h"

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

struct fake {
	int lfd;
	bool portmap_only;	/* refuses versions 3 and 4 (PROG_MISMATCH 2..2) */
	unsigned calls;
};

static bool read_full(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

/* One call record in, one reply out: GETADDR (version 3 or 4; libtirpc's
 * rpcb_getaddr() asks 4 first) of program 100003 answers
 * 127.0.0.1.8.1 (2049), of anything else ""; GETPORT of 100021 answers
 * 4045, of anything else 0. */
static bool fake_one(struct fake *f, int fd)
{
	uint8_t in[1024], out[128];
	uint32_t len, vers, proc, prog, n = 0;

	if (!read_full(fd, in, 4))
		return false;
	len = be32(in) & 0x7fffffffu;
	if (len < 48 || len > sizeof(in) || !read_full(fd, in, len))
		return false;
	f->calls++;
	vers = be32(in + 16);
	proc = be32(in + 20);
	prog = be32(in + 40);	/* AUTH_NONE cred and verifier: the args at 40 */
	put32(out + 4, be32(in));	/* xid */
	put32(out + 8, 1);		/* REPLY */
	put32(out + 12, 0);		/* MSG_ACCEPTED */
	put32(out + 16, 0);
	put32(out + 20, 0);		/* verifier AUTH_NONE, empty */
	n = 24;
	if ((vers == 3 || vers == 4) && f->portmap_only) {
		put32(out + n, 2);	/* PROG_MISMATCH */
		put32(out + n + 4, 2);
		put32(out + n + 8, 2);
		n += 12;
	} else if ((vers == 3 || vers == 4) && proc == 3) {	/* GETADDR, same in both */
		const char *ua = prog == 100003 ? "127.0.0.1.8.1" : "";
		uint32_t l = (uint32_t)strlen(ua);

		put32(out + n, 0);	/* SUCCESS */
		put32(out + n + 4, l);
		memset(out + n + 8, 0, (l + 3) & ~3u);
		memcpy(out + n + 8, ua, l);
		n += 8 + ((l + 3) & ~3u);
	} else if (vers == 2 && proc == 3) {
		put32(out + n, 0);
		put32(out + n + 4, prog == 100021 ? 4045 : 0);
		n += 8;
	} else {
		put32(out + n, 3);	/* PROC_UNAVAIL */
		n += 4;
	}
	put32(out, 0x80000000u | (n - 4));
	return write(fd, out, n) == (ssize_t)n;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	int fd;

	while ((fd = accept(f->lfd, NULL, NULL)) >= 0) {
		while (fake_one(f, fd))
			;
		close(fd);
	}
	return NULL;
}

/* A network namespace of our own with lo up, so 127.0.0.1:111 is ours. */
static bool own_loopback(void)
{
	struct ifreq ifr;
	int s;

	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0)
		return false;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return false;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return false;
	close(s);
	return true;
}

static int fake_listen(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(111),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 8) < 0) {
		perror("test_gw_rpcbind: fake rpcbind on 127.0.0.1:111");
		return -1;
	}
	return fd;
}

static struct fake fk;
static pthread_t fk_thr;
static bool fk_up;		/* own_loopback() and the fake rpcbind worked */

static void need_fake(void)
{
	if (!fk_up) {
		print_error("SKIPPED: needs root and a network namespace of its own (make check "
			    "runs as root): rpcbind lookups NOT tested\n");
		skip();
	}
}

/* One lookup of (prog, vers) on the fake: want its port, or 0 for "not
 * registered". */
static void lookup(uint32_t prog, uint32_t vers, uint16_t want)
{
	char msg[256] = "";
	uint16_t port = 0;

	assert_int_equal(gw_rpcbind_getport("127.0.0.1", AF_INET, prog, vers, &port, msg,
					    sizeof(msg)), want ? 0 : -1);
	if (want)
		assert_int_equal(port, want);
	else
		assert_non_null(strstr(msg, "not registered"));
}

/* 1. GETADDR: found, not registered; then a portmapper-only rpcbind:
 * GETPORT after version 3 is refused; 200 lookups in all. */
static void t01_lookups(void **state)
{
	(void)state;
	need_fake();
	for (int i = 0; i < 50; i++) {
		lookup(100003, 3, 2049);
		lookup(100005, 3, 0);
	}
	fk.portmap_only = true;
	for (int i = 0; i < 50; i++) {
		lookup(100021, 4, 4045);
		lookup(100005, 3, 0);
	}
	fk.portmap_only = false;
	assert_true(fk.calls >= 300);	/* 100 GETADDR, then 100 refused and 100 GETPORT */
}

/* 2. Nobody at 111 (in the namespace): -2, and the reason is the
 * connection's ("Connection refused"), not "no program ... (RPC: Remote
 * system error)". */
static void t02_nobody(void **state)
{
	char msg[256] = "";
	uint16_t port = 7;

	(void)state;
	need_fake();
	assert_int_equal(gw_rpcbind_getport("127.0.0.2", AF_INET, 100003, 3, &port, msg,
					    sizeof(msg)), -2);
	/* What rpcinfo says: rpcbind is missing, not the program. */
	assert_non_null(strstr(msg, "rpcbind on 127.0.0.2 port 111: Connection refused"));
	assert_null(strstr(msg, "no program"));
}

/* 3. A name that does not resolve (RFC 2606 .invalid): -2 with a reason;
 * runs everywhere, the namespace or not. */
static void t03_no_such_host(void **state)
{
	char msg[256] = "";
	uint16_t port = 7;

	(void)state;
	assert_int_equal(gw_rpcbind_getport("no-such-host.invalid", AF_INET, 100003, 3, &port, msg,
					    sizeof(msg)), -2);
	assert_non_null(strstr(msg, "no-such-host.invalid"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_lookups),
		cmocka_unit_test(t02_nobody),
		cmocka_unit_test(t03_no_such_host),
	};
	int rc;

	gw_rpcbind_init();
	fk.lfd = own_loopback() ? fake_listen() : -1;
	fk_up = fk.lfd >= 0 && pthread_create(&fk_thr, NULL, fake_main, &fk) == 0;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (fk_up) {
		shutdown(fk.lfd, SHUT_RDWR);
		close(fk.lfd);
		pthread_join(fk_thr, NULL);
	}
	return rc;
}
