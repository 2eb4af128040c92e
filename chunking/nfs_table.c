// SPDX-License-Identifier: MIT
/*
 * nfs_table.c - the RFC 8267 DDP-eligibility table.
 *
 * This file contains the one table that says which XDR data items of which
 * NFS procedures (and NFSv4 COMPOUND operations) are DDP-eligible, i.e. may
 * travel in a read chunk (call) or a write chunk (reply) instead of inline.
 * RFC 8267 section 4 names four items for NFS versions 2 and 3: WRITE data,
 * SYMLINK pathname (calls), READ data and READLINK pathname (replies);
 * section 6.1 names four for every NFSv4 minor version: WRITE4args data,
 * the NF4LNK linkdata of CREATE (calls), READ4resok data and READLINK4resok
 * linkdata (replies).  Section 5 makes nothing in MOUNT, NLM, NSM or NFSACL
 * eligible; READ_PLUS (RFC 7862) is not in section 6.1, so it is not either.
 * Anything absent from the table is forwarded without DDP, never refused.
 */
#include <stddef.h>

#include "chunking.h"

static const struct chk_ddp_rule ddp_rules[] = {
	{ CHK_PROG_NFS, 2, 6, false, CHK_DDP_NONE, CHK_DDP_READ_DATA,
	  "NFSv2 READ", "RFC 8267 section 4" },
	{ CHK_PROG_NFS, 2, 8, false, CHK_DDP_WRITE_DATA, CHK_DDP_NONE,
	  "NFSv2 WRITE", "RFC 8267 section 4" },
	{ CHK_PROG_NFS, 2, 5, false, CHK_DDP_NONE, CHK_DDP_READLINK_PATH,
	  "NFSv2 READLINK", "RFC 8267 section 4" },
	{ CHK_PROG_NFS, 2, 13, false, CHK_DDP_SYMLINK_PATH, CHK_DDP_NONE,
	  "NFSv2 SYMLINK", "RFC 8267 section 4" },
	{ CHK_PROG_NFS, 3, 6, false, CHK_DDP_NONE, CHK_DDP_READ_DATA,
	  "NFSv3 READ", "RFC 8267 section 4" },
	{ CHK_PROG_NFS, 3, 7, false, CHK_DDP_WRITE_DATA, CHK_DDP_NONE,
	  "NFSv3 WRITE", "RFC 8267 section 4" },
	{ CHK_PROG_NFS, 3, 5, false, CHK_DDP_NONE, CHK_DDP_READLINK_PATH,
	  "NFSv3 READLINK", "RFC 8267 section 4" },
	{ CHK_PROG_NFS, 3, 10, false, CHK_DDP_SYMLINK_PATH, CHK_DDP_NONE,
	  "NFSv3 SYMLINK", "RFC 8267 section 4" },
	{ CHK_PROG_NFS, 4, CHK_OP_READ, true, CHK_DDP_NONE, CHK_DDP_READ_DATA,
	  "NFSv4 READ", "RFC 8267 section 6.1" },
	{ CHK_PROG_NFS, 4, CHK_OP_WRITE, true, CHK_DDP_WRITE_DATA, CHK_DDP_NONE,
	  "NFSv4 WRITE", "RFC 8267 section 6.1" },
	{ CHK_PROG_NFS, 4, CHK_OP_READLINK, true, CHK_DDP_NONE, CHK_DDP_READLINK_PATH,
	  "NFSv4 READLINK", "RFC 8267 section 6.1" },
	{ CHK_PROG_NFS, 4, CHK_OP_CREATE, true, CHK_DDP_SYMLINK_PATH, CHK_DDP_NONE,
	  "NFSv4 CREATE (NF4LNK)", "RFC 8267 section 6.1" },
};

static const char *const ddp_item_names[CHK_DDP__COUNT] = {
	[CHK_DDP_NONE] = "none",
	[CHK_DDP_WRITE_DATA] = "WRITE data",
	[CHK_DDP_SYMLINK_PATH] = "SYMLINK path",
	[CHK_DDP_READ_DATA] = "READ data",
	[CHK_DDP_READLINK_PATH] = "READLINK path",
};

