// SPDX-License-Identifier: MIT
/*
 * gw-rpcclient: an independent ONC RPC peer for the gateway, built on
 * libtirpc (not on the gateway's own XDR code).
 *
 *   gw-rpcclient HOST PORT EXPORT
 *
 * Over one TCP connection each (clnttcp_create with the port given, so no
 * rpcbind is asked: the gateway has none), it calls
 *   1. NFSv3 NULL,
 *   2. MOUNTv3 MNT EXPORT (AUTH_UNIX) -> the export's root file handle,
 *   3. NFSv3 GETATTR on that handle (AUTH_UNIX) -> must be NFS3_OK, a directory,
 *   4. MOUNTv3 UMNT EXPORT.
 * and prints one line per call.  Exit status 0 only if every call succeeded.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rpc/rpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NFS_PROG 100003
#define MOUNT_PROG 100005
#define FH3_MAX 64

struct fh3 {
	u_int len;
	char data[FH3_MAX];
};

struct mnt_res {
	uint32_t status;
	struct fh3 fh;
};

struct attr_res {
	uint32_t status;
	uint32_t type, mode, nlink, uid, gid;
	uint64_t size, fileid;
};

/* xdr_void is declared without arguments, which xdrproc_t casts refuse. */
static bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static bool_t xdr_path(XDR *x, char **p) { return xdr_string(x, p, 1024); }

static bool_t xdr_fh3(XDR *x, struct fh3 *fh)
{
	char *p = fh->data;
	return xdr_bytes(x, &p, &fh->len, FH3_MAX);
}

/* mountres3: status, then on success fhandle3 and auth_flavors<> (skipped). */
static bool_t xdr_mnt_res(XDR *x, struct mnt_res *r)
{
	uint32_t n, flavor;

	if (!xdr_uint32_t(x, &r->status))
		return FALSE;
	if (r->status != 0)
		return TRUE;
	if (!xdr_fh3(x, &r->fh) || !xdr_uint32_t(x, &n) || n > 64)
		return FALSE;
	while (n--)
		if (!xdr_uint32_t(x, &flavor))
			return FALSE;
	return TRUE;
}

/* GETATTR3res: nfsstat3, then on NFS3_OK fattr3 (21 words). */
static bool_t xdr_attr_res(XDR *x, struct attr_res *r)
{
	uint32_t skip;
	uint64_t used, rdev, fsid;
	int i;

	if (!xdr_uint32_t(x, &r->status))
		return FALSE;
	if (r->status != 0)
		return TRUE;
	if (!xdr_uint32_t(x, &r->type) || !xdr_uint32_t(x, &r->mode) ||
	    !xdr_uint32_t(x, &r->nlink) || !xdr_uint32_t(x, &r->uid) ||
	    !xdr_uint32_t(x, &r->gid) || !xdr_uint64_t(x, &r->size) ||
	    !xdr_uint64_t(x, &used) || !xdr_uint64_t(x, &rdev) ||
	    !xdr_uint64_t(x, &fsid) || !xdr_uint64_t(x, &r->fileid))
		return FALSE;
	for (i = 0; i < 6; i++)	/* atime, mtime, ctime */
		if (!xdr_uint32_t(x, &skip))
			return FALSE;
	return TRUE;
}

static CLIENT *connect_prog(const char *host, int port, unsigned long prog, unsigned long vers)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = RPC_ANYSOCK;
	CLIENT *c;

	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", host);
		return NULL;
	}
	c = clnttcp_create(&sin, prog, vers, &fd, 0, 0);
	if (!c) {
		clnt_pcreateerror("clnttcp_create");
		return NULL;
	}
	c->cl_auth = authunix_create_default();
	return c;
}

int main(int argc, char **argv)
{
	struct timeval tmo = { 30, 0 };
	struct mnt_res mr;
	struct attr_res ar;
	enum clnt_stat st;
	CLIENT *nfs, *mnt;
	char *path;
	int port;

	if (argc != 4) {
		fprintf(stderr, "usage: %s HOST PORT EXPORT\n", argv[0]);
		return 2;
	}
	port = atoi(argv[2]);
	path = argv[3];

	nfs = connect_prog(argv[1], port, NFS_PROG, 3);
	if (!nfs)
		return 1;
	st = clnt_call(nfs, 0, (xdrproc_t)xdr_nothing, NULL, (xdrproc_t)xdr_nothing, NULL, tmo);
	if (st != RPC_SUCCESS) {
		clnt_perror(nfs, "NFSv3 NULL");
		return 1;
	}
	printf("NFSv3 NULL: ok\n");

	mnt = connect_prog(argv[1], port, MOUNT_PROG, 3);
	if (!mnt)
		return 1;
	memset(&mr, 0, sizeof(mr));
	st = clnt_call(mnt, 1, (xdrproc_t)xdr_path, (char *)&path, (xdrproc_t)xdr_mnt_res,
		       (char *)&mr, tmo);
	if (st != RPC_SUCCESS) {
		clnt_perror(mnt, "MOUNTv3 MNT");
		return 1;
	}
	if (mr.status != 0 || mr.fh.len == 0) {
		printf("MOUNTv3 MNT %s: status %u\n", path, mr.status);
		return 1;
	}
	printf("MOUNTv3 MNT %s: ok, file handle of %u bytes\n", path, mr.fh.len);

	memset(&ar, 0, sizeof(ar));
	st = clnt_call(nfs, 1, (xdrproc_t)xdr_fh3, (char *)&mr.fh, (xdrproc_t)xdr_attr_res,
		       (char *)&ar, tmo);
	if (st != RPC_SUCCESS) {
		clnt_perror(nfs, "NFSv3 GETATTR");
		return 1;
	}
	if (ar.status != 0 || ar.type != 2 /* NF3DIR */) {
		printf("NFSv3 GETATTR: status %u type %u\n", ar.status, ar.type);
		return 1;
	}
	printf("NFSv3 GETATTR: ok, directory, mode %04o, nlink %u, fileid %llu\n", ar.mode & 07777,
	       ar.nlink, (unsigned long long)ar.fileid);

	st = clnt_call(mnt, 3, (xdrproc_t)xdr_path, (char *)&path, (xdrproc_t)xdr_nothing, NULL, tmo);
	if (st != RPC_SUCCESS) {
		clnt_perror(mnt, "MOUNTv3 UMNT");
		return 1;
	}
	printf("MOUNTv3 UMNT %s: ok\n", path);
	auth_destroy(nfs->cl_auth);
	auth_destroy(mnt->cl_auth);
	clnt_destroy(nfs);
	clnt_destroy(mnt);
	return 0;
}
