#!/bin/sh
# SPDX-License-Identifier: MIT
#
# This file contains `make deps`: it installs every Debian 12 package that
# building, testing, fuzzing and the VM tier need, then fetches the second
# reference kernel of the VM tier (Debian's 6.12 from bookworm-backports)
# into tests/vm/kernels/VERSION/ (VM_KERNEL=6.12 boots it).  Idempotent:
# does nothing when all packages and the kernel are present.
#
# The kernel is fetched without touching the machine's apt configuration:
# a temporary sources list (the machine's own Debian mirror, suite
# CODENAME-backports), lists and cache directory, `apt-get download` and
# `dpkg -x`; nothing is installed.  depmod then builds the module tree's
# index, which the package's postinst would have made.
#
# No service starts: several packages are test beds that would start on a
# systemd host (nfs-kernel-server on 2049, rpcbind on 111, krb5-kdc,
# haproxy, prometheus on 9090).  While apt-get installs, a policy-rc.d that
# denies every start (exit 101, read by invoke-rc.d and deb-systemd-invoke)
# is in place; it is removed after, and one the machine already has is left
# as it is.  The tests start what they need in their own guests and
# network namespaces.
#
#   tests/deps.sh [packages|kernel]     both by default
#   DEPS_POLICY_RC=PATH                 where policy-rc.d goes (a test's own)
set -eu
cd "$(dirname "$0")/.."
PKGS="build-essential pkg-config clang libclang-rt-14-dev
 libibverbs-dev librdmacm-dev libevent-dev libtirpc-dev libssl-dev libsystemd-dev libinih-dev
 libjson-c-dev
 libcmocka-dev
 linux-image-amd64 qemu-system-x86 busybox-static kmod cpio iproute2 procps xz-utils zstd
 rdma-core ibverbs-providers ibverbs-utils rdmacm-utils
 nfs-kernel-server nfs-common rpcbind libnfs-utils haproxy fio
 krb5-kdc krb5-admin-server krb5-user
 debhelper dpkg-dev lintian systemd man-db groff-base
 prometheus gnuplot-nox"
KSERIES=6.12
KCACHE=${VM_KERNEL_CACHE:-tests/vm/kernels}

install_packages() {
	missing=""
	for p in $PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
	done
	if [ -z "$missing" ]; then
		echo "deps: all packages present"
		return 0
	fi
	echo "deps: installing:$missing"
	if [ "$(id -u)" != 0 ]; then
		echo "deps: must run as root (apt-get)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	deny_starts
	rc=0
	if apt-get update -q; then
		# shellcheck disable=SC2086
		apt-get install -y -q --no-install-recommends $missing || rc=$?
	else
		rc=$?
	fi
	allow_starts
	return $rc
}

# A policy-rc.d that denies every start during the install (policy-rc.d's
# interface: /usr/share/doc/init-system-helpers/README.policy-rc.d).
POLICY_RC=${DEPS_POLICY_RC:-/usr/sbin/policy-rc.d}
policy_ours=""
deny_starts() {
	if [ -e "$POLICY_RC" ]; then
		echo "deps: $POLICY_RC exists: left as it is (it decides which services start)"
		return 0
	fi
	printf '#!/bin/sh\n# make deps (tests/deps.sh): no service starts while it installs\nexit 101\n' \
		>"$POLICY_RC"
	chmod 0755 "$POLICY_RC"
	policy_ours=1
	trap 'allow_starts' EXIT
	trap 'allow_starts; exit 130' INT TERM
	echo "deps: services stay stopped during the install ($POLICY_RC denies starts)"
}
allow_starts() {
	[ -z "$policy_ours" ] || rm -f "$POLICY_RC"
	policy_ours=""
}