const char *chk_ddp_item_str(enum chk_ddp_item item)
{
	if ((unsigned)item >= CHK_DDP__COUNT)
		return "unknown DDP item";
	return ddp_item_names[item];
}

const struct chk_ddp_rule *chk_ddp_table(size_t *nrules)
{
	*nrules = sizeof(ddp_rules) / sizeof(ddp_rules[0]);
	return ddp_rules;
}

const struct chk_ddp_rule *chk_ddp_lookup(uint32_t prog, uint32_t vers, uint32_t proc)
{
	size_t i;

	if (prog != CHK_PROG_NFS || (vers != 2 && vers != 3))
		return NULL;
	for (i = 0; i < sizeof(ddp_rules) / sizeof(ddp_rules[0]); i++)
		if (ddp_rules[i].dr_vers == vers && ddp_rules[i].dr_proc == proc &&
		    !ddp_rules[i].dr_v4op)
			return &ddp_rules[i];
	return NULL;
}

const struct chk_ddp_rule *chk_ddp_lookup_v4op(uint32_t op)
{
	size_t i;

	for (i = 0; i < sizeof(ddp_rules) / sizeof(ddp_rules[0]); i++)
		if (ddp_rules[i].dr_v4op && ddp_rules[i].dr_proc == op)
			return &ddp_rules[i];
	return NULL;
}

/* Names of enum chk_nfs_opnum4 (RFC 7530 16, RFC 8881 18, RFC 7862 15,
 * RFC 8276). */
