// SPDX-License-Identifier: MIT
/*
 * Unit tests for the NFSv4 COMPOUND walkers (chunking/nfs_walk_v4*.c): every
 * operation number of nfs4.x (RFC 7531, RFC 5662, RFC 7863, RFC 8276
 * xattrs), arguments and results, encoded with tests/unit/nfs_enc.c.
 *
 * Each table row is one case.  For an operation OP it checks that
 *  - the call walker skips OP's arguments exactly: in PUTROOTFH OP WRITE,
 *    the WRITE data is found at the position the encoder put it, and the
 *    walk ends at the end of the message;
 *  - OP is unknown in minor versions before the one that defines it
 *    (the walk stops there, no DDP after it, reply unbounded);
 *  - the call walker's reply bound covers OP's encoded result;
 *  - the reply walker skips OP's results exactly: in PUTROOTFH OP READ
 *    the READ data travels in a write chunk and splicing it back gives
 *    byte for byte the reply the server built;
 *  - an error arm of OP (with its special body where the XDR has one)
 *    stops the COMPOUND and leaves every offered chunk unused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"
#include "nfs_enc.h"

#define XID 0x11223344u
#define WR_LEN 7u	/* odd: 1 byte of pad */
#define RD_LEN 5u

static uint8_t msg[1 << 16], red[1 << 16], out[1 << 16];

/* Expected DDP items an encoder function records. */
struct exp {
	unsigned n;
	struct xdr_span sp[8];
};

static void exp_item(struct exp *e, const struct xdr_enc *xe, unsigned len)
{
	e->sp[e->n].xs_pos = xe->xe_len + 4;	/* data after the length word */
	e->sp[e->n].xs_len = len;
	e->n++;
}

typedef void (*enc_fn)(struct xdr_enc *xe, struct exp *e);

struct op_case {
	const char *name;
	uint32_t op;
	uint32_t minor;		/* first minor version defining op */
	enc_fn args;
	enc_fn resok;
	uint32_t err;		/* error status to test */
	enc_fn resfail;		/* its body, NULL: none */
	bool unbounded;		/* reply bound expected unbounded */
	unsigned ncall;		/* eligible call items of OP itself */
	unsigned nreply;	/* eligible reply items of OP itself */
};

#define FN(name, ...) \
	static void name(struct xdr_enc *xe, struct exp *e) { (void)e; nfs_enc_fmt(xe, __VA_ARGS__); }
#define NOTHING(name) static void name(struct xdr_enc *xe, struct exp *e) { (void)xe; (void)e; }

