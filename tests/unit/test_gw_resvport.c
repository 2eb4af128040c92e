// SPDX-License-Identifier: MIT
/* Unit tests for the TCP transport's source ports (gw_rpcbind_bindresv,
 * gateway/rpcbind.c): two connections from this host to one server port
 * each get a reserved port of their own and both connect. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "rpcbind.h"

static int listener(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)sa, sizeof(*sa)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)sa, &len), 0);
	return fd;
}

/* 1. Two sockets to one listener: distinct reserved ports, both connect
 * (with one shared port under SO_REUSEADDR the second connect() fails with
 * EADDRNOTAVAIL: the bug of the TCP transport's old fixed port 1023). */
static void t01_two_paths_one_server(void **state)
{
	struct sockaddr_in srv;
	int lfd = listener(&srv), s[2], port[2];

	(void)state;
	if (geteuid() != 0)
		skip();		/* reserved ports need root (check.sh says SKIPPED loudly) */
	for (int i = 0; i < 2; i++) {
		s[i] = socket(AF_INET, SOCK_STREAM, 0);
		assert_true(s[i] >= 0);
		port[i] = gw_rpcbind_bindresv(s[i]);
		assert_true(port[i] > 0 && port[i] < 1024);
		assert_int_equal(connect(s[i], (struct sockaddr *)&srv, sizeof(srv)), 0);
	}
	assert_int_not_equal(port[0], port[1]);
	for (int i = 0; i < 2; i++)
		close(s[i]);
	close(lfd);
}

/* 2. A socket already bound is refused, not silently rebound. */
static void t02_bound_refused(void **state)
{
	struct sockaddr_in sa;
	int lfd = listener(&sa), s = socket(AF_INET, SOCK_STREAM, 0);

	(void)state;
	sa.sin_port = 0;
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_true(gw_rpcbind_bindresv(s) < 0);
	close(s);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_two_paths_one_server),
		cmocka_unit_test(t02_bound_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
