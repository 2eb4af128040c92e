// SPDX-License-Identifier: MIT
/* Unit tests of the NFSv4.0 callback relay's pure pieces (gateway/cb40.c):
 * the SETCLIENTID decoder (whole, split, truncated, not a SETCLIENTID),
 * the cb_location rewrite (longer and shorter addresses, the rest of the
 * record kept, no room), RFC 5665 universal addresses both ways, and the
 * SETCLIENTID reply's clientid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "cb40.h"
#include "cb_enc.h"
#include "chunking.h"
#include "pool.h"

static void put_str(struct cbe_buf *w, const char *s)
{
	size_t n = strlen(s);

	cbe_32(w, (uint32_t)n);
	memcpy(w->b + w->n, s, n);
	memset(w->b + w->n + n, 0, (4 - (n & 3)) & 3);
	w->n += (n + 3) & ~(size_t)3;
}

/* COMPOUND minor 0 { SETCLIENTID, then a RENEW when tail } */
static void sci(struct cbe_buf *w, uint32_t minor, uint32_t op, const char *netid,
		const char *addr, bool tail)
{
	cbe_call(w, 0x51, CBE_NFS, 4, 1);
	put_str(w, "tag");
	cbe_32(w, minor), cbe_32(w, tail ? 2 : 1), cbe_32(w, op);
	cbe_32(w, 0x01020304), cbe_32(w, 0x05060708);	/* verifier */
	put_str(w, "Linux NFSv4.0 client-7/10.0.0.7");
	cbe_32(w, 0x40000000);
	put_str(w, netid);
	put_str(w, addr);
	cbe_32(w, 7);					/* callback_ident */
	if (tail)
		cbe_32(w, 30), cbe_32(w, 0xaabbccdd), cbe_32(w, 0x11223344);
}

static void t01_parse(void **state)
{
	struct gw_cb40_sci s, s2;
	struct cbe_buf w;
	struct iovec v;

	(void)state;
	/* 1.1 the fields and where they are */
	sci(&w, 0, CHK_OP_SETCLIENTID, "tcp", "127.0.0.1.141.5", false);
	v = cbe_io(&w);
	assert_true(gw_cb40_parse_setclientid(&v, 1, &s));
	assert_int_equal(s.sc4_prog, 0x40000000);
	assert_int_equal(s.sc4_ident, 7);
	assert_string_equal(s.sc4_netid, "tcp");
	assert_string_equal(s.sc4_addr, "127.0.0.1.141.5");
	assert_int_equal(chk_be32(w.b + s.sc4_prog_pos), 0x40000000);
	assert_int_equal(s.sc4_loc_pos, s.sc4_prog_pos + 4);
	assert_int_equal(s.sc4_loc_end, w.n - 4);
	/* 1.2 split in odd pieces: the same */
	{
		struct iovec p[3] = { { w.b, 7 }, { w.b + 7, 61 }, { w.b + 68, w.n - 68 } };

		assert_true(gw_cb40_parse_setclientid(p, 3, &s2));
		assert_memory_equal(&s, &s2, sizeof(s));
	}
	/* 1.3 truncated before callback_ident */
	v = (struct iovec){ w.b, w.n - 2 };
	assert_false(gw_cb40_parse_setclientid(&v, 1, &s));
	/* 1.4 minor version 1, or another first operation */
	sci(&w, 1, CHK_OP_SETCLIENTID, "tcp", "127.0.0.1.141.5", false);
	v = cbe_io(&w);
	assert_false(gw_cb40_parse_setclientid(&v, 1, &s));
	sci(&w, 0, CHK_OP_SETCLIENTID_CONFIRM, "tcp", "127.0.0.1.141.5", false);
	v = cbe_io(&w);
	assert_false(gw_cb40_parse_setclientid(&v, 1, &s));
	/* 1.5 an address longer than any uaddr, a NUL inside the netid */
	sci(&w, 0, CHK_OP_SETCLIENTID, "tcp",
	    "1111:2222:3333:4444:5555:6666:7777:8888.1.2.xxxxxxxxxxxxxxxxxxxxxxxxxxx", false);
	v = cbe_io(&w);
	assert_false(gw_cb40_parse_setclientid(&v, 1, &s));
	sci(&w, 0, CHK_OP_SETCLIENTID, "tc", "127.0.0.1.141.5", false);
	w.b[w.n - 4 - 20 - 4] = 0;	/* "tc" -> "\0c" */
	v = cbe_io(&w);
	assert_false(gw_cb40_parse_setclientid(&v, 1, &s));
}