NOTHING(none)
/* Arguments */
FN(a_access, "w", 0x3fu)
FN(a_close, "ws", 1u)
FN(a_commit, "hw", 4096ull, 65536u)
static void a_create_lnk(struct xdr_enc *xe, struct exp *e)
{
	nfs_enc_fmt(xe, "w", 5u);		/* NF4LNK */
	exp_item(e, xe, 9);
	nfs_enc_fmt(xe, "o o a", 9u, 4u, 0x2u, 0x2u, 8u);
}
FN(a_create_dir, "w o a", 2u, 5u, 0u, 0x2u, 4u)
FN(a_create_blk, "w ww o a", 3u, 8u, 1u, 3u, 0u, 0u, 0u)
FN(a_delegpurge, "h", 77ull)
FN(a_stateid, "s")
FN(a_getattr, "b", 2u, 0x0010011au, 0x00b0a23au)
FN(a_getattr_acl, "b", 1u, 1u << 12)
FN(a_link, "o", 5u)
FN(a_lock_new, "ww hh w wsw ho", 2u, 0u, 0ull, 100ull, 1u, 1u, 2u, 99ull, 12u)
FN(a_lock_exist, "ww hh w sw", 1u, 1u, 0ull, 100ull, 0u, 3u)
FN(a_lockt, "w hh ho", 1u, 0ull, 1ull, 5ull, 11u)
FN(a_locku, "ww s hh", 1u, 4u, 0ull, 100ull)
FN(a_lookup, "o", 7u)
FN(a_fattr, "a", 0x10u, 0u, 8u)
FN(a_open, "www ho w w a w o", 1u, 1u, 0u, 7ull, 10u, 1u, 0u, 0x10u, 0u, 8u, 0u, 6u)
FN(a_open_excl41, "www ho w w v a w", 1u, 3u, 0u, 7ull, 10u, 1u, 3u, 0x10u, 0x2u, 12u, 4u)
FN(a_open_cur, "www ho w w s o", 1u, 1u, 0u, 7ull, 10u, 0u, 2u, 3u)
FN(a_openattr, "w", 1u)
FN(a_open_confirm, "sw", 9u)
FN(a_open_downgrade, "swww", 9u, 1u, 0u)
FN(a_putfh, "o", 30u)
static void a_read(struct xdr_enc *xe, struct exp *e)
{
	(void)e;
	nfs_enc_fmt(xe, "shw", 0ull, 4099u);
}
FN(a_readdir, "h v w w b", 0ull, 4096u, 32768u, 2u, 0x0010011au, 0x00b0a23au)
FN(a_rename, "o o", 3u, 9u)
FN(a_setattr, "s a", 0x10u, 0x2u, 12u)
FN(a_setclientid, "v o w o o w", 20u, 0x40000000u, 3u, 21u, 1u)
FN(a_setclientid_confirm, "h v", 5ull)
static void a_write(struct xdr_enc *xe, struct exp *e)
{
	nfs_enc_fmt(xe, "shw", 8192ull, 2u);
	exp_item(e, xe, 4097);
	nfs_enc_fmt(xe, "o", 4097u);
}
FN(a_owner, "ho", 3ull, 16u)
FN(a_backchannel_ctl, "w w w  w w o w w w  w w o o", 0x40000000u, 3u, 0u,
   1u, 0u, 9u, 0u, 0u, 0u, 6u, 1u, 5u, 6u)
FN(a_bind_conn, "i w w", 3u, 1u)
FN(a_exchange_id, "v o w w b b w o o t", 40u, 0x103u, 1u, 1u, 0x3u, 1u, 0x7u, 1u, 10u, 20u)
FN(a_create_session, "h w w wwwwww w wwwwww w w w w w", 5ull, 1u, 3u,
   0u, 1049620u, 1049480u, 2868u, 8u, 64u, 0u,
   0u, 4096u, 4096u, 0u, 2u, 16u, 1u, 4u, 0x40000000u, 1u, 0u)
FN(a_sessionid, "i")
FN(a_get_dir_deleg, "w b t t b b", 0u, 1u, 0x6u, 1u, 0x3u, 1u, 0x18u)
FN(a_getdeviceinfo, "i w w b", 1u, 4096u, 1u, 0x6u)
FN(a_getdevicelist, "w w h v", 1u, 16u, 0ull)
FN(a_layoutcommit, "h h w s w h w t w o", 0ull, 4096ull, 0u, 1u, 4095ull, 1u, 1u, 13u)
FN(a_layoutget, "w w w h h h s w", 0u, 1u, 2u, 0ull, 4096ull, 4096ull, 4096u)
FN(a_layoutreturn, "w w w w h h s o", 0u, 1u, 3u, 1u, 0ull, 4096ull, 3u)
FN(a_layoutreturn_all, "w w w w", 0u, 1u, 3u, 3u)
FN(a_secinfo_no_name, "w", 0u)
FN(a_sequence, "i w w w w", 1u, 0u, 0u, 1u)
FN(a_set_ssv, "o o", 32u, 20u)
FN(a_test_stateid, "w s s", 2u)
FN(a_want_deleg, "w w w", 0x100u, 1u, 1u)
FN(a_want_deleg_fh, "w w", 0x100u, 4u)
FN(a_clientid, "h", 7ull)
FN(a_bool, "w", 1u)
FN(a_sid_hh, "s h h", 0ull, 4096ull)
FN(a_copy, "s s h h h w w w w o", 0ull, 0ull, 4096ull, 0u, 1u, 1u, 1u, 11u)
FN(a_copy_notify, "s w o o", 3u, 3u, 12u)
FN(a_io_advise, "s h h b", 0ull, 4096ull, 1u, 0x10u)
FN(a_layouterror, "h h s w i w w", 0ull, 4096ull, 1u, 5u, 25u)
FN(a_layoutstats, "h h s h h h h i w o", 0ull, 4096ull, 1ull, 4096ull, 2ull, 8192ull, 4u, 9u)
FN(a_read_plus, "s h w", 0ull, 65536u)
FN(a_seek, "s h w", 0ull, 1u)
FN(a_write_same, "s w h h h h w h o", 2u, 0ull, 512ull, 8ull, 0ull, 0u, 0ull, 5u)
FN(a_clone, "s s h h h", 0ull, 0ull, 4096ull)
FN(a_getxattr, "o", 10u)
FN(a_setxattr, "w o o", 0u, 10u, 33u)
FN(a_listxattrs, "h w", 0ull, 4096u)