static const char *const nfs4_op_names[] = {
	[CHK_OP_ACCESS] = "ACCESS",
	[CHK_OP_CLOSE] = "CLOSE",
	[CHK_OP_COMMIT] = "COMMIT",
	[CHK_OP_CREATE] = "CREATE",
	[CHK_OP_DELEGPURGE] = "DELEGPURGE",
	[CHK_OP_DELEGRETURN] = "DELEGRETURN",
	[CHK_OP_GETATTR] = "GETATTR",
	[CHK_OP_GETFH] = "GETFH",
	[CHK_OP_LINK] = "LINK",
	[CHK_OP_LOCK] = "LOCK",
	[CHK_OP_LOCKT] = "LOCKT",
	[CHK_OP_LOCKU] = "LOCKU",
	[CHK_OP_LOOKUP] = "LOOKUP",
	[CHK_OP_LOOKUPP] = "LOOKUPP",
	[CHK_OP_NVERIFY] = "NVERIFY",
	[CHK_OP_OPEN] = "OPEN",
	[CHK_OP_OPENATTR] = "OPENATTR",
	[CHK_OP_OPEN_CONFIRM] = "OPEN_CONFIRM",
	[CHK_OP_OPEN_DOWNGRADE] = "OPEN_DOWNGRADE",
	[CHK_OP_PUTFH] = "PUTFH",
	[CHK_OP_PUTPUBFH] = "PUTPUBFH",
	[CHK_OP_PUTROOTFH] = "PUTROOTFH",
	[CHK_OP_READ] = "READ",
	[CHK_OP_READDIR] = "READDIR",
	[CHK_OP_READLINK] = "READLINK",
	[CHK_OP_REMOVE] = "REMOVE",
	[CHK_OP_RENAME] = "RENAME",
	[CHK_OP_RENEW] = "RENEW",
	[CHK_OP_RESTOREFH] = "RESTOREFH",
	[CHK_OP_SAVEFH] = "SAVEFH",
	[CHK_OP_SECINFO] = "SECINFO",
	[CHK_OP_SETATTR] = "SETATTR",
	[CHK_OP_SETCLIENTID] = "SETCLIENTID",
	[CHK_OP_SETCLIENTID_CONFIRM] = "SETCLIENTID_CONFIRM",
	[CHK_OP_VERIFY] = "VERIFY",
	[CHK_OP_WRITE] = "WRITE",
	[CHK_OP_RELEASE_LOCKOWNER] = "RELEASE_LOCKOWNER",
	[CHK_OP_BACKCHANNEL_CTL] = "BACKCHANNEL_CTL",
	[CHK_OP_BIND_CONN_TO_SESSION] = "BIND_CONN_TO_SESSION",
	[CHK_OP_EXCHANGE_ID] = "EXCHANGE_ID",
	[CHK_OP_CREATE_SESSION] = "CREATE_SESSION",
	[CHK_OP_DESTROY_SESSION] = "DESTROY_SESSION",
	[CHK_OP_FREE_STATEID] = "FREE_STATEID",
	[CHK_OP_GET_DIR_DELEGATION] = "GET_DIR_DELEGATION",
	[CHK_OP_GETDEVICEINFO] = "GETDEVICEINFO",
	[CHK_OP_GETDEVICELIST] = "GETDEVICELIST",
	[CHK_OP_LAYOUTCOMMIT] = "LAYOUTCOMMIT",
	[CHK_OP_LAYOUTGET] = "LAYOUTGET",
	[CHK_OP_LAYOUTRETURN] = "LAYOUTRETURN",
	[CHK_OP_SECINFO_NO_NAME] = "SECINFO_NO_NAME",
	[CHK_OP_SEQUENCE] = "SEQUENCE",
	[CHK_OP_SET_SSV] = "SET_SSV",
	[CHK_OP_TEST_STATEID] = "TEST_STATEID",
	[CHK_OP_WANT_DELEGATION] = "WANT_DELEGATION",
	[CHK_OP_DESTROY_CLIENTID] = "DESTROY_CLIENTID",
	[CHK_OP_RECLAIM_COMPLETE] = "RECLAIM_COMPLETE",
	[CHK_OP_ALLOCATE] = "ALLOCATE",
	[CHK_OP_COPY] = "COPY",
	[CHK_OP_COPY_NOTIFY] = "COPY_NOTIFY",
	[CHK_OP_DEALLOCATE] = "DEALLOCATE",
	[CHK_OP_IO_ADVISE] = "IO_ADVISE",
	[CHK_OP_LAYOUTERROR] = "LAYOUTERROR",
	[CHK_OP_LAYOUTSTATS] = "LAYOUTSTATS",
	[CHK_OP_OFFLOAD_CANCEL] = "OFFLOAD_CANCEL",
	[CHK_OP_OFFLOAD_STATUS] = "OFFLOAD_STATUS",
	[CHK_OP_READ_PLUS] = "READ_PLUS",
	[CHK_OP_SEEK] = "SEEK",
	[CHK_OP_WRITE_SAME] = "WRITE_SAME",
	[CHK_OP_CLONE] = "CLONE",
	[CHK_OP_GETXATTR] = "GETXATTR",
	[CHK_OP_SETXATTR] = "SETXATTR",
	[CHK_OP_LISTXATTRS] = "LISTXATTRS",
	[CHK_OP_REMOVEXATTR] = "REMOVEXATTR",
};

const char *chk_nfs4_op_name(uint32_t op)
{
	if (op == CHK_OP_ILLEGAL)
		return "ILLEGAL";
	if (op >= sizeof(nfs4_op_names) / sizeof(nfs4_op_names[0]))
		return NULL;
	return nfs4_op_names[op];
}

static const char *const walk_err_names[CHK_WALK_ERR__COUNT] = {
	[CHK_WALK_OK] = "ok",
	[CHK_WALK_XDR] = "NFS arguments or results do not decode",
	[CHK_WALK_TOO_MANY] = "too many DDP-eligible items",
	[CHK_WALK_LEN_MISMATCH] = "length word differs from bytes in write chunk",
	[CHK_WALK_CHUNK_UNUSED] = "write chunk data with no matching result",
	[CHK_WALK_NO_RESULT] = "reply lacks the expected results",
};

const char *chk_walk_err_str(enum chk_walk_err err)
{
	if ((unsigned)err >= CHK_WALK_ERR__COUNT)
		return "unknown walk error";
	return walk_err_names[err];
}
