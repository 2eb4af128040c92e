// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the PROXY protocol v2 decoder
 * (frontend-tcp/fe_admit.c: fe_adm_pp_need, fe_adm_pp_decode), the first
 * bytes of every connection when proxy_protocol = yes.  Invariants:
 *  - need is -1 or 16..16 + 65535; every prefix of the input agrees (16
 *    while the fixed part is incomplete, -1 only if the whole input is -1);
 *  - decode succeeds only on a whole valid header (the bytes fe_proxy.c
 *    keeps: at most the fixed part and the address block), and then gives
 *    AF_UNSPEC, or AF_INET/AF_INET6 with the address and port bytes of the
 *    header and the length of their sockaddr;
 *  - decode of the kept bytes and of the whole header agree.
 */
#include <stdint.h>
#include <string.h>
#include <netinet/in.h>

#include "fe_admit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage a, b;
	socklen_t alen, blen;
	long need = fe_adm_pp_need(data, size);
	size_t keep;
	bool ok;

	if (need != -1 && (need < FE_PP_FIXED || need > FE_PP_FIXED + 65535))
		__builtin_trap();
	for (size_t n = 0; n < size && n <= FE_PP_FIXED; n++) {
		long p = fe_adm_pp_need(data, n);

		if (need >= 0 && p != FE_PP_FIXED && p != need)
			__builtin_trap();
	}
	if (need < 0 || size < (size_t)need) {
		if (size < FE_PP_FIXED && fe_adm_pp_decode(data, size, &a, &alen))
			__builtin_trap();
		return 0;
	}
	keep = (size_t)need < FE_PP_FIXED + FE_PP_ADDR_MAX ? (size_t)need : FE_PP_FIXED + FE_PP_ADDR_MAX;
	ok = fe_adm_pp_decode(data, keep, &a, &alen);
	if (ok != fe_adm_pp_decode(data, (size_t)need, &b, &blen))
		__builtin_trap();
	if (!ok)
		return 0;
	if (alen != blen || memcmp(&a, &b, sizeof(a)))
		__builtin_trap();
	switch (a.ss_family) {
	case AF_UNSPEC:
		if (alen != 0)
			__builtin_trap();
		break;
	case AF_INET: {
		const struct sockaddr_in *s = (const struct sockaddr_in *)&a;

		if (alen != sizeof(*s) || data[13] != 0x11 || need < FE_PP_FIXED + 12 ||
		    memcmp(&s->sin_addr, data + 16, 4) || memcmp(&s->sin_port, data + 24, 2))
			__builtin_trap();
		break;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)&a;

		if (alen != sizeof(*s) || data[13] != 0x21 || need < FE_PP_FIXED + 36 ||
		    memcmp(&s->sin6_addr, data + 16, 16) || memcmp(&s->sin6_port, data + 48, 2))
			__builtin_trap();
		break;
	}
	default:
		__builtin_trap();
	}
	return 0;
}