/* Results after status NFS4_OK */
FN(r_access, "ww", 0x3fu, 0x1fu)
FN(r_verf, "v")
FN(r_cinfo_bm, "w hh b", 1u, 1ull, 2ull, 1u, 0x2u)
FN(r_getattr, "a", 0x0010011au, 0x00b0a23au, 160u)
FN(r_getattr_acl, "a", 0x1000u, 0u, 64u)
FN(r_fh, "o", 128u)
FN(r_cinfo, "w hh", 0u, 1ull, 2ull)
FN(r_denied, "hhw ho", 0ull, 10ull, 2u, 4ull, 9u)
FN(r_open, "s w hh w b  w s w w h www o", 1u, 1ull, 2ull, 4u, 1u, 0u,
   2u, 0u, 1u, 1048576ull, 0u, 0u, 0x1u, 8u)
FN(r_open_none_ext, "s w hh w b  w w w", 1u, 1ull, 2ull, 4u, 1u, 0u, 3u, 1u, 0u)
static void r_read(struct xdr_enc *xe, struct exp *e)
{
	nfs_enc_fmt(xe, "w", 1u);
	exp_item(e, xe, 333);
	nfs_enc_fmt(xe, "o", 333u);
}
FN(r_readdir, "v  w h o a  w h o a  w w", 1u, 1ull, 5u, 0x10u, 0u, 4u, 1u, 2ull, 9u, 0x10u, 0u, 4u,
   0u, 1u)
static void r_readlink(struct xdr_enc *xe, struct exp *e)
{
	exp_item(e, xe, 13);
	nfs_enc_fmt(xe, "o", 13u);
}
FN(r_cinfo2, "w hh w hh", 1u, 1ull, 2ull, 1u, 3ull, 4ull)
FN(r_secinfo, "w w w o w w", 2u, 1u, 6u, 11u, 0u, 2u)
FN(r_bitmap2, "b", 2u, 0x10u, 0x2u)
FN(r_setclientid, "h v", 1ull)
FN(r_clid_inuse, "o o", 3u, 17u)
FN(r_write, "w w v", 4097u, 2u)
FN(r_bind_conn, "i w w", 3u, 0u)
FN(r_exchange_id, "h w w w b b h o o w o o t", 1ull, 1u, 0x10003u, 1u, 1u, 0x3u, 1u, 0x7u,
   0ull, 30u, 30u, 1u, 10u, 20u)
FN(r_create_session, "i w w wwwwww w wwwwww w w", 0u, 0u,
   0u, 1049620u, 1049480u, 2868u, 8u, 64u, 0u,
   0u, 4096u, 4096u, 0u, 2u, 16u, 1u, 4u)