# Prints "URI KEYRING" of the machine's own Debian mirror: the first "deb"
# entry for suite $1 in the one-line (*.list) or deb822 (*.sources) files;
# KEYRING is its Signed-By file, or "-" when it names none.
debian_mirror() {
	{
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -r "$f" ] || continue
			sed -n 's/^[[:space:]]*deb[[:space:]]\+//p' "$f" | awk -v s="$1" '{
				key = "-"
				if ($1 ~ /^\[/) {
					for (i = 1; i <= NF && $i !~ /^http|^file:|^ftp:/; i++)
						if ($i ~ /signed-by=/) { key = $i; sub(/.*signed-by=/, "", key); sub(/\]$/, "", key) }
					uri = $i; suite = $(i + 1)
				} else { uri = $1; suite = $2 }
				if (suite == s) print uri, key
			}'
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -r "$f" ] || continue
			awk -v s="$1" 'function flush() {
					if (deb && uri != "" && (" " suites " ") ~ (" " s " ")) print uri, key
					deb = 0; uri = ""; suites = ""; key = "-"
				}
				BEGIN { key = "-" }
				/^[[:space:]]*$/ { flush(); next }
				/^Types:/ { deb = (" " $0 " ") ~ / deb / }
				/^URIs:/ { uri = $2 }
				/^Suites:/ { $1 = ""; suites = $0 }
				/^Signed-By:[[:space:]]*\// { key = $2 }
				END { flush() }' "$f"
		done
	} | head -1
}

# The newest VERSION in $KCACHE of the $KSERIES series with its image and
# module index, if any.
cached_kernel() {
	for k in "$KCACHE"/*/boot/vmlinuz-"$KSERIES".*; do
		[ -e "$k" ] || continue
		v=${k##*/vmlinuz-}
		[ -e "$KCACHE/$v/lib/modules/$v/modules.dep" ] && echo "$v"
	done | sort -V | tail -1
}

fetch_kernel() {
	v=$(cached_kernel)
	if [ -n "$v" ]; then
		echo "deps: kernel $v present in $KCACHE/$v"
		return 0
	fi
	# shellcheck disable=SC1091 # the machine's own release file
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || { echo "deps: no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }
	# shellcheck disable=SC2046 # "URI KEYRING": two words
	set -- $(debian_mirror "$codename")
	[ $# = 2 ] || { echo "deps: no 'deb' entry for suite $codename in /etc/apt/sources.list(.d)" >&2; exit 1; }
	uri=$1 key=$2
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
	opt=""
	[ "$key" = - ] || opt="[signed-by=$key] "
	echo "deb $opt$uri $codename-backports main" >"$tmp/sources.list"
	echo "deps: fetching the $KSERIES kernel from $uri $codename-backports (apt sources untouched)"
	set -- -q -o "Dir::Etc::sourcelist=$tmp/sources.list" -o Dir::Etc::sourceparts=- \
		-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o APT::Sandbox::User=root
	apt-get "$@" update
	# The signed image package, e.g. linux-image-6.12.95+deb12-amd64 (not
	# -unsigned, not -dbg); the newest of the series.
	pkg=$(apt-cache "$@" pkgnames "linux-image-$KSERIES." |
		grep -E "^linux-image-$(echo "$KSERIES" | sed 's/\./\\./g')\.[0-9]+\+deb[0-9]+-amd64\$" |
		sort -V | tail -1)
	[ -n "$pkg" ] || { echo "deps: no linux-image-$KSERIES.*-amd64 in $codename-backports" >&2; exit 1; }
	v=${pkg#linux-image-}
	(cd "$tmp" && apt-get "$@" download "$pkg")
	mkdir -p "$KCACHE"
	rm -rf "$KCACHE/$v.part"
	dpkg -x "$tmp"/"$pkg"_*.deb "$KCACHE/$v.part"
	depmod -b "$KCACHE/$v.part" "$v"
	mv "$KCACHE/$v.part" "$KCACHE/$v"
	echo "deps: kernel $v unpacked into $KCACHE/$v"
}

case "${1:-all}" in
packages) install_packages ;;
kernel) fetch_kernel ;;
all) install_packages; fetch_kernel ;;
*) echo "usage: $0 [packages|kernel]" >&2; exit 2 ;;
esac
