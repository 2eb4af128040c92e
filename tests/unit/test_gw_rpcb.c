// SPDX-License-Identifier: MIT
/* Unit tests for rpcbind_register (gateway/rpcb_reg.c): the plan of local
 * rpcbind registrations for a configuration and its listeners, and the
 * register/unregister bookkeeping against a fake rpcbind (conflicts, our
 * own stale entries, failures, nothing set twice, exactly ours unset),
 * and NSM's udp/udp6 entries for the UDP NSM sockets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "ops.h"
#include "rpcb_reg.h"

#define B "[backend s]\naddress = 10.99.0.1\n"
#define ON "[gateway]\nrpcbind_register = on\n"

static struct cfg *parse(const char *text)
{
	char err[256] = "";
	struct cfg *cf = cfg_parse_string(text, "t.conf", NULL, err, sizeof(err));

	if (!cf)
		fail_msg("parse: %s", err);
	return cf;
}

static struct sockaddr_storage sa(const char *ip, uint16_t port)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (strchr(ip, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		assert_int_equal(inet_pton(AF_INET6, ip, &s6->sin6_addr), 1);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		assert_int_equal(inet_pton(AF_INET, ip, &s4->sin_addr), 1);
	}
	return ss;
}

/* "prog/vers/netid/uaddr[/free]" of every entry, space separated. */
static void plan_str(const struct gw_rpcb_entry *e, unsigned n, char *out, size_t len)
{
	size_t o = 0;

	out[0] = 0;
	for (unsigned i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%u/%u/%s/%s%s", i ? " " : "", e[i].re_prog,
				      e[i].re_vers, e[i].re_netid, e[i].re_uaddr,
				      e[i].re_if_free ? "/free" : "");
}

static void t01_off_by_default(void **state)
{
	struct cfg *cf = parse(B);
	struct sockaddr_storage a = sa("127.0.0.1", 20495);
	struct gw_rpcb_entry e[GW_RPCB_MAX];

	(void)state;
	assert_false(cf->cf_rpcbind_register);
	assert_int_equal(gw_rpcb_plan(cf, &a, 1, e, GW_RPCB_MAX), 0);
	cfg_free(cf);
}

/* Default routes (nfs, mount, nlm, nsm, nfs_acl), one IPv4 listener. */
static void t02_default_routes(void **state)
{
	struct cfg *cf = parse(ON B);
	struct sockaddr_storage a = sa("127.0.0.1", 20495);	/* 20495 = 80 * 256 + 15 */
	struct gw_rpcb_entry e[GW_RPCB_MAX];
	char s[2048];
	unsigned n;

	(void)state;
	n = gw_rpcb_plan(cf, &a, 1, e, GW_RPCB_MAX);
	plan_str(e, n, s, sizeof(s));
	assert_string_equal(s, "100005/1/tcp/127.0.0.1.80.15 100005/2/tcp/127.0.0.1.80.15 "
			       "100005/3/tcp/127.0.0.1.80.15 100021/1/tcp/127.0.0.1.80.15 "
			       "100021/3/tcp/127.0.0.1.80.15 100021/4/tcp/127.0.0.1.80.15 "
			       "100024/1/tcp/127.0.0.1.80.15 100003/3/tcp/127.0.0.1.80.15/free "
			       "100003/4/tcp/127.0.0.1.80.15/free 100227/3/tcp/127.0.0.1.80.15/free");
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(e[i].re_port, 20495);
		assert_false(e[i].re_ours);
	}
	cfg_free(cf);
}

/* Only routed programs, only the versions their route serves; unknown
 * programs are never registered. */
static void t03_routes_and_versions(void **state)
{
	struct cfg *cf = parse(ON B "[route n]\nprogram = nfs\nversions = 4\n"
				    "[route l]\nprogram = nlm\nversions = 3-4\ntransport = tcp\nport = 4045\n"
				    "[route x]\nprogram = 400100\ntransport = tcp\nport = 900\n");
	struct sockaddr_storage a = sa("0.0.0.0", 2049);
	struct gw_rpcb_entry e[GW_RPCB_MAX];
	char s[1024];
	unsigned n;

	(void)state;
	n = gw_rpcb_plan(cf, &a, 1, e, GW_RPCB_MAX);
	plan_str(e, n, s, sizeof(s));
	assert_string_equal(s, "100021/3/tcp/0.0.0.0.8.1 100021/4/tcp/0.0.0.0.8.1 "
			       "100003/4/tcp/0.0.0.0.8.1/free");
	cfg_free(cf);
}