FN(r_get_dir_deleg, "w v s b b b", 0u, 1u, 0x6u, 1u, 0x3u, 1u, 0x18u)
FN(r_get_dir_deleg_unavail, "w w", 1u, 0u)
FN(r_getdeviceinfo, "w o b", 1u, 200u, 1u, 0x6u)
FN(r_u32, "w", 8192u)
FN(r_getdevicelist, "h v w i i w", 0ull, 2u, 1u)
FN(r_layoutcommit, "w h", 1u, 8192ull)
FN(r_layoutget, "w s w h h w w o", 1u, 1u, 0ull, 4096ull, 2u, 1u, 96u)
FN(r_layoutreturn, "w s", 1u)
FN(r_sequence, "i w w w w w", 1u, 0u, 63u, 63u, 0u)
FN(r_opaque20, "o", 20u)
FN(r_test_stateid, "w w w", 2u, 0u, 10025u)
FN(r_want_deleg, "w s w www o", 1u, 0u, 0u, 0u, 0x1u, 9u)
FN(r_copy, "w s h w v w w", 1u, 4096ull, 2u, 1u, 1u)
FN(r_two_bools, "w w", 1u, 0u)
FN(r_copy_notify, "t s w w o", 1u, 2u, 23u)
FN(r_bitmap1, "b", 1u, 0x10u)
FN(r_offload_status, "h w w", 4096ull, 1u, 0u)
FN(r_read_plus, "w w w h o w h h", 1u, 2u, 0u, 0ull, 301u, 1u, 301ull, 4096ull)
FN(r_seek, "w h", 0u, 4096ull)
FN(r_write_same, "w h w v", 0u, 512ull, 2u)
FN(r_getxattr, "o", 33u)
FN(r_listxattrs, "h w o o w", 9ull, 2u, 10u, 11u, 1u)

