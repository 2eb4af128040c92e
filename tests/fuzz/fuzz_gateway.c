// SPDX-License-Identifier: MIT
/*
 * This file contains the libFuzzer target of the gateway's client path as
 * a whole: bytes a TCP client sends -> the frontend's record reassembly
 * (gw_rx_*, record marking, pool buffers) -> gw_on_record -> call decode,
 * routing, NFS walk, XID map -> the transport seam, where a fake transport
 * (fuzz_gw.h) answers with canned replies -> the reply back to the client.
 *
 * Input: byte 0 steers the fake and the client - bits 0-1 the reply kind
 * (enum fg_reply), bit 2 answer calls as they come (else hold them all and
 * close the client first: the cancel path, then answer the rest), bit 3
 * answer newest first, bits 4-7 the largest write (1 << n bytes); byte 1 seeds the write sizes;
 * the rest is the byte stream of the client, sent in those random pieces
 * over a socketpair the frontend adopted.
 *
 * Checks: every reply is one well-formed record holding an RPC REPLY; while
 * the gateway keeps the connection, each call the fake answered with
 * SUCCESS comes back under the client's XID (the fake echoes the client
 * XID as the result); once the client closes, the connection goes away and
 * every call object, transport reference and pool buffer comes back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/socket.h>

#include "fuzz_gw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fz_conf[] =
	"[gateway]\nbuffer_size = 4k\nbuffers = 128\nmax_record = 32k\nmax_calls = 16\n"
	"calls_per_client = 8\nbytes_per_client = 64k\nadmin_listen =\ncontrol_socket =\n"
	"[backend srv]\naddress = 127.0.0.1\n"
	"[route nfs]\nprogram = nfs\ntransport = rdma\n"
	"[route mount]\nprogram = mount\ntransport = rdma\n"
	"[route nlm]\nprogram = nlm\ntransport = rdma\n"
	"[route nsm]\nprogram = nsm\ntransport = rdma\n"
	"[route nfs_acl]\nprogram = nfs_acl\ntransport = rdma\n";

/* What the client side of one input saw. */
struct fz_client {
	int fzc_fd;
	bool fzc_closed;			/* the gateway closed the connection */
	unsigned fzc_replies, fzc_echoed;	/* replies; SUCCESS ones carrying their XID */
	size_t fzc_have;
	uint8_t fzc_buf[64 * 1024];	/* reply bytes not yet parsed (last: not cleared) */
};

/* Parse the complete reply records read so far. */
static void fz_parse(struct fz_client *c)
{
	size_t off = 0;

	while (c->fzc_have - off >= 4) {
		uint32_t mark = chk_be32(c->fzc_buf + off), len = mark & RM_LEN_MASK;
		const uint8_t *r = c->fzc_buf + off + 4;

		/* The gateway writes each reply as one last fragment. */
		FG_CHECK(mark & RM_LAST_FRAG);
		FG_CHECK(len >= 12 && len <= sizeof(c->fzc_buf) - 4);
		if (c->fzc_have - off - 4 < len)
			break;
		FG_CHECK(chk_be32(r + 4) == 1);		/* msg_type REPLY */
		c->fzc_replies++;
		if (len == 28 && !chk_be32(r + 8) && !chk_be32(r + 20) && chk_be32(r + 24) == chk_be32(r))
			c->fzc_echoed++;
		off += 4 + len;
	}
	memmove(c->fzc_buf, c->fzc_buf + off, c->fzc_have - off);
	c->fzc_have -= off;
}

static void fz_read(struct fz_client *c)
{
	for (;;) {
		ssize_t r;

		if (c->fzc_closed || c->fzc_have == sizeof(c->fzc_buf))
			return;
		r = read(c->fzc_fd, c->fzc_buf + c->fzc_have, sizeof(c->fzc_buf) - c->fzc_have);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
			c->fzc_closed = true;
			return;
		}
		if (r < 0)
			return;
		c->fzc_have += (size_t)r;
		fz_parse(c);
	}
}

