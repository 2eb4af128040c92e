// SPDX-License-Identifier: MIT
/*
 * This file contains the names of the RPC programs and procedures the
 * gateway carries, as the operations interfaces print them (ops.h:
 * `/metrics` labels, `rpcrdma-gwctl stats`): the programs' rpcbind names
 * (rpc(5)) and the procedures' names of their specs (RFC 1813, RFC 7530,
 * nlm4.x, nsm.x, the MOUNT and NFS_ACL protocols), lower case.
 */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ops.h"

static const char *const gw_nfs3_procs[] = {
	"null", "getattr", "setattr", "lookup", "access", "readlink", "read", "write", "create",
	"mkdir", "symlink", "mknod", "remove", "rmdir", "rename", "link", "readdir", "readdirplus",
	"fsstat", "fsinfo", "pathconf", "commit",
};
static const char *const gw_nfs4_procs[] = { "null", "compound" };
static const char *const gw_mnt3_procs[] = { "null", "mnt", "dump", "umnt", "umntall", "export" };
static const char *const gw_acl3_procs[] = { "null", "getacl", "setacl" };
/* NLM v1/v3/v4 share the numbering (17-19 unused; 20-23 from v3 on). */
static const char *const gw_nlm_procs[] = {
	"null", "test", "lock", "cancel", "unlock", "granted", "test_msg", "lock_msg",
	"cancel_msg", "unlock_msg", "granted_msg", "test_res", "lock_res", "cancel_res",
	"unlock_res", "granted_res", NULL, NULL, NULL, NULL, "share", "unshare", "nm_lock",
	"free_all",
};
static const char *const gw_nsm_procs[] = { "null", "stat", "mon", "unmon", "unmon_all",
					    "simu_crash", "notify" };

const char *gw_prog_name(uint32_t prog)
{
	switch (prog) {
	case CFG_PROG_NFS: return "nfs";
	case CFG_PROG_MOUNT: return "mount";
	case CFG_PROG_NLM: return "nlockmgr";
	case CFG_PROG_NSM: return "status";
	case CFG_PROG_NFS_ACL: return "nfs_acl";
	case 100000: return "rpcbind";
	default: return NULL;
	}
}

/* Name of a procedure, or NULL (the caller prints the number). */
const char *gw_proc_name(uint32_t prog, uint32_t vers, uint32_t proc)
{
#define GW_PICK(t) (proc < sizeof(t) / sizeof(t[0]) ? t[proc] : NULL)
	if (prog == CFG_PROG_NFS && (vers == 2 || vers == 3))
		return vers == 3 ? GW_PICK(gw_nfs3_procs) : (proc == 0 ? "null" : NULL);
	if (prog == CFG_PROG_NFS && vers == 4)
		return GW_PICK(gw_nfs4_procs);
	if (prog == CFG_PROG_MOUNT && vers == 3)
		return GW_PICK(gw_mnt3_procs);
	if (prog == CFG_PROG_NFS_ACL && vers == 3)
		return GW_PICK(gw_acl3_procs);
	if (prog == CFG_PROG_NLM && (vers == 3 || vers == 4 || (vers == 1 && proc <= 16)))
		return GW_PICK(gw_nlm_procs);
	if (prog == CFG_PROG_NSM && vers == 1)
		return GW_PICK(gw_nsm_procs);
	return proc == 0 ? "null" : NULL;
#undef GW_PICK
}