/* One mapping per (prog, vers, netid): the first listener of each family
 * wins; IPv6 listeners register tcp6; the output bound holds. */
static void t04_families_and_bound(void **state)
{
	struct cfg *cf = parse(ON B "[route l]\nprogram = nlm\ntransport = tcp\n");
	struct sockaddr_storage a[3] = { sa("127.0.0.1", 20495), sa("10.0.0.5", 20496),
					 sa("::1", 20497) };
	struct gw_rpcb_entry e[GW_RPCB_MAX];
	char s[1024];
	unsigned n;

	(void)state;
	n = gw_rpcb_plan(cf, a, 3, e, GW_RPCB_MAX);
	plan_str(e, n, s, sizeof(s));
	assert_string_equal(s, "100021/1/tcp/127.0.0.1.80.15 100021/3/tcp/127.0.0.1.80.15 "
			       "100021/4/tcp/127.0.0.1.80.15 100021/1/tcp6/::1.80.17 "
			       "100021/3/tcp6/::1.80.17 100021/4/tcp6/::1.80.17");
	assert_int_equal(e[3].re_port, 20497);
	assert_int_equal(gw_rpcb_plan(cf, a, 3, e, 4), 4);
	assert_int_equal(gw_rpcb_plan(cf, a, 0, e, GW_RPCB_MAX), 0);
	cfg_free(cf);
}

/* ---- a fake rpcbind ---- */
static struct {
	char calls[2048];	/* "set P/V/N" and "unset P/V/N" in order */
	uint32_t conflict_prog;	/* held by someone else */
	uint16_t conflict_port;
	uint32_t fail_prog;	/* rpcbind refuses */
	uint32_t gone_prog;	/* at unset: someone else's now */
} fk;

static void fk_log(const char *what, uint32_t prog, uint32_t vers, const char *netid)
{
	size_t o = strlen(fk.calls);

	snprintf(fk.calls + o, sizeof(fk.calls) - o, "%s%s %u/%u/%s", o ? " " : "", what, prog, vers,
		 netid);
}

static int fk_set(uint32_t prog, uint32_t vers, const char *netid, const char *uaddr,
		  uint16_t *holder, char *msg, size_t msglen)
{
	(void)uaddr;
	fk_log("set", prog, vers, netid);
	if (prog == fk.conflict_prog || prog == CFG_PROG_NFS) {
		*holder = prog == CFG_PROG_NFS ? 2049 : fk.conflict_port;
		return 1;
	}
	if (prog == fk.fail_prog) {
		snprintf(msg, msglen, "RPC: Remote system error");
		return -1;
	}
	return 0;
}

static int fk_unset(uint32_t prog, uint32_t vers, const char *netid, uint16_t port, char *msg,
		    size_t msglen)
{
	(void)port;
	fk_log("unset", prog, vers, netid);
	if (prog == fk.gone_prog) {
		snprintf(msg, msglen, "no longer maps to port %u", port);
		return 1;
	}
	return 0;
}

static const struct gw_rpcb_ops fk_ops = { .ro_set = fk_set, .ro_unset = fk_unset };

