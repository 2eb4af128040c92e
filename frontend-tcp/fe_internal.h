/* SPDX-License-Identifier: MIT */
/*
 * This file contains the structures the files of frontend-tcp share, and
 * the functions one of them gives the other: frontend.c serves a client
 * connection (reading, writing, timers, closing), fe_listen.c listens,
 * accepts and admits connections and makes and ends the frontend.  Only
 * frontend-tcp includes it; everyone else sees frontend.h.
 */
#ifndef RPCRDMA_GW_FE_INTERNAL_H
#define RPCRDMA_GW_FE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <event2/util.h>

#include "client.h"
#include "config.h"
#include "frontend.h"
#include "log.h"
#include "record.h"

#define FE_MAX_LISTENERS	16
#define FE_PRESSURE_TICK_MS	100

struct evconnlistener;
struct fe_pw;
struct fe_tls;
struct fe_tls_conn;

struct fe_listener {
	struct fe_frontend *fl_fe;
	struct evconnlistener *fl_lev;
	uint16_t fl_port;
	unsigned fl_li;			/* its policy: index in cf_listeners */
};

TAILQ_HEAD(fe_conn_list, fe_conn);
TAILQ_HEAD(fe_out_list, gw_out);

struct fe_frontend {
	struct fe_params fe_p;
	struct fe_listener fe_listeners[FE_MAX_LISTENERS];
	unsigned fe_nlisteners;
	bool fe_listen_paused;		/* at max_clients */
	struct fe_conn_list fe_conns;
	unsigned fe_nconns;
	uint64_t fe_next_id;
	unsigned fe_reserve;		/* pool buffers left to replies */
	struct fe_pw *fe_pw;		/* sockets waiting for a PROXY header */
	struct fe_tls *fe_tls[CFG_MAX_LISTENERS];	/* per listener; NULL: its tls = off */
	struct fe_conn_list fe_blocked;	/* output stuck (socket full), oldest progress first */
	struct event *fe_pressure;	/* pool pressure check while fe_blocked is not empty */
	struct fe_conn_list fe_unread;	/* not read (a cap, a share, starved): watched for their end */
	struct event *fe_uwatch;	/* the watch's tick while fe_unread is not empty */
	/* fe_flush() in use: clients given output since its last call, to
	 * write then (else delivery makes the write event active). */
	bool fe_flush_used;
	struct fe_conn_list fe_wdue;
};

struct fe_conn {
	struct fe_frontend *fc_fe;
	int fc_fd;
	uint64_t fc_id;
	char fc_name[80];
	struct gw_client *fc_cl;	/* the gateway's side of the connection */
	struct event *fc_rev, *fc_wev, *fc_timer;
	struct gw_rx fc_rx;
	struct gw_rec fc_rec;		/* record handed to the gateway */
	struct fe_out_list fc_outq;	/* output items to write, in order */
	size_t fc_out_bytes;		/* bytes of the items queued */
	size_t fc_out_off;		/* bytes of the head item written */
	uint64_t fc_out_ms;		/* output queued and no byte written since (write_timeout) */
	uint64_t fc_timer_at;		/* ms fc_timer fires at; 0: not armed */
	bool fc_blocked;		/* on fe_blocked; the write event is added */
	TAILQ_ENTRY(fe_conn) fc_blink;	/* fe_blocked */
	bool fc_wdue;			/* on fe_wdue */
	TAILQ_ENTRY(fe_conn) fc_wlink;	/* fe_wdue */
	bool fc_reading;		/* read event added */
	bool fc_unread;			/* on fe_unread */
	TAILQ_ENTRY(fe_conn) fc_ulink;	/* fe_unread */
	bool fc_starved;		/* no buffer / call object: retry timer */
	bool fc_closing;
	uint64_t fc_last_ms;		/* last activity */
	uint64_t fc_rec_start_ms;	/* when the partial record began */
	uint8_t fc_src[16];		/* admitted source address (fe_adm_addr16) */
	bool fc_has_src;		/* counts against max_conns_per_source */
	struct fe_tls_conn *fc_tls;	/* RPC-with-TLS state (fe_tls.h); NULL: tls = off */
	unsigned fc_li;			/* its listener: index in cf_listeners */
	bool fc_tls_policy;		/* its certificate's squash given to the gateway */
	TAILQ_ENTRY(fe_conn) fc_link;
};

/* frontend.c: a client connection. */
/* Serves fd (taken) as a client of listener li; NULL when out of memory
 * (fd closed, counted, logged). */
struct fe_conn *fe_conn_new(struct fe_frontend *fe, int fd, const char *name, uint64_t key,
			    unsigned li);
/* The one way a client goes (why GW_CTR__COUNT: an ordinary end). */
void fe_conn_close(struct fe_conn *c, enum gw_ctr why, const char *reason);
/* The frontend's pool pressure timer (fe_blocked). */
void fe_on_pressure(evutil_socket_t fd, short what, void *arg);

/* fe_watch.c: connections not read, watched for their peer's end. */
#define FE_UWATCH_MS		250
#define FE_UWATCH_BATCH		256	/* connections looked at per tick */
/* c is read (false) or not (true) from now on: it leaves or joins the watch. */
void fe_watch_set(struct fe_conn *c, bool unread);
void fe_on_uwatch(evutil_socket_t fd, short what, void *arg);

/* fe_listen.c: listeners. */
/* Listeners paused at max_clients, resumed below it. */
void fe_listen_update(struct fe_frontend *fe);
/* " (listener NAME)" for a [listener NAME]'s connections, "" for [gateway]'s. */
const char *fe_li_suffix(const struct fe_frontend *fe, unsigned li, char *buf, size_t len);

#endif /* RPCRDMA_GW_FE_INTERNAL_H */