#define ROW(n, o, m, a, r, e, f, u, c, p) { n, o, m, a, r, e, f, u, c, p }
static const struct op_case ops[] = {
	ROW("ACCESS", 3, 0, a_access, r_access, 13, NULL, false, 0, 0),
	ROW("CLOSE", 4, 0, a_close, a_stateid, 10025, NULL, false, 0, 0),
	ROW("COMMIT", 5, 0, a_commit, r_verf, 5, NULL, false, 0, 0),
	ROW("CREATE(NF4LNK)", 6, 0, a_create_lnk, r_cinfo_bm, 17, NULL, false, 1, 0),
	ROW("CREATE(NF4DIR)", 6, 0, a_create_dir, r_cinfo_bm, 17, NULL, false, 0, 0),
	ROW("CREATE(NF4BLK)", 6, 0, a_create_blk, r_cinfo_bm, 17, NULL, false, 0, 0),
	ROW("DELEGPURGE", 7, 0, a_delegpurge, none, 10004, NULL, false, 0, 0),
	ROW("DELEGRETURN", 8, 0, a_stateid, none, 10025, NULL, false, 0, 0),
	ROW("GETATTR", 9, 0, a_getattr, r_getattr, 70, NULL, false, 0, 0),
	ROW("GETATTR(acl)", 9, 0, a_getattr_acl, r_getattr_acl, 70, NULL, true, 0, 0),
	ROW("GETFH", 10, 0, none, r_fh, 10020, NULL, false, 0, 0),
	ROW("LINK", 11, 0, a_link, r_cinfo, 18, NULL, false, 0, 0),
	ROW("LOCK(new owner)", 12, 0, a_lock_new, a_stateid, 10010, r_denied, false, 0, 0),
	ROW("LOCK(existing)", 12, 0, a_lock_exist, a_stateid, 10010, r_denied, false, 0, 0),
	ROW("LOCKT", 13, 0, a_lockt, none, 10010, r_denied, false, 0, 0),
	ROW("LOCKU", 14, 0, a_locku, a_stateid, 10025, NULL, false, 0, 0),
	ROW("LOOKUP", 15, 0, a_lookup, none, 2, NULL, false, 0, 0),
	ROW("LOOKUPP", 16, 0, none, none, 2, NULL, false, 0, 0),
	ROW("NVERIFY", 17, 0, a_fattr, none, 10027, NULL, false, 0, 0),
	ROW("OPEN(create)", 18, 0, a_open, r_open, 17, NULL, false, 0, 0),
	ROW("OPEN(excl4_1,fh)", 18, 0, a_open_excl41, r_open_none_ext, 17, NULL, false, 0, 0),
	ROW("OPEN(deleg_cur)", 18, 0, a_open_cur, r_open, 17, NULL, false, 0, 0),
	ROW("OPENATTR", 19, 0, a_openattr, none, 10004, NULL, false, 0, 0),
	ROW("OPEN_CONFIRM", 20, 0, a_open_confirm, a_stateid, 10026, NULL, false, 0, 0),
	ROW("OPEN_DOWNGRADE", 21, 0, a_open_downgrade, a_stateid, 10026, NULL, false, 0, 0),
	ROW("PUTFH", 22, 0, a_putfh, none, 10001, NULL, false, 0, 0),
	ROW("PUTPUBFH", 23, 0, none, none, 10001, NULL, false, 0, 0),
	ROW("PUTROOTFH", 24, 0, none, none, 10001, NULL, false, 0, 0),
	ROW("READ", 25, 0, a_read, r_read, 10025, NULL, false, 0, 1),
	ROW("READDIR", 26, 0, a_readdir, r_readdir, 10003, NULL, false, 0, 0),
	ROW("READLINK", 27, 0, none, r_readlink, 22, NULL, false, 0, 1),
	ROW("REMOVE", 28, 0, a_lookup, r_cinfo, 2, NULL, false, 0, 0),
	ROW("RENAME", 29, 0, a_rename, r_cinfo2, 2, NULL, false, 0, 0),
	ROW("RENEW", 30, 0, a_clientid, none, 10022, NULL, false, 0, 0),
	ROW("RESTOREFH", 31, 0, none, none, 10030, NULL, false, 0, 0),
	ROW("SAVEFH", 32, 0, none, none, 10020, NULL, false, 0, 0),
	ROW("SECINFO", 33, 0, a_lookup, r_secinfo, 2, NULL, true, 0, 0),
	ROW("SETATTR", 34, 0, a_setattr, r_bitmap2, 13, r_bitmap2, false, 0, 0),
	ROW("SETCLIENTID", 35, 0, a_setclientid, r_setclientid, 10017, r_clid_inuse, false, 0, 0),
	ROW("SETCLIENTID_CONFIRM", 36, 0, a_setclientid_confirm, none, 10022, NULL, false, 0, 0),
	ROW("VERIFY", 37, 0, a_fattr, none, 10028, NULL, false, 0, 0),
	ROW("WRITE", 38, 0, a_write, r_write, 10025, NULL, false, 1, 0),
	ROW("RELEASE_LOCKOWNER", 39, 0, a_owner, none, 10040, NULL, false, 0, 0),
	ROW("BACKCHANNEL_CTL", 40, 1, a_backchannel_ctl, none, 10004, NULL, false, 0, 0),
	ROW("BIND_CONN_TO_SESSION", 41, 1, a_bind_conn, r_bind_conn, 10052, NULL, false, 0, 0),
	ROW("EXCHANGE_ID", 42, 1, a_exchange_id, r_exchange_id, 10017, NULL, true, 0, 0),
	ROW("CREATE_SESSION", 43, 1, a_create_session, r_create_session, 10022, NULL, false, 0, 0),
	ROW("DESTROY_SESSION", 44, 1, a_sessionid, none, 10052, NULL, false, 0, 0),
	ROW("FREE_STATEID", 45, 1, a_stateid, none, 10025, NULL, false, 0, 0),
	ROW("GET_DIR_DELEGATION", 46, 1, a_get_dir_deleg, r_get_dir_deleg, 10004, NULL, false, 0, 0),
	ROW("GET_DIR_DELEGATION(unavail)", 46, 1, a_get_dir_deleg, r_get_dir_deleg_unavail, 10004,
	    NULL, false, 0, 0),
	ROW("GETDEVICEINFO", 47, 1, a_getdeviceinfo, r_getdeviceinfo, 10005, r_u32, false, 0, 0),
	ROW("GETDEVICELIST", 48, 1, a_getdevicelist, r_getdevicelist, 10004, NULL, false, 0, 0),
	ROW("LAYOUTCOMMIT", 49, 1, a_layoutcommit, r_layoutcommit, 10004, NULL, false, 0, 0),
	ROW("LAYOUTGET", 50, 1, a_layoutget, r_layoutget, 10058, a_bool, false, 0, 0),
	ROW("LAYOUTRETURN(file)", 51, 1, a_layoutreturn, r_layoutreturn, 10004, NULL, false, 0, 0),
	ROW("LAYOUTRETURN(all)", 51, 1, a_layoutreturn_all, r_layoutreturn, 10004, NULL, false, 0, 0),
	ROW("SECINFO_NO_NAME", 52, 1, a_secinfo_no_name, r_secinfo, 2, NULL, true, 0, 0),
	ROW("SEQUENCE", 53, 1, a_sequence, r_sequence, 10052, NULL, false, 0, 0),
	ROW("SET_SSV", 54, 1, a_set_ssv, r_opaque20, 10004, NULL, true, 0, 0),
	ROW("TEST_STATEID", 55, 1, a_test_stateid, r_test_stateid, 10004, NULL, false, 0, 0),
	ROW("WANT_DELEGATION", 56, 1, a_want_deleg, r_want_deleg, 10004, NULL, false, 0, 0),
	ROW("WANT_DELEGATION(fh)", 56, 1, a_want_deleg_fh, r_want_deleg, 10004, NULL, false, 0, 0),
	ROW("DESTROY_CLIENTID", 57, 1, a_clientid, none, 10022, NULL, false, 0, 0),
	ROW("RECLAIM_COMPLETE", 58, 1, a_bool, none, 10075, NULL, false, 0, 0),
	ROW("ALLOCATE", 59, 2, a_sid_hh, none, 28, NULL, false, 0, 0),
	ROW("COPY", 60, 2, a_copy, r_copy, 10094, r_two_bools, false, 0, 0),
	ROW("COPY_NOTIFY", 61, 2, a_copy_notify, r_copy_notify, 10004, NULL, true, 0, 0),
	ROW("DEALLOCATE", 62, 2, a_sid_hh, none, 10004, NULL, false, 0, 0),
	ROW("IO_ADVISE", 63, 2, a_io_advise, r_bitmap1, 10004, NULL, false, 0, 0),
	ROW("LAYOUTERROR", 64, 2, a_layouterror, none, 10004, NULL, false, 0, 0),
	ROW("LAYOUTSTATS", 65, 2, a_layoutstats, none, 10004, NULL, false, 0, 0),
	ROW("OFFLOAD_CANCEL", 66, 2, a_stateid, none, 10004, NULL, false, 0, 0),
	ROW("OFFLOAD_STATUS", 67, 2, a_stateid, r_offload_status, 10004, NULL, false, 0, 0),
	ROW("READ_PLUS", 68, 2, a_read_plus, r_read_plus, 10025, NULL, false, 0, 0),
	ROW("SEEK", 69, 2, a_seek, r_seek, 10004, NULL, false, 0, 0),
	ROW("WRITE_SAME", 70, 2, a_write_same, r_write_same, 10004, NULL, false, 0, 0),
	ROW("CLONE", 71, 2, a_clone, none, 10004, NULL, false, 0, 0),
	ROW("GETXATTR", 72, 2, a_getxattr, r_getxattr, 10095, NULL, true, 0, 0),
	ROW("SETXATTR", 73, 2, a_setxattr, r_cinfo, 10095, NULL, false, 0, 0),
	ROW("LISTXATTRS", 74, 2, a_listxattrs, r_listxattrs, 10004, NULL, false, 0, 0),
	ROW("REMOVEXATTR", 75, 2, a_getxattr, r_cinfo, 10095, NULL, false, 0, 0),
	ROW("ILLEGAL", 10044, 0, none, none, 10044, NULL, false, 0, 0),
};

