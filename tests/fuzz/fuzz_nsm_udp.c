// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the UDP NSM listener's datagram path (nsm_udp.c
 * gw_nu_datagram) on the in-process gateway of fuzz_gw.h (NLM and NSM
 * routed), with the listener's admission (allow, deny, secure_port of the
 * configuration, frontend-tcp's rules as main.c wires them): the first
 * byte picks the sender (bit 0: the backend's address 127.0.0.1, else a
 * client 127.0.0.2-9, of which 127.0.0.9 is denied; bit 6: an unreserved
 * source port; bit 7: a datagram the kernel cut short), the rest is the
 * datagram.  Checks: no crash, leak or unbounded state; a reply fits its
 * buffer and echoes the XID; a refused sender gets no reply.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "fe_admit.h"
#include "fuzz_gw.h"
#include "nsm_udp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fz_conf[] =
	"[gateway]\nbuffer_size = 4k\nbuffers = 64\nmax_record = 32k\nmax_calls = 16\n"
	"admin_listen =\ncontrol_socket =\ndeny = 127.0.0.9\nsecure_port = no\n"
	"[backend srv]\naddress = 127.0.0.1\n"
	"[route nlm]\nprogram = nlm\ntransport = rdma\n"
	"[route nsm]\nprogram = nsm\ntransport = rdma\n";

static struct fg_gw fz_h;
static struct gw_nu *fz_nu;

static const char *fz_admit(void *arg, unsigned li, const struct sockaddr *sa, socklen_t salen)
{
	(void)arg;
	(void)salen;
	return fe_adm_datagram(fz_h.fg_cf, li, sa);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	uint8_t out[128];
	size_t n, real;
	bool refused;

	if (!fz_nu) {
		struct gw_nu_params np;

		fg_start(&fz_h, fz_conf);
		np = (struct gw_nu_params){ .np_gw = fz_h.fg_gw, .np_st = &fz_h.fg_st,
					    .np_lg = &fz_h.fg_log, .np_admit = fz_admit };
		fz_nu = gw_nu_new(&np);
		FG_CHECK(fz_nu);
	}
	if (size < 1)
		return 0;
	sa.sin_addr.s_addr = htonl(data[0] & 1 ? 0x7f000001 : 0x7f000002 + (data[0] >> 1) % 8);
	sa.sin_port = htons(data[0] & 0x40 ? 40000 : 801);
	refused = !(data[0] & 1) && (data[0] >> 1) % 8 == 7;
	n = size - 1 > GW_NU_DGRAM_MAX ? GW_NU_DGRAM_MAX : size - 1;
	real = data[0] & 0x80 ? size - 1 + GW_NU_DGRAM_MAX : size - 1;
	n = gw_nu_datagram(fz_nu, 0, data + 1, n, real, (struct sockaddr *)&sa, sizeof(sa), out,
			   sizeof(out));
	FG_CHECK(n <= sizeof(out));
	FG_CHECK(!refused || n == 0);
	if (n)
		FG_CHECK(n >= 20 && size >= 5 && memcmp(out, data + 1, 4) == 0);
	event_base_loop(fz_h.fg_base, EVLOOP_NONBLOCK);
	return 0;
}
