/* SPDX-License-Identifier: MIT */
/*
 * chunking.h - the wire-format module of rpcrdma-gw.
 *
 * Pure functions over buffers: the XDR cursor (RFC 4506), ONC RPC v2 message
 * headers (RFC 5531), record marking (RFC 5531 section 11), the RPC-over-RDMA
 * version 1 transport header (RFC 8166 section 4, with the RFC 5666 /
 * draft-ietf-nfsv4-rpcrdma-08 legacy procedures), RFC 8797 CM private data,
 * the Connection Configuration Protocol (draft-08 section 6) and the NFS
 * upper-layer binding walkers (RFC 8267).  Nothing here knows sockets, verbs
 * or libevent, and nothing here allocates: every decoder fills a caller-owned
 * structure and refers to payload bytes by position, never by copy.
 *
 * Return conventions (docs/naming.md): decoders and encoders return bool
 * (true = done); the reason for a false is the sticky error code kept in the
 * cursor or returned through an enum out-parameter.
 */
#ifndef RPCRDMA_GW_CHUNKING_H
#define RPCRDMA_GW_CHUNKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* ------------------------------------------------------------------------
 * XDR cursor (RFC 4506) - xdr.c
 *
 * A decoding cursor walks a list of buffer segments (struct iovec) as one
 * XDR stream, so a record that arrived in pieces is read in place.  The
 * first error sticks: later calls do nothing and return false, so a caller
 * may decode a run of fields and test once.  Positions are byte offsets from
 * the start of the stream, which is what RPC-over-RDMA read chunks carry.
 * ------------------------------------------------------------------------ */

/* Append-only: do not reorder (xdr_err_str() indexes by value). */
enum xdr_err {
	XDR_OK = 0,
	XDR_ERR_SHORT,		/* stream ended inside an item */
	XDR_ERR_TOO_LONG,	/* length word above the caller's maximum */
	XDR_ERR_BAD_ENUM,	/* discriminant or enum value not allowed */
	XDR_ERR_BAD_BOOL,	/* bool other than 0 or 1 (RFC 4506 4.4) */
	XDR_ERR_NO_SPACE,	/* encoder: output buffer full */
	XDR_ERR_BAD_ARG,	/* caller error (e.g. seek outside stream) */
	XDR_ERR_DEPTH,		/* too many nested or repeated items */
	XDR_ERR__COUNT
};
const char *xdr_err_str(enum xdr_err err);

struct xdr_cur {
	const struct iovec *xc_iov;	/* segments of the stream */
	unsigned xc_niov;
	unsigned xc_idx;		/* current segment */
	size_t xc_off;			/* offset inside the current segment */
	size_t xc_pos;			/* absolute stream position */
	size_t xc_len;			/* total stream length */
	enum xdr_err xc_err;		/* first error, sticky */
};

/* A reference to bytes of the stream: where they are, never a copy. */
struct xdr_span {
	size_t xs_pos;
	size_t xs_len;
};

void xdr_cur_init(struct xdr_cur *xc, const struct iovec *iov, unsigned niov);
/* Convenience for a single contiguous buffer (iov kept by the caller). */
void xdr_cur_init_buf(struct xdr_cur *xc, struct iovec *one, const void *buf, size_t len);

static inline size_t xdr_pos(const struct xdr_cur *xc) { return xc->xc_pos; }
static inline size_t xdr_remaining(const struct xdr_cur *xc) { return xc->xc_len - xc->xc_pos; }
static inline bool xdr_ok(const struct xdr_cur *xc) { return xc->xc_err == XDR_OK; }
/* Record the first error; returns false so callers can `return xdr_fail(..)`. */
bool xdr_fail(struct xdr_cur *xc, enum xdr_err err);

static inline bool xdr_get_u32(struct xdr_cur *xc, uint32_t *v);	/* below */
bool xdr_get_u32_slow(struct xdr_cur *xc, uint32_t *v);
bool xdr_get_i32(struct xdr_cur *xc, int32_t *v);
bool xdr_get_u64(struct xdr_cur *xc, uint64_t *v);
bool xdr_get_bool(struct xdr_cur *xc, bool *v);
/* enum: value must be < nvalid when nvalid != 0 (dense enums); else any. */
bool xdr_get_enum(struct xdr_cur *xc, uint32_t *v, uint32_t nvalid);
/* opaque<max>: length word then data and pad; *span refers to the data. */
static inline bool xdr_get_opaque(struct xdr_cur *xc, struct xdr_span *span, uint32_t max);
bool xdr_get_opaque_slow(struct xdr_cur *xc, struct xdr_span *span, uint32_t max);
/* opaque[n]: fixed length, no length word. */
bool xdr_get_fixed(struct xdr_cur *xc, struct xdr_span *span, uint32_t n);
/* string<max>: as opaque; the bytes are not NUL-terminated. */
static inline bool xdr_get_string(struct xdr_cur *xc, struct xdr_span *span, uint32_t max)
{ return xdr_get_opaque(xc, span, max); }
/* Skip n bytes rounded up to a multiple of 4. */
static inline bool xdr_skip(struct xdr_cur *xc, size_t n);
bool xdr_skip_slow(struct xdr_cur *xc, size_t n);
/* Move to an absolute position (must be within the stream). */
bool xdr_seek(struct xdr_cur *xc, size_t pos);
/* Copy up to cap bytes of a span out (small items: names, creds, tests). */
size_t xdr_span_copy(const struct xdr_cur *xc, const struct xdr_span *span, void *dst, size_t cap);
/* Pointer to the span's bytes if they are contiguous in one segment, else NULL. */
const uint8_t *xdr_span_ptr(const struct xdr_cur *xc, const struct xdr_span *span);
static inline size_t xdr_pad(size_t n) { return (4 - (n & 3)) & 3; }
static inline size_t xdr_round4(size_t n) { return (n + 3) & ~(size_t)3; }

