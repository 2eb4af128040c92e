// SPDX-License-Identifier: MIT
/*
 * This file contains the credit accounting of one RPC-over-RDMA connection
 * (RFC 8166 section 3.3).  Pure arithmetic, no verbs: the connection code
 * calls it, host tests drive it directly.
 *
 * Rules:
 *  - a new connection starts with a grant of 1, whatever was asked, until
 *    the first reply carries the server's grant (RFC 8166 3.3.1);
 *  - a grant of 0 is taken as 1 (a server granting 0 would otherwise
 *    deadlock the connection; the Linux client does the same);
 *  - we never go above what we asked (cc_max);
 *  - a grant may go down: calls already in flight stay, new ones wait until
 *    cc_inflight < cc_grant;
 *  - each call in flight needs a posted receive for its reply, and
 *    cc_reserve receives stay free for backchannel calls.
 */
#include "backend.h"

void be_credits_init(struct be_credits *cr, unsigned max, unsigned reserve)
{
	cr->cc_max = max ? max : 1;
	cr->cc_reserve = reserve;
	be_credits_reset(cr);
}

void be_credits_reset(struct be_credits *cr)
{
	cr->cc_grant = 1;
	cr->cc_inflight = 0;
	cr->cc_recvs = 0;
}

void be_credits_grant(struct be_credits *cr, uint32_t granted)
{
	if (granted == 0)
		granted = 1;
	if (granted > cr->cc_max)
		granted = cr->cc_max;
	cr->cc_grant = granted;
}

unsigned be_credits_room(const struct be_credits *cr)
{
	unsigned room, recv_room;

	if (cr->cc_inflight >= cr->cc_grant)
		return 0;
	room = cr->cc_grant - cr->cc_inflight;
	if (cr->cc_recvs <= cr->cc_inflight + cr->cc_reserve)
		return 0;
	recv_room = cr->cc_recvs - cr->cc_inflight - cr->cc_reserve;
	return room < recv_room ? room : recv_room;
}

bool be_credits_can_send(const struct be_credits *cr)
{
	return be_credits_room(cr) > 0;
}

void be_credits_sent(struct be_credits *cr)
{
	cr->cc_inflight++;
}

void be_credits_replied(struct be_credits *cr)
{
	if (cr->cc_inflight > 0)
		cr->cc_inflight--;
}

void be_credits_recv_posted(struct be_credits *cr, unsigned n)
{
	cr->cc_recvs += n;
}

void be_credits_recv_used(struct be_credits *cr)
{
	if (cr->cc_recvs > 0)
		cr->cc_recvs--;
}
