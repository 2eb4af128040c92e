#!/bin/bash
# Claim: every docs/man page formats with no warning from groff or man (as
# lintian runs them), has the sections a reader looks for, and
# rpcrdma-gw.conf(5) documents every key of the key table (config/config_keys.c;
# tests/unit/test_cfg_keys.c holds the page, the sample and docs/configuration.md
# to exactly the table's keys, section by section).
#
#   tests/pkg/check-man.sh      exit 0 all good, 1 a check failed,
#                               2 a tool is missing (apt-get install man-db groff)
set -u
cd "$(dirname "$0")/../.."
for t in groff man; do
	command -v "$t" >/dev/null || { echo "check-man: $t not found (apt-get install man-db groff)"; exit 2; }
done
. tests/pkg/lib.sh

pages="docs/man/rpcrdma-gw.8 docs/man/rpcrdma-gw.conf.5 docs/man/rpcrdma-gwctl.8"
for p in $pages; do
	[ -e "$p" ] || { bad "$p missing"; continue; }
	out=$(groff -ww -man -z "$p" 2>&1)
	if [ -z "$out" ]; then ok "$p: groff -ww clean"; else bad "$p: groff -ww:"; echo "$out" | sed 's/^/    /'; fi
	# The command lintian uses (checks/documentation/manual).
	out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$p" 2>&1 >/dev/null)
	if [ -z "$out" ]; then ok "$p: man --warnings clean"; else bad "$p: man --warnings:"; echo "$out" | sed 's/^/    /'; fi
	need="NAME SYNOPSIS DESCRIPTION FILES \"SEE ALSO\""
	case "$p" in
	*rpcrdma-gw.8) need="$need OPTIONS SIGNALS \"EXIT STATUS\" EXAMPLES" ;;
	*rpcrdma-gwctl.8) need="$need OPTIONS COMMANDS \"EXIT STATUS\" EXAMPLES" ;;
	*.5) need="$need EXAMPLES" ;;
	esac
	eval "set -- $need"
	missing=""
	for s in "$@"; do
		grep -Eq "^\.SH \"?$s\"?\$" "$p" || missing="$missing [$s]"
	done
	if [ -z "$missing" ]; then ok "$p: sections present"; else bad "$p: sections missing:$missing"; fi
done

# Every key of the table appears as a .BI key in the conf page.
conf=docs/man/rpcrdma-gw.conf.5
table=config/config_keys.c
if [ -e "$table" ] && [ -e "$conf" ]; then
	keys=$(grep -o 'KEY([A-Z]*, "[a-z_]*"' "$table" | sed 's/.*"\(.*\)"/\1/' | sort -u)
	missing=""
	for k in $keys; do
		grep -Eq "^\.BI $k " "$conf" || missing="$missing $k"
	done
	if [ -z "$keys" ]; then
		bad "no keys found in $table (table changed shape? update this test)"
	elif [ -z "$missing" ]; then
		ok "$conf documents all $(echo "$keys" | wc -w) keys of $table"
	else
		bad "$conf does not document:$missing"
	fi
	# ... and the sample, when it exists, uses only documented keys.
	if [ -e config/rpcrdma-gw.conf ]; then
		missing=""
		for k in $(sed -n 's/^[;#]*[[:space:]]*\([a-z_]*\)[[:space:]]*=.*/\1/p' config/rpcrdma-gw.conf | sort -u); do
			grep -Eq "^\.BI $k " "$conf" || missing="$missing $k"
		done
		if [ -z "$missing" ]; then ok "config/rpcrdma-gw.conf: every key is in $conf"; else bad "config/rpcrdma-gw.conf keys not in $conf:$missing"; fi
	fi
fi

pkg_end