/* Encoder into one contiguous buffer (headers and local replies are small). */
struct xdr_enc {
	uint8_t *xe_buf;
	size_t xe_cap;
	size_t xe_len;
	enum xdr_err xe_err;
};
void xdr_enc_init(struct xdr_enc *xe, void *buf, size_t cap);
static inline bool xdr_put_u32(struct xdr_enc *xe, uint32_t v);
bool xdr_put_u64(struct xdr_enc *xe, uint64_t v);
bool xdr_put_bool(struct xdr_enc *xe, bool v);
bool xdr_put_opaque(struct xdr_enc *xe, const void *data, uint32_t len);	/* with length word */
bool xdr_put_fixed(struct xdr_enc *xe, const void *data, uint32_t len);	/* no length word */
/* Reserve 4 bytes to patch later (e.g. a length); returns its offset. */
size_t xdr_put_hole(struct xdr_enc *xe);
void xdr_patch_u32(struct xdr_enc *xe, size_t off, uint32_t v);

/* Big-endian helpers for fixed layouts (private data, tests). */
static inline uint32_t chk_be32(const uint8_t *p)
{ return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static inline void chk_put_be32(uint8_t *p, uint32_t v)
{ p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }

/* n bytes at the encoder's end, or NULL (and xe_err set) without room.
 * Inline with xdr_put_u32: a header's words are a call each otherwise. */
static inline uint8_t *xdr_enc_room(struct xdr_enc *xe, size_t n)
{
	uint8_t *p;

	if (xe->xe_err != XDR_OK)
		return NULL;
	if (xe->xe_cap - xe->xe_len < n) {
		xe->xe_err = XDR_ERR_NO_SPACE;
		return NULL;
	}
	p = xe->xe_buf + xe->xe_len;
	xe->xe_len += n;
	return p;
}

static inline bool xdr_put_u32(struct xdr_enc *xe, uint32_t v)
{
	uint8_t *p = xdr_enc_room(xe, 4);

	if (!p)
		return false;
	chk_put_be32(p, v);
	return true;
}

/* The decoders' most frequent call (about a tenth of a small call's
 * instructions out of line): a word well inside the current segment is
 * read here; the rest (errors, segment ends, the stream's end) in xdr.c. */
static inline bool xdr_get_u32(struct xdr_cur *xc, uint32_t *v)
{
	if (xc->xc_err == XDR_OK && xc->xc_idx < xc->xc_niov && xdr_remaining(xc) >= 4 &&
	    xc->xc_iov[xc->xc_idx].iov_len - xc->xc_off > 4) {
		*v = chk_be32((const uint8_t *)xc->xc_iov[xc->xc_idx].iov_base + xc->xc_off);
		xc->xc_off += 4;
		xc->xc_pos += 4;
		return true;
	}
	return xdr_get_u32_slow(xc, v);
}

/* The fast paths below take items that end inside the current segment,
 * before its end (so xc_idx keeps naming live bytes); the rest, errors
 * included, go the slow way.  Each walk reads a few dozen of them. */
static inline size_t xdr_seg_left(const struct xdr_cur *xc)
{
	return xc->xc_iov[xc->xc_idx].iov_len - xc->xc_off;
}

static inline bool xdr_get_opaque(struct xdr_cur *xc, struct xdr_span *span, uint32_t max)
{
	if (xc->xc_err == XDR_OK && xc->xc_idx < xc->xc_niov && xdr_seg_left(xc) > 4) {
		uint32_t n = chk_be32((const uint8_t *)xc->xc_iov[xc->xc_idx].iov_base + xc->xc_off);
		size_t adv = 4 + xdr_round4((size_t)n);

		if (n <= max && adv <= xdr_remaining(xc) && adv < xdr_seg_left(xc)) {
			span->xs_pos = xc->xc_pos + 4;
			span->xs_len = n;
			xc->xc_off += adv;
			xc->xc_pos += adv;
			return true;
		}
	}
	return xdr_get_opaque_slow(xc, span, max);
}

static inline bool xdr_skip(struct xdr_cur *xc, size_t n)
{
	if (xc->xc_err == XDR_OK && xc->xc_idx < xc->xc_niov && n < xdr_seg_left(xc) &&
	    xdr_round4(n) <= xdr_remaining(xc) && xdr_round4(n) < xdr_seg_left(xc)) {
		xc->xc_off += xdr_round4(n);
		xc->xc_pos += xdr_round4(n);
		return true;
	}
	return xdr_skip_slow(xc, n);
}

/* ------------------------------------------------------------------------
 * ONC RPC v2 message headers (RFC 5531 section 9) - rpc.c
 * ------------------------------------------------------------------------ */
#define RPC_VERS		2
#define RPC_AUTH_MAX_BODY	400	/* RFC 5531 8.2: opaque_auth body<400> */

enum rpc_msg_type { RPC_CALL = 0, RPC_REPLY = 1 };
enum rpc_reply_stat { RPC_MSG_ACCEPTED = 0, RPC_MSG_DENIED = 1 };
enum rpc_accept_stat {
	RPC_SUCCESS = 0, RPC_PROG_UNAVAIL = 1, RPC_PROG_MISMATCH = 2,
	RPC_PROC_UNAVAIL = 3, RPC_GARBAGE_ARGS = 4, RPC_SYSTEM_ERR = 5
};
enum rpc_reject_stat { RPC_MISMATCH = 0, RPC_AUTH_ERROR = 1 };
enum rpc_auth_stat {
	RPC_AUTH_OK = 0, RPC_AUTH_BADCRED = 1, RPC_AUTH_REJECTEDCRED = 2,
	RPC_AUTH_BADVERF = 3, RPC_AUTH_REJECTEDVERF = 4, RPC_AUTH_TOOWEAK = 5,
	RPC_AUTH_INVALIDRESP = 6, RPC_AUTH_FAILED = 7,
	RPC_AUTH_KERB_GENERIC = 8, RPC_AUTH_TIMEEXPIRE = 9, RPC_AUTH_TKT_FILE = 10,
	RPC_AUTH_DECODE = 11, RPC_AUTH_NET_ADDR = 12,
	RPC_RPCSEC_GSS_CREDPROBLEM = 13, RPC_RPCSEC_GSS_CTXPROBLEM = 14
};
enum rpc_auth_flavor {
	RPC_AUTH_NONE = 0, RPC_AUTH_SYS = 1, RPC_AUTH_SHORT = 2, RPC_AUTH_DH = 3,
	RPC_RPCSEC_GSS = 6, RPC_AUTH_TLS = 7	/* RFC 9289 4.1 */
};
enum rpc_gss_service { RPC_GSS_SVC_NONE = 1, RPC_GSS_SVC_INTEGRITY = 2, RPC_GSS_SVC_PRIVACY = 3 };

struct rpc_opaque_auth {
	uint32_t oa_flavor;
	struct xdr_span oa_body;	/* <= RPC_AUTH_MAX_BODY bytes */
};

struct rpc_call_hdr {
	uint32_t rc_xid;
	uint32_t rc_rpcvers;		/* reported, not enforced: caller answers RPC_MISMATCH */
	uint32_t rc_prog, rc_vers, rc_proc;
	struct rpc_opaque_auth rc_cred, rc_verf;
	uint32_t rc_gss_service;	/* RPCSEC_GSS only: as sent (enum rpc_gss_service when
					 * known: not checked, see rpc.c); else 0 */
	uint32_t rc_gss_proc;		/* RPCSEC_GSS only: gss_proc (DATA = 0) */
	size_t rc_xid_pos;		/* stream position of the XID word */
	size_t rc_args_pos;		/* stream position of the procedure arguments */
	/* Added: when rpc_call_decode() fails inside the credential or the
	 * verifier, the auth_stat to answer with (MSG_DENIED/AUTH_ERROR); 0 when
	 * the failure is elsewhere (GARBAGE or drop).  rc_xid is valid as soon
	 * as 4 bytes were read. */
	uint32_t rc_auth_stat;
	uint32_t rc_gss_seq;		/* RPCSEC_GSS only: seq_num (RFC 2203 5) */
	struct xdr_span rc_gss_handle;	/* RPCSEC_GSS only: context handle */
	bool rc_tls_probe;		/* AUTH_TLS (RFC 9289 4.1) NULL-procedure probe */
};

struct rpc_reply_hdr {
	uint32_t rr_xid;
	uint32_t rr_stat;		/* enum rpc_reply_stat */
	struct rpc_opaque_auth rr_verf;	/* accepted replies */
	uint32_t rr_accept_stat;	/* enum rpc_accept_stat */
	uint32_t rr_reject_stat;	/* enum rpc_reject_stat */
	uint32_t rr_auth_stat;		/* enum rpc_auth_stat, with AUTH_ERROR */
	uint32_t rr_low, rr_high;	/* PROG_MISMATCH and RPC_MISMATCH */
	size_t rr_results_pos;		/* SUCCESS: stream position of the results */
};

/* Decode a call header; rejects a non-CALL message and auth bodies > 400. */
bool rpc_call_decode(struct xdr_cur *xc, struct rpc_call_hdr *call);
bool rpc_reply_decode(struct xdr_cur *xc, struct rpc_reply_hdr *reply);
/* Encode a reply header; verf_body (may be NULL) supplies rr_verf's bytes. */
bool rpc_reply_encode(struct xdr_enc *xe, const struct rpc_reply_hdr *reply, const void *verf_body);
/* A complete local reply (no results) to `call`: the gateway answering by
 * itself (PROG_UNAVAIL, PROG_MISMATCH low/high, RPC_MISMATCH, ...). */
bool rpc_local_reply(struct xdr_enc *xe, uint32_t xid, const struct rpc_reply_hdr *status);

/* AUTH_SYS credential (RFC 5531 appendix A), decoded out of its span. */
#define RPC_AUTH_SYS_MAX_NAME	255
#define RPC_AUTH_SYS_MAX_GIDS	16
struct rpc_auth_sys {
	uint32_t as_stamp;
	uint32_t as_namelen;
	char as_machinename[RPC_AUTH_SYS_MAX_NAME + 1];
	uint32_t as_uid, as_gid;
	uint32_t as_ngids;
	uint32_t as_gids[RPC_AUTH_SYS_MAX_GIDS];
};
bool rpc_auth_sys_decode(struct xdr_cur *xc, const struct xdr_span *body, struct rpc_auth_sys *as);
bool rpc_auth_sys_encode(struct xdr_enc *xe, const struct rpc_auth_sys *as);
/* A call header (RFC 5531 section 9) for a call of the gateway's own: xid,
 * CALL, RPC version 2, prog/vers/proc, the credential (AUTH_SYS of as, or
 * AUTH_NONE when as is NULL) and an AUTH_NONE verifier; the arguments
 * follow. */
bool rpc_call_encode(struct xdr_enc *xe, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
		     const struct rpc_auth_sys *as);

/* ------------------------------------------------------------------------
 * Record marking (RFC 5531 section 11) - recmark.c
 *
 * Incremental and zero-copy: the caller hands over whatever bytes arrived;
 * each call consumes either fragment-header bytes (data_len = 0) or one run
 * of record data inside the current fragment (data_len = consumed), which
 * the caller appends to the record's iovec list in place.
 * ------------------------------------------------------------------------ */
#define RM_LAST_FRAG	0x80000000u
#define RM_LEN_MASK	0x7fffffffu

enum rm_status {
	RM_OK = 0,		/* consumed something; see data_len / record_done */
	RM_ERR_TOO_BIG,		/* record above the configured maximum */
};

struct rm_dec {
	uint32_t rm_max_record;		/* configured maximum record size */
	uint32_t rm_frag_left;		/* data bytes left in current fragment */
	uint32_t rm_record_len;		/* data bytes so far in this record */
	uint8_t rm_hdr[4];		/* partial fragment header */
	uint8_t rm_hdr_have;
	bool rm_in_frag;		/* inside a fragment's data */
	bool rm_last;			/* current fragment is the last */
};
void rm_dec_init(struct rm_dec *d, uint32_t max_record);
/* Consumes from p[0..n); sets *consumed (> 0 when n > 0), *data_len (the
 * first *data_len consumed bytes are record data) and *record_done. */
enum rm_status rm_dec_feed(struct rm_dec *d, const uint8_t *p, size_t n,
			   size_t *consumed, size_t *data_len, bool *record_done);
/* Fragment header for a fragment of len bytes. */
void rm_encode_hdr(uint8_t out[4], uint32_t len, bool last);

/* ------------------------------------------------------------------------
 * RPC-over-RDMA version 1 transport header (RFC 8166 section 4; RDMA_MSGP
 * and RDMA_DONE from RFC 5666 / draft-ietf-nfsv4-rpcrdma-08) - rpcrdma_hdr.c
 *
 * Names carry rpcrdma_ (not rdma_) to stay clear of librdmacm's namespace.
 * ------------------------------------------------------------------------ */
#define RPCRDMA_VERSION		1
enum rpcrdma_proc {
	RPCRDMA_MSG = 0, RPCRDMA_NOMSG = 1, RPCRDMA_MSGP = 2,
	RPCRDMA_DONE = 3, RPCRDMA_ERROR = 4
};
enum rpcrdma_errcode { RPCRDMA_ERR_VERS = 1, RPCRDMA_ERR_CHUNK = 2 };

/* Compile-time capacity of a decoded header; runtime limits sit below it. */
#define RPCRDMA_MAX_READS	64	/* read segments in a Read list */
#define RPCRDMA_MAX_WCHUNKS	16	/* write chunks in a Write list */
#define RPCRDMA_MAX_SEGS	600	/* write + reply segments together */

struct rpcrdma_segment {
	uint32_t rs_handle;
	uint32_t rs_length;
	uint64_t rs_offset;
};
struct rpcrdma_read_seg {
	uint32_t rd_position;		/* XDR position in the RPC message */
	struct rpcrdma_segment rd_seg;
};
/* A write chunk or the reply chunk: a run of rh_segs. */
struct rpcrdma_chunk {
	uint16_t ck_first;
	uint16_t ck_nsegs;
};

struct rpcrdma_limits {
	unsigned lim_max_reads;		/* <= RPCRDMA_MAX_READS */
	unsigned lim_max_wchunks;	/* <= RPCRDMA_MAX_WCHUNKS */
	unsigned lim_max_segs_per_chunk;
};

struct rpcrdma_hdr {
	uint32_t rh_xid, rh_vers, rh_credit, rh_proc;
	uint32_t rh_align, rh_thresh;		/* RDMA_MSGP */
	uint32_t rh_err;			/* RDMA_ERROR: enum rpcrdma_errcode */
	uint32_t rh_vers_low, rh_vers_high;	/* ERR_VERS */
	unsigned rh_nreads;
	struct rpcrdma_read_seg rh_reads[RPCRDMA_MAX_READS];
	unsigned rh_nwrites;
	struct rpcrdma_chunk rh_writes[RPCRDMA_MAX_WCHUNKS];
	bool rh_has_reply;
	struct rpcrdma_chunk rh_reply;
	unsigned rh_nsegs;
	struct rpcrdma_segment rh_segs[RPCRDMA_MAX_SEGS];
	size_t rh_hdr_len;	/* transport header bytes */
	size_t rh_body_off;	/* where the RPC message starts: right after the header for
				 * MSG and MSGP (draft-08 4.1; MSGP padding sits inside the
				 * message, before large opaque data: rpcrdma_msgp_pad());
				 * NOMSG, DONE, ERROR: rh_hdr_len, nothing inline follows */
};

/* Append-only: do not reorder. */
enum rpcrdma_hdr_err {
	RPCRDMA_HDR_OK = 0,
	RPCRDMA_HDR_SHORT,		/* truncated header */
	RPCRDMA_HDR_BAD_VERS,		/* rdma_vers != 1 (answer ERR_VERS) */
	RPCRDMA_HDR_BAD_PROC,		/* unknown rdma_proc */
	RPCRDMA_HDR_TOO_MANY,		/* over a list/segment limit */
	RPCRDMA_HDR_BAD_POSITION,	/* read positions misaligned or decreasing */
	RPCRDMA_HDR_BAD_CHUNKS,		/* chunk combination the spec forbids */
	RPCRDMA_HDR_BAD_ERRCODE,	/* RDMA_ERROR with an unknown code (decoded, flagged) */
	RPCRDMA_HDR_BAD_MSGP,		/* RDMA_MSGP alignment/padding invalid */
	RPCRDMA_HDR_BAD_XID,		/* rdma_xid != XID of the inline RPC message (RFC 8166 4.5.2) */
	RPCRDMA_HDR_ERR__COUNT
};
const char *rpcrdma_hdr_err_str(enum rpcrdma_hdr_err err);
void rpcrdma_limits_default(struct rpcrdma_limits *lim);
bool rpcrdma_hdr_decode(const void *buf, size_t len, const struct rpcrdma_limits *lim,
			struct rpcrdma_hdr *h, enum rpcrdma_hdr_err *err);
bool rpcrdma_hdr_encode(struct xdr_enc *xe, const struct rpcrdma_hdr *h);
/* Bytes rpcrdma_hdr_encode() will produce for h. */
size_t rpcrdma_hdr_len(const struct rpcrdma_hdr *h);
/* Added.  Checks a decoded header is a valid reply: Read list empty (RFC 8166
 * 4.3.1); RDMA_ERROR with a known code.  A requester silently discards a reply
 * that fails (RFC 8166 4.5). */
bool rpcrdma_hdr_check_reply(const struct rpcrdma_hdr *h, enum rpcrdma_hdr_err *err);
/* Added.  RDMA_MSGP (draft-08 3.9): pad bytes between an opaque's length word
 * and its data, for an opaque of data_len bytes whose data would start at
 * RPC-message position pos; alignment is reckoned from the start of the
 * RDMA message (the receive buffer), i.e. rh_body_off + pos.  0 for other
 * procedures, rh_align == 0, or data_len < rh_thresh. */
size_t rpcrdma_msgp_pad(const struct rpcrdma_hdr *h, size_t pos, uint32_t data_len);

/* ------------------------------------------------------------------------
 * RFC 8797 CM private data - rpcrdma_pd.c
 * ------------------------------------------------------------------------ */
#define RPCRDMA_PD_FORMAT_ID	0xf6ab0e18u
#define RPCRDMA_PD_VERSION	1
#define RPCRDMA_PD_LEN		8
#define RPCRDMA_PD_DEFAULT_SIZE	1024	/* RFC 8797 5.1 */
#define RPCRDMA_PD_MAX_SIZE	262144	/* RFC 8797 4.2: encoded 255 */
/* Inline thresholds offered when none is configured: the Linux client's and
 * server's default.  RFC 8166 3.3.3's 1024 (RPCRDMA_PD_DEFAULT_SIZE) is
 * what a peer without private data must assume. */
#define CHK_INLINE_DEFAULT	4096

struct rpcrdma_pd {
	bool pd_remote_inv;	/* R flag: may Send With Invalidate to us */
	uint32_t pd_send_size;	/* bytes; multiples of 1024, 1024..262144 */
	uint32_t pd_recv_size;
};
/* Encode the 8-octet message; sizes are rounded down to 1 KiB units. */
void rpcrdma_pd_encode(const struct rpcrdma_pd *pd, uint8_t out[RPCRDMA_PD_LEN]);
/* Search buf for the format identifier at any byte offset (RFC 8797 5.2: "not
 * restricted to any alignment"); false (and the RFC 8797 5.1 defaults in *pd)
 * when absent, wrong version or overrun. */
bool rpcrdma_pd_decode(const void *buf, size_t len, struct rpcrdma_pd *pd);
/* Inline thresholds: send = min(our send, peer recv), recv = min(peer send, our recv). */
void rpcrdma_inline_thresholds(const struct rpcrdma_pd *ours, const struct rpcrdma_pd *peer,
			       uint32_t *send_threshold, uint32_t *recv_threshold);

/* ------------------------------------------------------------------------
 * Connection Configuration Protocol (draft-ietf-nfsv4-rpcrdma-08 section 6,
 * RFC 5666 section 6) - ccp.c
 * ------------------------------------------------------------------------ */
#define CCP_PROG		100400
#define CCP_VERS		1
#define CCP_PROC_CONF_RDMA	1

/* config_rdma_req: the client's connection requirements. */
struct ccp_req {
	uint32_t cq_maxcall_sendsize;	/* max size of inline RPC call */
	uint32_t cq_maxreply_sendsize;	/* max size of inline RPC reply */
	uint32_t cq_maxrdmaread;	/* max active RDMA Reads at client */
};
/* config_rdma_reply: the server's connection limits. */
struct ccp_reply {
	uint32_t ccr_maxcall_sendsize;	/* max call size accepted by server */
	uint32_t ccr_align;		/* server's receive buffer alignment */
	uint32_t ccr_maxrdmaread;	/* max active RDMA Reads at server */
};
#define CCP_ARGS_LEN		12	/* both structures: three XDR words */
bool ccp_req_decode(struct xdr_cur *xc, struct ccp_req *req);
bool ccp_req_encode(struct xdr_enc *xe, const struct ccp_req *req);
bool ccp_reply_decode(struct xdr_cur *xc, struct ccp_reply *rep);
bool ccp_reply_encode(struct xdr_enc *xe, const struct ccp_reply *rep);

/* ------------------------------------------------------------------------
 * NFS upper-layer binding (RFC 8267): eligibility table, call and reply
 * walkers, chunking decision - nfs_table.c, nfs_walk.c (nfs_walk_v23.c,
 * nfs_walk_v4.c, nfs_walk_v4_res.c), nfs_decide.c.  docs/chunking.md shows
 * the table as users read it.
 *
 * The call walker takes (program, version, procedure, GSS service) and a
 * cursor at the procedure arguments; it reports each DDP-eligible item of
 * the call (stream position of the data: the length word stays inline, the
 * XDR pad is never transferred), the eligible results the reply may carry,
 * in order, and a safe upper bound of the results' size.  The reply walker
 * finds the eligible results of a reply, checks them against the Write list
 * the server returned and lists the pieces (inline spans, chunk data, XDR
 * pad) that make up the full TCP reply, without copying.  chk_decide()
 * chooses inline / read chunks / RDMA_NOMSG / write chunks / reply chunk.
 * Nothing here allocates.
 * ------------------------------------------------------------------------ */
#define CHK_PROG_NFS		100003
#define CHK_PROG_MOUNT		100005
#define CHK_PROG_NLM		100021
#define CHK_PROG_NSM		100024
#define CHK_PROG_NFSACL		100227

/* NFSv4 operation numbers: nfs_opnum4 of RFC 7530 16, RFC 8881 18,
 * RFC 7862 15 and RFC 8276 (xattrs), the RFCs' names behind CHK_.  The
 * walkers, the table and the backchannel decoders use only these. */
enum chk_nfs_opnum4 {
	/* RFC 7530 16 (NFSv4.0) */
	CHK_OP_ACCESS = 3,
	CHK_OP_CLOSE = 4,
	CHK_OP_COMMIT = 5,
	CHK_OP_CREATE = 6,
	CHK_OP_DELEGPURGE = 7,
	CHK_OP_DELEGRETURN = 8,
	CHK_OP_GETATTR = 9,
	CHK_OP_GETFH = 10,
	CHK_OP_LINK = 11,
	CHK_OP_LOCK = 12,
	CHK_OP_LOCKT = 13,
	CHK_OP_LOCKU = 14,
	CHK_OP_LOOKUP = 15,
	CHK_OP_LOOKUPP = 16,
	CHK_OP_NVERIFY = 17,
	CHK_OP_OPEN = 18,
	CHK_OP_OPENATTR = 19,
	CHK_OP_OPEN_CONFIRM = 20,
	CHK_OP_OPEN_DOWNGRADE = 21,
	CHK_OP_PUTFH = 22,
	CHK_OP_PUTPUBFH = 23,
	CHK_OP_PUTROOTFH = 24,
	CHK_OP_READ = 25,
	CHK_OP_READDIR = 26,
	CHK_OP_READLINK = 27,
	CHK_OP_REMOVE = 28,
	CHK_OP_RENAME = 29,
	CHK_OP_RENEW = 30,
	CHK_OP_RESTOREFH = 31,
	CHK_OP_SAVEFH = 32,
	CHK_OP_SECINFO = 33,
	CHK_OP_SETATTR = 34,
	CHK_OP_SETCLIENTID = 35,
	CHK_OP_SETCLIENTID_CONFIRM = 36,
	CHK_OP_VERIFY = 37,
	CHK_OP_WRITE = 38,
	CHK_OP_RELEASE_LOCKOWNER = 39,
	/* RFC 8881 18 (NFSv4.1) */
	CHK_OP_BACKCHANNEL_CTL = 40,
	CHK_OP_BIND_CONN_TO_SESSION = 41,
	CHK_OP_EXCHANGE_ID = 42,
	CHK_OP_CREATE_SESSION = 43,
	CHK_OP_DESTROY_SESSION = 44,
	CHK_OP_FREE_STATEID = 45,
	CHK_OP_GET_DIR_DELEGATION = 46,
	CHK_OP_GETDEVICEINFO = 47,
	CHK_OP_GETDEVICELIST = 48,
	CHK_OP_LAYOUTCOMMIT = 49,
	CHK_OP_LAYOUTGET = 50,
	CHK_OP_LAYOUTRETURN = 51,
	CHK_OP_SECINFO_NO_NAME = 52,
	CHK_OP_SEQUENCE = 53,
	CHK_OP_SET_SSV = 54,
	CHK_OP_TEST_STATEID = 55,
	CHK_OP_WANT_DELEGATION = 56,
	CHK_OP_DESTROY_CLIENTID = 57,
	CHK_OP_RECLAIM_COMPLETE = 58,
	/* RFC 7862 15 (NFSv4.2) */
	CHK_OP_ALLOCATE = 59,
	CHK_OP_COPY = 60,
	CHK_OP_COPY_NOTIFY = 61,
	CHK_OP_DEALLOCATE = 62,
	CHK_OP_IO_ADVISE = 63,
	CHK_OP_LAYOUTERROR = 64,
	CHK_OP_LAYOUTSTATS = 65,
	CHK_OP_OFFLOAD_CANCEL = 66,
	CHK_OP_OFFLOAD_STATUS = 67,
	CHK_OP_READ_PLUS = 68,
	CHK_OP_SEEK = 69,
	CHK_OP_WRITE_SAME = 70,
	CHK_OP_CLONE = 71,
	/* RFC 8276 (xattrs, NFSv4.2) */
	CHK_OP_GETXATTR = 72,
	CHK_OP_SETXATTR = 73,
	CHK_OP_LISTXATTRS = 74,
	CHK_OP_REMOVEXATTR = 75,
	CHK_OP_LAST_V40 = CHK_OP_RELEASE_LOCKOWNER,	/* highest of each minor version */
	CHK_OP_LAST_V41 = CHK_OP_RECLAIM_COMPLETE,
	CHK_OP_LAST_V42 = CHK_OP_REMOVEXATTR,
	CHK_OP_ILLEGAL = 10044,
};
/* Callback operation numbers (nfs_cb_opnum4, RFC 8881 20): the one the
 * gateway reads. */
enum chk_nfs_cb_opnum4 {
	CHK_OP_CB_SEQUENCE = 11,
};
/* Procedures of the NFSv4 program and of the callback program. */
#define CHK_NFSPROC4_NULL	0
#define CHK_NFSPROC4_COMPOUND	1
#define CHK_CB_NULL		0
#define CHK_CB_COMPOUND		1

/* gss_service argument of the walkers: 0 = not RPCSEC_GSS, else enum
 * rpc_gss_service, or CHK_GSS_CONTROL for RPCSEC_GSS control procedures
 * (gss_proc != RPCSEC_GSS_DATA: no NFS arguments at all). */
#define CHK_GSS_CONTROL		0x100

/* Protocol-unbounded sizes the walkers assume (docs/chunking.md "Bounds"). */
#define CHK_NFS_MAXPATHLEN	4096	/* v3/v4 READLINK result (Linux PATH_MAX) */
#define CHK_NFS4_NAME_MAX	1024	/* owner, group, ACE who in results */
#define CHK_NFS4_BITMAP_MAX	8	/* words of a bitmap4 in results */
#define CHK_READ_PLUS_SEGS	64	/* READ_PLUS result segments */

/* DDP-eligible data items (RFC 8267 sections 4 and 6.1).  Append-only. */
enum chk_ddp_item {
	CHK_DDP_NONE = 0,
	CHK_DDP_WRITE_DATA,	/* call: WRITE opaque data */
	CHK_DDP_SYMLINK_PATH,	/* call: v2/v3 SYMLINK path, v4 CREATE NF4LNK linkdata */
	CHK_DDP_READ_DATA,	/* reply: READ opaque data */
	CHK_DDP_READLINK_PATH,	/* reply: READLINK path / linkdata */
	CHK_DDP__COUNT
};
const char *chk_ddp_item_str(enum chk_ddp_item item);

/* One row of the eligibility table.  Programs, versions and procedures not
 * in the table have no DDP-eligible item: they are forwarded without DDP,
 * never refused. */
struct chk_ddp_rule {
	uint32_t dr_prog, dr_vers;
	uint32_t dr_proc;		/* procedure, or NFSv4 COMPOUND operation */
	bool dr_v4op;			/* dr_proc is an NFSv4 operation number */
	uint8_t dr_call_item;		/* enum chk_ddp_item */
	uint8_t dr_reply_item;		/* enum chk_ddp_item */
	const char *dr_name;		/* "NFSv3 WRITE" */
	const char *dr_ref;		/* "RFC 8267 section 4" */
};
const struct chk_ddp_rule *chk_ddp_table(size_t *nrules);
/* Row for a procedure (NFSv4: COMPOUND has no row, ask per operation). */
const struct chk_ddp_rule *chk_ddp_lookup(uint32_t prog, uint32_t vers, uint32_t proc);
const struct chk_ddp_rule *chk_ddp_lookup_v4op(uint32_t op);
/* Operation name ("READ"), NULL for an unknown operation number. */
const char *chk_nfs4_op_name(uint32_t op);

/* Append-only: do not reorder (chk_walk_err_str() indexes by value). */
enum chk_walk_err {
	CHK_WALK_OK = 0,
	CHK_WALK_XDR,		/* arguments or results do not decode */
	CHK_WALK_TOO_MANY,	/* more eligible items than CHK_WALK_MAX_ITEMS */
	CHK_WALK_LEN_MISMATCH,	/* reply: length word != bytes the server wrote */
	CHK_WALK_CHUNK_UNUSED,	/* reply: bytes in a chunk no result claims */
	CHK_WALK_NO_RESULT,	/* reply: results absent where the call expects some */
	CHK_WALK_ERR__COUNT
};
const char *chk_walk_err_str(enum chk_walk_err err);

/* Why a call gets no DDP at all (0: DDP allowed).  Append-only. */
enum chk_noddp {
	CHK_NODDP_NO = 0,
	CHK_NODDP_PROGRAM,	/* not NFS, or an NFS version/procedure we do not know */
	CHK_NODDP_GSS,		/* RPCSEC_GSS integrity/privacy/control: body is opaque */
	CHK_NODDP_GARBAGE,	/* arguments do not decode */
	CHK_NODDP__COUNT
};

#define CHK_WALK_MAX_ITEMS	16	/* eligible items tracked per message */

struct chk_item {
	uint8_t it_kind;	/* enum chk_ddp_item */
	uint16_t it_op;		/* NFSv4: index of the operation in the COMPOUND */
	size_t it_pos;		/* stream position of the data (after its length word) */
	uint32_t it_len;	/* call: data bytes; expected reply item: maximum bytes */
};

#define CHK_WALK_MAX_OPS	32	/* ops listed per COMPOUND (Linux sends < 20) */
struct chk_call_walk {
	uint32_t cw_prog, cw_vers, cw_proc, cw_gss;
	uint32_t cw_minor;		/* NFSv4 minorversion */
	uint32_t cw_nops;		/* NFSv4: operations the COMPOUND announces */
	uint32_t cw_nops_known;		/* NFSv4: operations walked before an unknown one */
	uint32_t cw_nops_listed;	/* NFSv4: entries of cw_op */
	uint16_t cw_op[CHK_WALK_MAX_OPS];	/* NFSv4: nfs_opnum4 of the first operations
					 * read (an unknown one last), for per-op
					 * counters; 0xffff for numbers above it */
	uint8_t cw_noddp;		/* enum chk_noddp */
	bool cw_res_unbounded;		/* no bound of the results from the arguments */
	size_t cw_res_max;		/* bound of the results (bytes after the RPC reply
					 * header), eligible data inline; valid when bounded */
	size_t cw_args_end;		/* stream position after the walked arguments */
	unsigned cw_ncall;		/* eligible call items, in stream order */
	struct chk_item cw_call[CHK_WALK_MAX_ITEMS];
	unsigned cw_nreply;		/* eligible results the reply may carry, in order */
	struct chk_item cw_reply[CHK_WALK_MAX_ITEMS];
};

/* Walk a call's arguments from the cursor.  Never fails a call for being
 * unknown: unknown programs, procedures, NFSv4 operations just get no DDP
 * (for the rest of the COMPOUND) and an unbounded reply.  Returns false with
 * *err set when the arguments do not decode; *cw is then still usable
 * (no DDP, reply unbounded). */
bool chk_call_walk(struct xdr_cur *xc, uint32_t prog, uint32_t vers, uint32_t proc,
		   uint32_t gss_service, struct chk_call_walk *cw, enum chk_walk_err *err);

/* Pieces of a reply for writev(): inline stream bytes, write-chunk data, pad. */
enum chk_piece_kind { CHK_PIECE_INLINE = 0, CHK_PIECE_CHUNK = 1, CHK_PIECE_PAD = 2 };
struct chk_piece {
	uint8_t pc_kind;	/* enum chk_piece_kind */
	uint16_t pc_chunk;	/* CHUNK: index in the Write list */
	size_t pc_off;		/* INLINE: stream position; CHUNK: offset in the chunk's data */
	size_t pc_len;		/* PAD: 1..3 bytes of chk_zero_pad */
};
extern const uint8_t chk_zero_pad[4];
#define CHK_MAX_PIECES		(1 + 3 * CHK_WALK_MAX_ITEMS)

struct chk_reply_walk {
	unsigned rw_nitems;		/* eligible results found, in order */
	struct chk_item rw_items[CHK_WALK_MAX_ITEMS];	/* it_pos: where the data would be */
	unsigned rw_nchunks_used;	/* write chunks that carried a result's data */
	size_t rw_len;			/* bytes of the assembled (TCP) reply */
	unsigned rw_npieces;
	struct chk_piece rw_pieces[CHK_MAX_PIECES];
};

/* Walk a reply whose RPC message starts at stream position msg_pos and whose
 * results start at the cursor.  wlens[i] = bytes the server wrote into
 * write chunk i (sum of its returned segment lengths), nw chunks.  Pass
 * prog = 0 when the reply carries no plain results (not MSG_ACCEPTED/SUCCESS,
 * RPCSEC_GSS integrity/privacy): every chunk must then be unused.  The
 * pieces cover the RPC message from msg_pos to the end of the stream. */
bool chk_reply_walk(struct xdr_cur *xc, size_t msg_pos, uint32_t prog, uint32_t vers,
		    uint32_t proc, const uint32_t *wlens, unsigned nw,
		    struct chk_reply_walk *rw, enum chk_walk_err *err);

/* RPC-over-RDMA v1 transport header sizes (RFC 8166 section 4.2), exact:
 * 16 fixed + Read list (24 per segment + 4) + Write list (8 + 16 per
 * segment per chunk + 4) + Reply chunk (4, or 8 + 16 per segment). */
size_t chk_rdma_hdr_len(unsigned nread_segs, unsigned nwchunks, unsigned segs_per_wchunk,
			bool reply_chunk, unsigned reply_segs);

struct chk_rdma_params {
	uint32_t rdp_send_threshold;	/* negotiated inline thresholds (bytes) */
	uint32_t rdp_recv_threshold;
	uint32_t rdp_max_segs;		/* segments per chunk budgeted in headers */
	uint32_t rdp_ddp_min;		/* eligible items below this stay inline */
	uint32_t rdp_max_read_chunks;	/* DDP read chunks per call */
	uint32_t rdp_max_write_chunks;	/* write chunks per call */
	uint32_t rdp_reply_hdr_max;	/* RPC reply header bytes before the results */
	uint32_t rdp_reply_cap;		/* reply chunk bytes when the reply is unbounded */
};
/* Linux client defaults: 4096/4096, 8 segments, ddp_min 1024, 1 read chunk
 * and 1 write chunk (RFC 8267 6.4.2), reply header 24 + 400 verifier,
 * reply cap 1 MiB + 4 KiB. */
void chk_rdma_params_default(struct chk_rdma_params *p);

#define CHK_MAX_READ_CHUNKS	4
#define CHK_MAX_WRITE_CHUNKS	4
struct chk_read_chunk {
	uint32_t rdc_pos;	/* XDR position counted from the XID (0: whole message) */
	uint32_t rdc_len;	/* bytes, XDR pad excluded */
	int rdc_item;		/* index in cw_call, -1 for position zero */
};
struct chk_decision {
	uint32_t dc_proc;		/* RPCRDMA_MSG or RPCRDMA_NOMSG */
	unsigned dc_nreads;
	struct chk_read_chunk dc_reads[CHK_MAX_READ_CHUNKS];
	size_t dc_call_inline;		/* RPC message bytes sent inline */
	size_t dc_call_hdr_max;		/* transport header budget of the call */
	unsigned dc_nwrites;		/* write chunks, for cw_reply[0..dc_nwrites) */
	uint32_t dc_write_len[CHK_MAX_WRITE_CHUNKS];
	bool dc_reply_chunk;
	uint32_t dc_reply_len;		/* bytes to offer in the reply chunk */
	bool dc_reply_unbounded;	/* reply chunk sized from rdp_reply_cap */
	size_t dc_reply_max;		/* bound of the whole RPC reply (if bounded) */
};
/* Pure: decide the chunks for a call of msg_len bytes starting at stream
 * position msg_pos.  Returns false only for a call that cannot be sent
 * (thresholds smaller than a transport header). */
bool chk_decide(const struct chk_call_walk *cw, size_t msg_pos, size_t msg_len,
		const struct chk_rdma_params *p, struct chk_decision *dc);
/* The inline part of an RDMA_MSG call as stream spans (to gather into the
 * Send): the message minus each read chunk's data and XDR pad.  Returns the
 * number of spans (<= dc_nreads + 1), 0 for RDMA_NOMSG. */
unsigned chk_decision_inline_spans(const struct chk_decision *dc, size_t msg_pos,
				   size_t msg_len, struct xdr_span *spans, unsigned cap);

/* ------------------------------------------------------------------------
 * NFSv4.1 backchannel decoders (RFC 8881; RFC 8167 on RDMA) - nfs_cb.c
 *
 * What the gateway's backchannel relay routes by: the session of a server's
 * callback, and the sessions a client's own traffic binds to its
 * connection's back channel (RFC 8881 2.10.3.1).  Untrusted input.
 * ------------------------------------------------------------------------ */
#define CHK_NFS4_SESSIONID_SIZE	16	/* NFS4_SESSIONID_SIZE (RFC 8881 3.2) */

/* A CALL from the server, decoded as far as routing needs. */
struct chk_cb_msg {
	uint32_t cm_xid, cm_prog, cm_vers, cm_proc;
	uint32_t cm_minorversion;
	bool cm_has_sid;		/* CB_COMPOUND starting with CB_SEQUENCE */
	uint8_t cm_sid[CHK_NFS4_SESSIONID_SIZE];
};
/* false: not an RPC call header at all (dropped). */
bool chk_cb_parse_call(const struct iovec *iov, unsigned niov, struct chk_cb_msg *m);
/* A client's NFSv4 COMPOUND reply: true (sid set) when it binds the
 * connection's back channel to a session: CREATE_SESSION with
 * CREATE_SESSION4_FLAG_CONN_BACK_CHAN or BIND_CONN_TO_SESSION with
 * CDFS4_BACK/BOTH, status NFS4_OK. */
bool chk_cb_parse_bind_reply(const struct iovec *iov, unsigned niov, uint8_t *sid);
/* Whether the call a walk read is an NFSv4 COMPOUND that can bind a back
 * channel (its reply is worth chk_cb_parse_bind_reply()): CREATE_SESSION,
 * alone or after SEQUENCE, or BIND_CONN_TO_SESSION; or operations not read. */
bool chk_cb_may_bind(const struct chk_call_walk *cw);
/* A client's NFSv4.1+ COMPOUND call starting with SEQUENCE: its sessionid. */
bool chk_cb_parse_sequence(const struct iovec *iov, unsigned niov, uint8_t *sid);

#endif /* RPCRDMA_GW_CHUNKING_H */