/* PUTROOTFH OP WRITE(WR_LEN): check the call walk. */
static void check_call(const struct op_case *c, uint32_t minor)
{
	struct xdr_enc xe;
	struct exp e = { 0 };
	struct xdr_cur xc;
	struct iovec one;
	struct chk_call_walk cw;
	enum chk_walk_err err;
	size_t args;
	unsigned i;
	bool known = minor >= c->minor;

	xdr_enc_init(&xe, msg, sizeof(msg));
	nfs_enc_call_hdr(&xe, XID, CHK_PROG_NFS, 4, 1);
	args = xe.xe_len;
	nfs_enc_compound_args(&xe, minor, 3);
	nfs_enc_fmt(&xe, "w w", 24u, c->op);
	c->args(&xe, &e);
	nfs_enc_fmt(&xe, "w shw", 38u, 0ull, 1u);
	exp_item(&e, &xe, WR_LEN);
	nfs_enc_fmt(&xe, "o", WR_LEN);
	assert_int_equal(xe.xe_err, XDR_OK);

	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(xdr_seek(&xc, args));
	assert_true(chk_call_walk(&xc, CHK_PROG_NFS, 4, 1, 0, &cw, &err));
	assert_int_equal(err, CHK_WALK_OK);
	assert_int_equal(cw.cw_noddp, CHK_NODDP_NO);
	assert_int_equal(cw.cw_minor, minor);
	assert_int_equal(cw.cw_nops, 3);
	if (!known) {
		/* op outside its minor version: walk stops, rest unbounded */
		assert_int_equal(cw.cw_nops_known, 1);
		assert_true(cw.cw_res_unbounded);
		assert_int_equal(cw.cw_ncall, 0);
		return;
	}
	assert_int_equal(cw.cw_nops_known, 3);
	assert_int_equal(cw.cw_args_end, xe.xe_len);
	assert_int_equal(cw.cw_ncall, e.n);
	assert_int_equal(cw.cw_ncall, c->ncall + 1);
	for (i = 0; i < e.n; i++) {
		assert_int_equal(cw.cw_call[i].it_pos, e.sp[i].xs_pos);
		assert_int_equal(cw.cw_call[i].it_len, e.sp[i].xs_len);
	}
	assert_int_equal(cw.cw_call[e.n - 1].it_kind, CHK_DDP_WRITE_DATA);
	assert_int_equal(cw.cw_call[e.n - 1].it_op, 2);
	if (c->ncall)
		assert_int_equal(cw.cw_call[0].it_op, 1);
	assert_int_equal(cw.cw_nreply, c->nreply);
}

