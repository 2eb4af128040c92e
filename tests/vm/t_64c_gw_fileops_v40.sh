#!/bin/bash
# claim: t_64_gw_fileops with vers=4.0: 500-file tree of operations equal to the server and the model after a cold remount, ls -l of 5000 entries, 64 MiB and 8 concurrent writers intact, all through rpcrdma-gw
T64_MIB=64 exec bash "$(dirname "$0")/t_64_gw_fileops.sh" 4.0