/* One turn of the loop; answers what the fake holds when told to.
 * Returns how many calls it answered. */
static unsigned fz_turn(struct fg_gw *h, struct fz_client *c, uint8_t ctl, bool answer,
			unsigned *success)
{
	struct fg_fake *f = &h->fg_fake;
	unsigned n = 0;

	event_base_loop(h->fg_base, EVLOOP_NONBLOCK);
	while (answer && f->ff_ncalls) {
		enum fg_reply kind = (enum fg_reply)((ctl & 3) % FG_REPLY__COUNT);

		fg_answer(f, (ctl & 8) ? f->ff_ncalls - 1 : 0, kind);
		if (kind == FG_REPLY_SUCCESS && !c->fzc_closed)
			++*success;
		n++;
	}
	event_base_loop(h->fg_base, EVLOOP_NONBLOCK);
	fz_read(c);
	return n;
}

static struct fg_gw *fz_gateway(void)
{
	static struct fg_gw h;
	static bool started;

	if (!started) {
		fg_start(&h, fz_conf);
		started = true;
	}
	return &h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz_client c;
	struct fg_gw *h = fz_gateway();
	unsigned success = 0, idle, maxw, stalled = 0;
	uint32_t rnd;
	size_t off;
	uint8_t ctl;
	int sv[2];

	if (size < 2)
		return 0;
	ctl = data[0];
	rnd = data[1] * 2654435761u + 1;
	maxw = 1u << (ctl >> 4);
	FG_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	FG_CHECK(fe_adopt_fd(h->fg_fe, sv[1], "fuzz") == 0);
	memset(&c, 0, offsetof(struct fz_client, fzc_buf));
	c.fzc_fd = sv[0];
	/* The stream in random pieces, the gateway's loop turned in between. */
	/* A gateway that stops reading (a cap reached, calls held) stalls it. */
	for (off = 2; off < size && !c.fzc_closed && stalled < 3;) {
		size_t want = 1 + (rnd >> 8) % maxw;
		ssize_t w;

		rnd = rnd * 1103515245u + 12345u;
		if (want > size - off)
			want = size - off;
		w = send(c.fzc_fd, data + off, want, MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN)
			break;
		if (w > 0)
			off += (size_t)w;
		if (!fz_turn(h, &c, ctl, ctl & 4, &success) && w <= 0)
			stalled++;
		else
			stalled = 0;
	}
	/* Until nothing moves: the gateway may still be reading or answering. */
	for (idle = 0; idle < 3 && !c.fzc_closed; idle++)
		if (fz_turn(h, &c, ctl, ctl & 4, &success))
			idle = 0;
	if (!c.fzc_closed)
		FG_CHECK(c.fzc_echoed >= success);
	close(c.fzc_fd);
	/* A client at its cap of calls is not read, so its close is seen only
	 * once a reply frees a slot: the backend answers what it still holds
	 * (a real one does in the end).  A starved reader retries on a timer:
	 * after the quick turns, wait for it up to 2 s. */
	for (unsigned i = 0; i < 3000 && (fe_nconns(h->fg_fe) || h->fg_fake.ff_owned); i++) {
		event_base_loop(h->fg_base, EVLOOP_NONBLOCK);
		while (h->fg_fake.ff_ncalls)
			fg_answer(&h->fg_fake, 0, FG_REPLY_SUCCESS);
		if (i >= 1000)
			usleep(1000);
	}
	FG_CHECK(fe_nconns(h->fg_fe) == 0);
	FG_CHECK(h->fg_fake.ff_ncalls == 0 && h->fg_fake.ff_owned == 0);
	FG_CHECK(gw_ctx_calls_avail(h->fg_gw) == FG_MAX_CALLS);
	FG_CHECK(gw_pool_avail(h->fg_pool) == gw_pool_count(h->fg_pool));
	return 0;
}
