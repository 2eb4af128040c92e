#!/bin/bash
# Claim: systemd/*.service and *.socket pass `systemd-analyze verify`, keep
# the properties the daemon and operators rely on (Type=notify, watchdog,
# config check before start and reload, memlock, /dev/infiniband reachable),
# and score at most MAX_EXPOSURE in `systemd-analyze security --offline`.
#
#   tests/pkg/check-systemd.sh        exit 0 all good, 1 a check failed,
#                                     2 a tool is missing (apt-get install systemd man-db)
#
# verify needs the ExecStart binary and the Documentation= man pages to
# exist, so the units are copied to a temp dir with /usr/sbin/rpcrdma-gw
# pointed at a stub there, and MANPATH points at docs/man laid out as
# man5/ man8/.  Nothing is written into the source tree.
set -u
cd "$(dirname "$0")/../.."
MAX_EXPOSURE=${MAX_EXPOSURE:-3.0}
SBIN=/usr/sbin/rpcrdma-gw

for t in systemd-analyze man; do
	command -v "$t" >/dev/null || { echo "check-systemd: $t not found (apt-get install systemd man-db)"; exit 2; }
done

. tests/pkg/lib.sh
pkg_tmp
mkdir -p "$tmp/units" "$tmp/sbin" "$tmp/man"
printf '#!/bin/sh\nexit 0\n' >"$tmp/sbin/rpcrdma-gw"
chmod 0755 "$tmp/sbin/rpcrdma-gw"
for m in docs/man/*.[1-9]; do
	[ -e "$m" ] || continue
	mkdir -p "$tmp/man/man${m##*.}"
	cp "$m" "$tmp/man/man${m##*.}/"
done

units=()
for u in systemd/*.service systemd/*.socket; do
	[ -e "$u" ] || continue
	sed "s|$SBIN|$tmp/sbin/rpcrdma-gw|g" "$u" >"$tmp/units/$(basename "$u")"
	units+=("$tmp/units/$(basename "$u")")
done
[ -e systemd/rpcrdma-gw.service ] || bad "systemd/rpcrdma-gw.service missing"
[ -e systemd/rpcrdma-gw.socket ] || bad "systemd/rpcrdma-gw.socket missing"

# 1. systemd-analyze verify, man pages included.
if [ ${#units[@]} -gt 0 ]; then
	out=$(MANPATH="$tmp/man" SYSTEMD_LOG_COLOR=0 systemd-analyze verify --man=yes "${units[@]}" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ -z "$out" ]; then
		ok "systemd-analyze verify ${units[*]##*/}"
	else
		bad "systemd-analyze verify (rc=$rc):"
		echo "${out//$tmp\/units\//systemd/}" | sed 's/^/    /'
	fi
fi

# 2. Properties that other parts of the project depend on.
svc=systemd/rpcrdma-gw.service
sock=systemd/rpcrdma-gw.socket
want() {	# FILE REGEX WHY
	if grep -Eq "$2" "$1" 2>/dev/null; then ok "$(basename "$1"): $3"; else bad "$(basename "$1"): $3 (no line matching /$2/)"; fi
}
refuse() {	# FILE REGEX WHY
	if grep -Eq "$2" "$1" 2>/dev/null; then bad "$(basename "$1"): $3 (line matching /$2/)"; else ok "$(basename "$1"): $3"; fi
}
want "$svc" '^Type=notify$' "Type=notify"
want "$svc" '^WatchdogSec=[1-9]' "WatchdogSec= set"
want "$svc" "^ExecStartPre=$SBIN --check-config /etc/rpcrdma-gw/rpcrdma-gw.conf$" "config checked before start"
want "$svc" "^ExecStart=$SBIN -c /etc/rpcrdma-gw/rpcrdma-gw.conf --foreground$" "ExecStart in the foreground"
want "$svc" '^ExecReload=/bin/kill -HUP \$MAINPID$' "reload is SIGHUP"
want "$svc" '^LimitMEMLOCK=infinity$' "LimitMEMLOCK=infinity (registered memory)"
want "$svc" '^Documentation=man:rpcrdma-gw\(8\)' "Documentation=man:rpcrdma-gw(8)"
want "$svc" '^After=.*network-online\.target' "after network-online.target"
want "$svc" '^After=.*rdma-hw\.target' "after rdma-hw.target"
want "$svc" '^Wants=.*network-online\.target' "wants network-online.target"
want "$svc" '^DevicePolicy=closed$' "DevicePolicy=closed"
want "$svc" '^DeviceAllow=char-infiniband_verbs rw$' "uverbs devices allowed"
want "$svc" '^DeviceAllow=/dev/infiniband/rdma_cm rw$' "rdma_cm allowed"
refuse "$svc" '^PrivateDevices=(yes|true|on|1)' "no PrivateDevices (would hide /dev/infiniband)"
want "$svc" '^ProtectSystem=strict$' "ProtectSystem=strict"
want "$svc" '^ProtectHome=(yes|true)$' "ProtectHome"
want "$svc" '^NoNewPrivileges=(yes|true)$' "NoNewPrivileges"
want "$svc" '^CapabilityBoundingSet=CAP_NET_BIND_SERVICE$' "capabilities: CAP_NET_BIND_SERVICE only"
for af in AF_INET AF_INET6 AF_UNIX AF_NETLINK AF_IB; do
	want "$svc" "^RestrictAddressFamilies=.*\\b$af\\b" "address family $af allowed"
done
want "$sock" '^ListenStream=2049$' "socket listens on 2049"
want "$sock" '^BindIPv6Only=both$' "socket takes IPv4 and IPv6"
want "$sock" '^Service=rpcrdma-gw\.service$' "socket activates rpcrdma-gw.service"

# 3. Exposure score (offline: no running systemd needed).
if [ -e "$tmp/units/rpcrdma-gw.service" ]; then
	out=$(SYSTEMD_LOG_COLOR=0 systemd-analyze security --offline=true --no-pager \
		"$tmp/units/rpcrdma-gw.service" 2>&1)
	score=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	if [ -z "$score" ]; then
		bad "systemd-analyze security: no score"; echo "$out" | tail -5 | sed 's/^/    /'
	elif awk -v s="$score" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(s <= m) }'; then
		ok "systemd-analyze security: exposure $score <= $MAX_EXPOSURE"
	else
		bad "systemd-analyze security: exposure $score > $MAX_EXPOSURE"
		echo "$out" | grep '✗' | sed 's/^/    /'
	fi
fi

pkg_end
