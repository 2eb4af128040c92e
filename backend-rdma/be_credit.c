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
 *  - we never go above what we asked (cr_max);
 *  - a grant may go down: calls already in flight stay, new ones wait until
 *    cr_inflight < cr_grant;
 *  - each call in flight needs a posted receive for its reply, and
 *    cr_reserve receives stay free for backchannel calls.
 */
#include "backend.h"

void be_credits_init(struct be_credits *cr, unsigned max, unsigned reserve)
{
	cr->cr_max = max ? max : 1;
	cr->cr_reserve = reserve;
	be_credits_reset(cr);
}

void be_credits_reset(struct be_credits *cr)
{
	cr->cr_grant = 1;
	cr->cr_inflight = 0;
	cr->cr_recvs = 0;
}

void be_credits_grant(struct be_credits *cr, uint32_t granted)
{
	if (granted == 0)
		granted = 1;
	if (granted > cr->cr_max)
		granted = cr->cr_max;
	cr->cr_grant = granted;
}

unsigned be_credits_room(const struct be_credits *cr)
{
	unsigned room, recv_room;

	if (cr->cr_inflight >= cr->cr_grant)
		return 0;
	room = cr->cr_grant - cr->cr_inflight;
	if (cr->cr_recvs <= cr->cr_inflight + cr->cr_reserve)
		return 0;
	recv_room = cr->cr_recvs - cr->cr_inflight - cr->cr_reserve;
	return room < recv_room ? room : recv_room;
}

bool be_credits_can_send(const struct be_credits *cr)
{
	return be_credits_room(cr) > 0;
}

void be_credits_sent(struct be_credits *cr)
{
	cr->cr_inflight++;
}

void be_credits_replied(struct be_credits *cr)
{
	if (cr->cr_inflight > 0)
		cr->cr_inflight--;
}

void be_credits_recv_posted(struct be_credits *cr, unsigned n)
{
	cr->cr_recvs += n;
}

void be_credits_recv_used(struct be_credits *cr)
{
	if (cr->cr_recvs > 0)
		cr->cr_recvs--;
}
