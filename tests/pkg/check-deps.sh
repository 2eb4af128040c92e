#!/bin/bash
# Claim: `make deps` (tests/deps.sh) installs its packages with every
# service start denied: while apt-get runs, a policy-rc.d answers 101 ("do
# not run") for starting nfs-kernel-server, rpcbind, krb5-kdc, haproxy and
# prometheus; it is gone after the install, after a failed install too; a
# policy-rc.d the machine already has is left as it is.  And the README
# says what `make deps` installs.
#
# apt-get and dpkg-query are fakes (first in PATH): every package looks
# missing, and the fake apt-get records what the policy answers during the
# install.  Nothing is installed; the policy file is a temporary one
# (DEPS_POLICY_RC).
#
#   tests/pkg/check-deps.sh     exit 0 all good, 1 a check failed, 77 not root
set -u
cd "$(dirname "$0")/../.."
. tests/pkg/lib.sh
pkg_tmp
if [ "$(id -u)" != 0 ]; then
	echo "check-deps: SKIPPED: tests/deps.sh installs as root only"
	exit 77
fi

mkdir -p "$tmp/bin"
cat >"$tmp/bin/dpkg-query" <<'EOF2'
#!/bin/sh
exit 1
EOF2
cat >"$tmp/bin/apt-get" <<'EOF2'
#!/bin/sh
# fake apt-get: for "install", what policy-rc.d answers for each service
[ "$1" = update ] || [ "$2" = update ] && exit 0
for s in nfs-kernel-server nfs-server.service rpcbind krb5-kdc haproxy prometheus; do
	if [ -x "$DEPS_POLICY_RC" ]; then "$DEPS_POLICY_RC" "$s" start; echo "$s $?"; else echo "$s none"; fi
done >>"$FAKE_LOG"
exit "${FAKE_RC:-0}"
EOF2
chmod 0755 "$tmp/bin/dpkg-query" "$tmp/bin/apt-get"

run_deps() {	# FAKE_RC
	: >"$tmp/apt.log"
	PATH=$tmp/bin:$PATH DEPS_POLICY_RC=$tmp/policy-rc.d FAKE_LOG=$tmp/apt.log FAKE_RC=$1 \
		tests/deps.sh packages >"$tmp/deps.out" 2>&1
}

run_deps 0
rc=$?
if [ "$rc" = 0 ] && [ -s "$tmp/apt.log" ] && ! grep -qv ' 101$' "$tmp/apt.log"; then
	ok "during the install every service start is denied (policy-rc.d exit 101): $(tr '\n' ' ' <"$tmp/apt.log")"
else
	bad "during the install (rc=$rc) policy-rc.d answered: $(tr '\n' ' ' <"$tmp/apt.log")"
	sed 's/^/    /' "$tmp/deps.out"
fi
if [ ! -e "$tmp/policy-rc.d" ]; then ok "the policy is removed after the install"
else bad "the policy is still there after the install"; fi

run_deps 100
rc=$?
if [ "$rc" != 0 ] && [ ! -e "$tmp/policy-rc.d" ]; then ok "a failed install (rc=$rc) removes the policy too"
else bad "a failed install: rc=$rc, policy $( [ -e "$tmp/policy-rc.d" ] && echo left || echo removed)"; fi

printf '#!/bin/sh\nexit 0\n' >"$tmp/policy-rc.d"
chmod 0755 "$tmp/policy-rc.d"
run_deps 0
if [ -e "$tmp/policy-rc.d" ] && grep -q 'exit 0' "$tmp/policy-rc.d" && grep -q 'left as it is' "$tmp/deps.out"; then
	ok "a policy-rc.d of the machine's own is left as it is"
else bad "a policy-rc.d of the machine's own was changed or removed"; fi

# The README says what make deps installs and that nothing starts.
sec=$(sed -n '/^## What `make demo` and `make check` do/,/^## /p' README.md)
missing=""
for w in nfs-kernel-server rpcbind krb5-kdc haproxy prometheus linux-image-amd64 qemu-system-x86 policy-rc.d; do
	echo "$sec" | grep -q -- "$w" || missing="$missing $w"
done
if [ -z "$missing" ]; then ok "README.md says what make deps installs, and that services stay stopped"
else bad "README.md's 'What make demo and make check do' does not name:$missing"; fi

pkg_end
