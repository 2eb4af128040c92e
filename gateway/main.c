// SPDX-License-Identifier: MIT
/*
 * This file contains main() of rpcrdma-gw.  It is a placeholder until the
 * gateway path lands (issue "The gateway path"): it reports its version and
 * refuses to run, so nobody mistakes it for a working daemon.
 */
#include <stdio.h>
#include <string.h>

#define GW_VERSION "0.1.0"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("rpcrdma-gw %s\n", GW_VERSION);
		return 0;
	}
	fprintf(stderr, "rpcrdma-gw %s: the gateway path is not built yet\n", GW_VERSION);
	return 1;
}