static void t05_register_unregister(void **state)
{
	struct cfg *cf = parse(ON B "[route n]\nprogram = nfs\nversions = 3\n"
				    "[route m]\nprogram = mount\nversions = 3\ntransport = tcp\n"
				    "[route l]\nprogram = nlm\nversions = 4\ntransport = tcp\n"
				    "[route s]\nprogram = nsm\ntransport = tcp\n");
	struct sockaddr_storage a = sa("127.0.0.1", 20495);
	struct gw_log lg = { .gl_level = -1 };
	struct gw_stats st;
	struct gw_rpcb_reg rr = { .rgr_ops = &fk_ops };

	(void)state;
	memset(&st, 0, sizeof(st));
	memset(&fk, 0, sizeof(fk));
	fk.conflict_prog = CFG_PROG_NSM;	/* rpc.statd */
	fk.conflict_port = 662;
	fk.fail_prog = CFG_PROG_MOUNT;
	rr.rgr_n = gw_rpcb_plan(cf, &a, 1, rr.rgr_e, GW_RPCB_MAX);
	assert_int_equal(rr.rgr_n, 4);
	assert_int_equal(gw_rpcb_register(&rr, &lg, &st), 1);	/* NLM 4 only */
	assert_string_equal(fk.calls, "set 100005/3/tcp set 100021/4/tcp set 100024/1/tcp "
				      "set 100003/3/tcp");
	assert_int_equal(st.gs_ctr[GW_CTR_RPCB_REGISTERED], 1);
	assert_int_equal(st.gs_ctr[GW_CTR_RPCB_CONFLICT], 1);	/* NSM; NFS is expected */
	assert_int_equal(st.gs_ctr[GW_CTR_RPCB_FAILED], 1);	/* MOUNT */

	/* Again: what is ours is not set twice; the others are retried. */
	fk.calls[0] = 0;
	assert_int_equal(gw_rpcb_register(&rr, &lg, &st), 1);
	assert_null(strstr(fk.calls, "100021"));
	assert_int_equal(st.gs_ctr[GW_CTR_RPCB_REGISTERED], 1);

	fk.calls[0] = 0;
	gw_rpcb_unregister(&rr, &lg, &st);
	assert_string_equal(fk.calls, "unset 100021/4/tcp");
	assert_int_equal(st.gs_ctr[GW_CTR_RPCB_UNREGISTERED], 1);
	fk.calls[0] = 0;
	gw_rpcb_unregister(&rr, &lg, &st);	/* idempotent */
	assert_string_equal(fk.calls, "");
	cfg_free(cf);
}

/* Our own entry from a gateway that was killed: taken over (counted as
 * registered, unset at exit); an entry someone else took meanwhile is
 * left alone at exit and not counted as unregistered. */
static void t06_stale_and_gone(void **state)
{
	struct cfg *cf = parse(ON B "[route l]\nprogram = nlm\nversions = 4\ntransport = tcp\n"
				    "[route s]\nprogram = nsm\ntransport = tcp\n");
	struct sockaddr_storage a = sa("127.0.0.1", 20495);
	struct gw_log lg = { .gl_level = -1 };
	struct gw_stats st;
	struct gw_rpcb_reg rr = { .rgr_ops = &fk_ops };

	(void)state;
	memset(&st, 0, sizeof(st));
	memset(&fk, 0, sizeof(fk));
	fk.conflict_prog = CFG_PROG_NLM;
	fk.conflict_port = 20495;	/* ours */
	fk.gone_prog = CFG_PROG_NSM;
	rr.rgr_n = gw_rpcb_plan(cf, &a, 1, rr.rgr_e, GW_RPCB_MAX);
	assert_int_equal(gw_rpcb_register(&rr, &lg, &st), 2);
	assert_int_equal(st.gs_ctr[GW_CTR_RPCB_REGISTERED], 2);
	assert_int_equal(st.gs_ctr[GW_CTR_RPCB_CONFLICT], 0);
	fk.calls[0] = 0;
	gw_rpcb_unregister(&rr, &lg, &st);
	assert_string_equal(fk.calls, "unset 100021/4/tcp unset 100024/1/tcp");
	assert_int_equal(st.gs_ctr[GW_CTR_RPCB_UNREGISTERED], 1);
	assert_int_equal(st.gs_ctr[GW_CTR_RPCB_FAILED], 0);
	cfg_free(cf);
}

/* The key: on/off values, a bad value is a file:line error, and a change
 * is structural on reload (registered once at start, never redone). */
static void t07_config_key(void **state)
{
	char err[256] = "";
	struct cfg_diff d;
	struct cfg *on = parse(ON B), *off = parse("[gateway]\nrpcbind_register = off\n" B);
	struct cfg *on2 = parse("[gateway]\nrpcbind_register = yes\nlog_level = debug\n" B);
	struct cfg *bad;

	(void)state;
	assert_true(on->cf_rpcbind_register);
	assert_false(off->cf_rpcbind_register);
	cfg_diff(on, off, &d);
	assert_int_equal(d.cdf_nrestart, 1);
	assert_int_equal(d.cdf_act[d.cdf_n - 1].ac_kind, CFG_ACT_RESTART);
	assert_string_equal(d.cdf_act[d.cdf_n - 1].ac_what, "rpcbind_register");
	cfg_diff(on, on2, &d);
	assert_int_equal(d.cdf_nrestart, 0);
	assert_int_equal(d.cdf_nchanges, 0);
	bad = cfg_parse_string("[gateway]\nrpcbind_register = maybe\n" B, "t.conf", NULL, err,
			       sizeof(err));
	assert_null(bad);
	assert_non_null(strstr(err, "t.conf:2: rpcbind_register: invalid value 'maybe'"));
	cfg_free(on);
	cfg_free(off);
	cfg_free(on2);
}