static void rewrite_case(const char *from, const char *netid, const char *to)
{
	uint8_t out[512];
	struct gw_cb40_sci s, r;
	struct cbe_buf w;
	struct gw_rec rec;
	struct iovec v;
	size_t n, tail;

	sci(&w, 0, CHK_OP_SETCLIENTID, "tcp", from, true);
	memset(&rec, 0, sizeof(rec));
	rec.rcd_niov = 2;
	rec.rcd_len = w.n;
	rec.rcd_iov[0] = (struct iovec){ w.b, 50 };
	rec.rcd_iov[1] = (struct iovec){ w.b + 50, w.n - 50 };
	assert_true(gw_cb40_parse_setclientid(rec.rcd_iov, 2, &s));
	n = gw_cb40_rewrite(&rec, &s, 0x48000123, netid, to, out, sizeof(out));
	assert_int_not_equal(n, 0);
	v = (struct iovec){ out, n };
	assert_true(gw_cb40_parse_setclientid(&v, 1, &r));
	assert_int_equal(r.sc4_prog, 0x48000123);
	assert_string_equal(r.sc4_netid, netid);
	assert_string_equal(r.sc4_addr, to);
	assert_int_equal(r.sc4_ident, 7);
	assert_int_equal(r.sc4_idhash, s.sc4_idhash);
	/* everything before cb_program and after r_addr as it was */
	assert_memory_equal(out, w.b, s.sc4_prog_pos);
	tail = w.n - s.sc4_loc_end;
	assert_int_equal(n, r.sc4_loc_end + tail);
	assert_memory_equal(out + r.sc4_loc_end, w.b + s.sc4_loc_end, tail);
	/* no room: 0 */
	assert_int_equal(gw_cb40_rewrite(&rec, &s, 1, netid, to, out, n - 1), 0);
	assert_int_equal(gw_cb40_rewrite(&rec, &s, 1, netid, to, out, s.sc4_loc_pos - 1), 0);
}

static void t02_rewrite(void **state)
{
	(void)state;
	rewrite_case("127.0.0.1.141.5", "tcp", "192.168.100.200.200.17");	/* longer */
	rewrite_case("192.168.100.200.200.17", "tcp", "10.0.0.1.1.1");	/* shorter */
	rewrite_case("10.0.0.1.1.1", "tcp6", "fd00::1.4.0");
	rewrite_case("10.0.0.1.1.1", "", "");			/* off: cleared */
}

static void t03_uaddr(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	char netid[GW_CB40_NETID_MAX], uaddr[GW_CB40_UADDR_MAX];
	socklen_t sl;

	(void)state;
	/* 3.1 IPv4: port = p1 * 256 + p2 */
	assert_true(gw_cb40_uaddr_parse("tcp", "127.0.0.1.141.5", &ss, &sl));
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohs(sin->sin_port), 141 * 256 + 5);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0x7f000001);
	assert_int_equal(sl, sizeof(*sin));
	assert_true(gw_cb40_uaddr_fmt((struct sockaddr *)&ss, netid, uaddr));
	assert_string_equal(netid, "tcp");
	assert_string_equal(uaddr, "127.0.0.1.141.5");
	/* 3.2 IPv6 */
	assert_true(gw_cb40_uaddr_parse("tcp6", "fe80::1:2.0.111", &ss, &sl));
	assert_int_equal(sin6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(sin6->sin6_port), 111);
	assert_true(gw_cb40_uaddr_fmt((struct sockaddr *)&ss, netid, uaddr));
	assert_string_equal(netid, "tcp6");
	assert_string_equal(uaddr, "fe80::1:2.0.111");
	/* 3.3 refused: port octet > 255, no port, wrong family, other netid, junk */
	assert_false(gw_cb40_uaddr_parse("tcp", "127.0.0.1.256.1", &ss, &sl));
	assert_false(gw_cb40_uaddr_parse("tcp", "127.0.0.1", &ss, &sl));
	assert_false(gw_cb40_uaddr_parse("tcp", "::1.0.111", &ss, &sl));
	assert_false(gw_cb40_uaddr_parse("tcp6", "127.0.0.1.1.1", &ss, &sl));
	assert_false(gw_cb40_uaddr_parse("udp", "127.0.0.1.1.1", &ss, &sl));
	assert_false(gw_cb40_uaddr_parse("tcp", "", &ss, &sl));
	assert_false(gw_cb40_uaddr_parse("tcp", "127.0.0.1.1.1x", &ss, &sl));
	assert_false(gw_cb40_uaddr_parse("tcp", ".1.1", &ss, &sl));
}

static void t04_reply(void **state)
{
	struct cbe_buf w;
	struct iovec v;
	uint64_t id = 0;

	(void)state;
	cbe_reply_ok(&w, 0x51);
	cbe_32(&w, 0), cbe_32(&w, 0), cbe_32(&w, 1), cbe_32(&w, CHK_OP_SETCLIENTID), cbe_32(&w, 0);
	cbe_32(&w, 0x11223344), cbe_32(&w, 0x55667788), cbe_32(&w, 1), cbe_32(&w, 2);
	v = cbe_io(&w);
	assert_true(gw_cb40_parse_reply(&v, 1, &id));
	assert_true(id == 0x1122334455667788ull);
	/* NFS4ERR_CLID_INUSE (10017): no clientid */
	cbe_reply_ok(&w, 0x51);
	cbe_32(&w, 10017), cbe_32(&w, 0), cbe_32(&w, 1), cbe_32(&w, CHK_OP_SETCLIENTID);
	cbe_32(&w, 10017);
	v = cbe_io(&w);
	assert_false(gw_cb40_parse_reply(&v, 1, &id));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_parse),
		cmocka_unit_test(t02_rewrite),
		cmocka_unit_test(t03_uaddr),
		cmocka_unit_test(t04_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
