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
	{ CHK_PROG_NFS, 4, 25, true, CHK_DDP_NONE, CHK_DDP_READ_DATA,
	  "NFSv4 READ", "RFC 8267 section 6.1" },
	{ CHK_PROG_NFS, 4, 38, true, CHK_DDP_WRITE_DATA, CHK_DDP_NONE,
	  "NFSv4 WRITE", "RFC 8267 section 6.1" },
	{ CHK_PROG_NFS, 4, 27, true, CHK_DDP_NONE, CHK_DDP_READLINK_PATH,
	  "NFSv4 READLINK", "RFC 8267 section 6.1" },
	{ CHK_PROG_NFS, 4, 6, true, CHK_DDP_SYMLINK_PATH, CHK_DDP_NONE,
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

/* nfs_opnum4 of the pynfs nfs4.x (RFC 7531, 5662, 7863, 8276 xattrs). */
static const char *const nfs4_op_names[] = {
	[3] = "ACCESS", [4] = "CLOSE", [5] = "COMMIT", [6] = "CREATE",
	[7] = "DELEGPURGE", [8] = "DELEGRETURN", [9] = "GETATTR", [10] = "GETFH",
	[11] = "LINK", [12] = "LOCK", [13] = "LOCKT", [14] = "LOCKU",
	[15] = "LOOKUP", [16] = "LOOKUPP", [17] = "NVERIFY", [18] = "OPEN",
	[19] = "OPENATTR", [20] = "OPEN_CONFIRM", [21] = "OPEN_DOWNGRADE",
	[22] = "PUTFH", [23] = "PUTPUBFH", [24] = "PUTROOTFH", [25] = "READ",
	[26] = "READDIR", [27] = "READLINK", [28] = "REMOVE", [29] = "RENAME",
	[30] = "RENEW", [31] = "RESTOREFH", [32] = "SAVEFH", [33] = "SECINFO",
	[34] = "SETATTR", [35] = "SETCLIENTID", [36] = "SETCLIENTID_CONFIRM",
	[37] = "VERIFY", [38] = "WRITE", [39] = "RELEASE_LOCKOWNER",
	[40] = "BACKCHANNEL_CTL", [41] = "BIND_CONN_TO_SESSION",
	[42] = "EXCHANGE_ID", [43] = "CREATE_SESSION", [44] = "DESTROY_SESSION",
	[45] = "FREE_STATEID", [46] = "GET_DIR_DELEGATION", [47] = "GETDEVICEINFO",
	[48] = "GETDEVICELIST", [49] = "LAYOUTCOMMIT", [50] = "LAYOUTGET",
	[51] = "LAYOUTRETURN", [52] = "SECINFO_NO_NAME", [53] = "SEQUENCE",
	[54] = "SET_SSV", [55] = "TEST_STATEID", [56] = "WANT_DELEGATION",
	[57] = "DESTROY_CLIENTID", [58] = "RECLAIM_COMPLETE", [59] = "ALLOCATE",
	[60] = "COPY", [61] = "COPY_NOTIFY", [62] = "DEALLOCATE",
	[63] = "IO_ADVISE", [64] = "LAYOUTERROR", [65] = "LAYOUTSTATS",
	[66] = "OFFLOAD_CANCEL", [67] = "OFFLOAD_STATUS", [68] = "READ_PLUS",
	[69] = "SEEK", [70] = "WRITE_SAME", [71] = "CLONE", [72] = "GETXATTR",
	[73] = "SETXATTR", [74] = "LISTXATTRS", [75] = "REMOVEXATTR",
};

const char *chk_nfs4_op_name(uint32_t op)
{
	if (op == 10044)
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