/* stats names the NLM/NSM procedures t_68 counts (shared numbering v1/3/4). */
static void t08_proc_names(void **state)
{
	(void)state;
	assert_string_equal(gw_proc_name(CFG_PROG_NLM, 4, 1), "test");
	assert_string_equal(gw_proc_name(CFG_PROG_NLM, 4, 2), "lock");
	assert_string_equal(gw_proc_name(CFG_PROG_NLM, 1, 4), "unlock");
	assert_string_equal(gw_proc_name(CFG_PROG_NLM, 3, 23), "free_all");
	assert_null(gw_proc_name(CFG_PROG_NLM, 4, 17));
	assert_null(gw_proc_name(CFG_PROG_NLM, 4, 24));
	assert_null(gw_proc_name(CFG_PROG_NLM, 1, 20));	/* SHARE is v3+ */
	assert_string_equal(gw_proc_name(CFG_PROG_NSM, 1, 2), "mon");
	assert_string_equal(gw_prog_name(CFG_PROG_NLM), "nlockmgr");
}

/* NSM over udp/udp6 for the UDP NSM sockets, after the TCP plan: the first
 * socket of each family, never twice, the bound held; nothing when
 * rpcbind_register is off, NSM is not routed or no socket is open. */
static void t09_nsm_udp(void **state)
{
	struct cfg *cf = parse(ON B), *off = parse(B);
	struct cfg *nonsm = parse(ON B "[route l]\nprogram = nlm\ntransport = tcp\n");
	struct sockaddr_storage a[3] = { sa("127.0.0.1", 20495), sa("10.0.0.5", 20496),
					 sa("::1", 20497) };
	struct gw_rpcb_entry e[GW_RPCB_MAX];
	char s[2048];
	unsigned n, m;

	(void)state;
	n = gw_rpcb_plan(cf, a, 1, e, GW_RPCB_MAX);
	assert_int_equal(n, 10);
	m = gw_rpcb_plan_nsm_udp(cf, a, 3, e, n, GW_RPCB_MAX);
	assert_int_equal(m, 12);
	plan_str(e + n, m - n, s, sizeof(s));
	assert_string_equal(s, "100024/1/udp/127.0.0.1.80.15 100024/1/udp6/::1.80.17");
	assert_int_equal(e[n].re_port, 20495);
	assert_int_equal(e[n + 1].re_port, 20497);
	assert_false(e[n].re_if_free || e[n].re_ours);
	assert_int_equal(gw_rpcb_plan_nsm_udp(cf, a, 3, e, m, GW_RPCB_MAX), m);	/* never twice */
	assert_int_equal(gw_rpcb_plan_nsm_udp(cf, a, 3, e, n, n + 1), n + 1);	/* the bound */
	assert_int_equal(gw_rpcb_plan_nsm_udp(cf, a, 3, e, n, n), n);
	assert_int_equal(gw_rpcb_plan_nsm_udp(cf, a, 0, e, n, GW_RPCB_MAX), n);	/* no socket */
	assert_int_equal(gw_rpcb_plan_nsm_udp(off, a, 3, e, 0, GW_RPCB_MAX), 0);
	n = gw_rpcb_plan(nonsm, a, 1, e, GW_RPCB_MAX);
	assert_int_equal(gw_rpcb_plan_nsm_udp(nonsm, a, 3, e, n, GW_RPCB_MAX), n);
	cfg_free(nonsm);
	cfg_free(off);
	cfg_free(cf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_off_by_default),
		cmocka_unit_test(t02_default_routes),
		cmocka_unit_test(t03_routes_and_versions),
		cmocka_unit_test(t04_families_and_bound),
		cmocka_unit_test(t05_register_unregister),
		cmocka_unit_test(t06_stale_and_gone),
		cmocka_unit_test(t07_config_key),
		cmocka_unit_test(t08_proc_names),
		cmocka_unit_test(t09_nsm_udp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