/* PUTROOTFH OP READ(RD_LEN): bound, then the reply spliced from chunks. */
static void check_reply(const struct op_case *c, uint32_t minor)
{
	struct xdr_enc xe;
	struct exp e = { 0 }, dummy = { 0 };
	struct xdr_cur xc;
	struct iovec one;
	struct chk_call_walk cw;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	size_t args, res, len, rlen, n;
	uint32_t wl[8];
	const uint8_t *chunks[8];
	unsigned i;

	/* the call, for the bound and the expected reply items */
	xdr_enc_init(&xe, msg, sizeof(msg));
	nfs_enc_call_hdr(&xe, XID, CHK_PROG_NFS, 4, 1);
	args = xe.xe_len;
	nfs_enc_compound_args(&xe, minor, 3);
	nfs_enc_fmt(&xe, "w w", 24u, c->op);
	c->args(&xe, &dummy);
	nfs_enc_fmt(&xe, "w shw", 25u, 0ull, RD_LEN);
	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(xdr_seek(&xc, args));
	assert_true(chk_call_walk(&xc, CHK_PROG_NFS, 4, 1, 0, &cw, &err));
	assert_int_equal(cw.cw_nreply, c->nreply + 1);
	assert_int_equal(cw.cw_res_unbounded, c->unbounded);

	/* the reply the server builds for TCP */
	xdr_enc_init(&xe, msg, sizeof(msg));
	nfs_enc_reply_hdr(&xe, XID);
	res = xe.xe_len;
	nfs_enc_compound_res(&xe, 0, 3);
	nfs_enc_fmt(&xe, "ww ww", 24u, 0u, c->op, 0u);
	c->resok(&xe, &e);
	nfs_enc_fmt(&xe, "ww w", 25u, 0u, 1u);
	exp_item(&e, &xe, RD_LEN);
	nfs_enc_fmt(&xe, "o", RD_LEN);
	assert_int_equal(xe.xe_err, XDR_OK);
	len = xe.xe_len;
	if (!c->unbounded)
		assert_true(len - res <= cw.cw_res_max);

	/* over RDMA: every eligible result in a write chunk */
	rlen = nfs_enc_cut(msg, len, e.sp, e.n, red);
	for (i = 0; i < e.n; i++) {
		wl[i] = (uint32_t)e.sp[i].xs_len;
		chunks[i] = msg + e.sp[i].xs_pos;
	}
	xdr_cur_init_buf(&xc, &one, red, rlen);
	assert_true(xdr_seek(&xc, res));
	assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 4, 1, wl, e.n, &rw, &err));
	assert_int_equal(err, CHK_WALK_OK);
	assert_int_equal(rw.rw_nitems, e.n);
	assert_int_equal(rw.rw_len, len);
	n = nfs_enc_assemble(&rw, red, chunks, out, sizeof(out));
	assert_int_equal(n, len);
	assert_memory_equal(out, msg, len);

	/* the same reply inline: one piece */
	xdr_cur_init_buf(&xc, &one, msg, len);
	assert_true(xdr_seek(&xc, res));
	assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 4, 1, NULL, 0, &rw, &err));
	assert_int_equal(rw.rw_npieces, 1);
	assert_int_equal(rw.rw_len, len);

	/* a wrong length in the write list is an encoding error */
	wl[e.n - 1]++;
	xdr_cur_init_buf(&xc, &one, red, rlen);
	assert_true(xdr_seek(&xc, res));
	assert_false(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 4, 1, wl, e.n, &rw, &err));
	assert_int_equal(err, CHK_WALK_LEN_MISMATCH);

	/* error arm: COMPOUND stops at OP, the READ's chunk comes back empty */
	xdr_enc_init(&xe, msg, sizeof(msg));
	nfs_enc_reply_hdr(&xe, XID);
	nfs_enc_compound_res(&xe, c->err, 2);
	nfs_enc_fmt(&xe, "ww ww", 24u, 0u, c->op == 10044 ? 10044u : c->op, c->err);
	if (c->resfail)
		c->resfail(&xe, &dummy);
	memset(wl, 0, sizeof(wl));
	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(xdr_seek(&xc, res));
	assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 4, 1, wl, c->nreply + 1, &rw, &err));
	assert_int_equal(rw.rw_nitems, 0);
	assert_int_equal(rw.rw_len, xe.xe_len);
	/* ... and a chunk with bytes nobody claims is an error */
	wl[c->nreply] = 1;
	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(xdr_seek(&xc, res));
	assert_false(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 4, 1, wl, c->nreply + 1, &rw, &err));
	assert_int_equal(err, CHK_WALK_CHUNK_UNUSED);
}

static void t_op(void **state)
{
	const struct op_case *c = *state;
	uint32_t minor;

	for (minor = 0; minor <= 2; minor++) {
		check_call(c, minor);
		if (minor >= c->minor)
			check_reply(c, minor);
	}
	/* the row's name starts with the operation's name */
	assert_non_null(chk_nfs4_op_name(c->op));
	assert_int_equal(strncmp(c->name, chk_nfs4_op_name(c->op),
				 strlen(chk_nfs4_op_name(c->op))), 0);
}

#define NOPS (sizeof(ops) / sizeof(ops[0]))
static char names[NOPS][64];

int main(void)
{
	struct CMUnitTest tests[NOPS];
	unsigned i;

	for (i = 0; i < NOPS; i++) {
		snprintf(names[i], sizeof(names[i]), "%02u_op_%u_%s", i + 1, ops[i].op, ops[i].name);
		tests[i] = (struct CMUnitTest){ .name = names[i], .test_func = t_op,
						.initial_state = (void *)&ops[i] };
	}
	return _cmocka_run_group_tests("nfs_v4_ops", tests, NOPS, NULL, NULL);
}
