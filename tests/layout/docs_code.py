#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Docs against code: what the operator documents names only what the code
has, and what the code has is documented (the layout tier of make check).

  docs_code.py keys    config keys: every `key = value`, and every snake_case
                       word set as code (backticks in Markdown, bold in a man
                       page) in README.md, docs/operations.md,
                       docs/configuration.md, the man pages and the sample
                       config, is a key of config/config_keys.c, a metric or
                       a name of the code (or a word of another program,
                       listed below); a metric name rpcrdma_gw_* must be one
                       gateway/metrics.c exports.  The other way round, every key in the
                       documents: tests/unit/test_cfg_keys.c.
  docs_code.py gwctl   rpcrdma-gwctl: the commands the control socket accepts
                       (gateway/control.c) are exactly those of the usage text
                       (tools/rpcrdma-gwctl.c), of rpcrdma-gwctl(8) COMMANDS
                       and of docs/operations.md section 4.2; its options
                       (getopt_long) exactly those of the usage text and the
                       man page's OPTIONS and of the bash completion
                       (tools/rpcrdma-gwctl.bash-completion, which also
                       completes every command); the answer to `help` names every
                       command; and every `rpcrdma-gwctl WORD` or
                       --option written anywhere in those documents exists.
  docs_code.py daemon  rpcrdma-gw's options: the same in getopt_long, --help,
                       rpcrdma-gw(8) OPTIONS and docs/configuration.md's
                       Command line; and FACTS: statements of a feature's
                       absence that the code contradicts appear in no
                       document (defaults: tests/unit/test_cfg_keys.c t07).
  docs_code.py creds   TLS keys under the packaged unit: its LoadCredential=
                       names, each put into /etc/credstore/ and named as
                       $CREDENTIALS_DIRECTORY/NAME by docs/operations.md 2.7;
                       no key installed elsewhere there.
  docs_code.py readme  README.md: the opening commands, what the product is
                       (a Debian package), then an install section (package,
                       configuration the unit reads, systemctl, first mount)
                       as the first section, before the feature list and
                       the developer flow.

Each prints what disagrees and exits 1, or one summary line and exits 0.
"""
import os
import re
import sys

top = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
os.chdir(top)

DOCS_MD = ["README.md", "docs/operations.md", "docs/configuration.md"]
MANS = ["docs/man/rpcrdma-gw.8", "docs/man/rpcrdma-gw.conf.5", "docs/man/rpcrdma-gwctl.8"]
SAMPLE = "config/rpcrdma-gw.conf"
CODE_DIRS = ["chunking", "config", "backend-rdma", "frontend-tcp", "gateway", "tools", "tests",
             "systemd", "debian"]
# snake_case words of other programs that the documents name on purpose.
FOREIGN = {
    "root_squash", "no_root_squash", "all_squash",   # exports(5)
    "max_requests",                                   # nfsd's credit limit (/proc/fs/nfsd)
    "rdma_rxe", "rnr_nak_retry_err", "infiniband_verbs",   # kernel module, counter, device group
    "ibv_devices", "ibv_devinfo",                     # ibverbs-utils
    "sd_notify", "sd_listen_fds",                     # sd-daemon(3)
    "rpcb_set",                                       # rpcbind(3)
    "ibv_get_device_list",                            # ibverbs(3)
}


def read(p):
    with open(p, encoding="utf-8") as f:
        text = f.read()
    return text.replace("\\-", "-") if p.startswith("docs/man/") else text


def metric_names():
    """The metric names gateway/metrics.c exports (tests/pkg/monitoring-check.py)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("mc", "tests/pkg/monitoring-check.py")
    mc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mc)
    have, pending = mc.exported()
    base = lambda names: names | {n[:-7] for n in names if n.endswith("_bucket")}
    return base(have), base(pending)


def config_keys():
    """{name: set of sections} from the key table."""
    keys = {}
    for sec, name in re.findall(r'KEY\((GATEWAY|BACKEND|ROUTE), "([a-z0-9_]+)"', read("config/config_keys.c")):
        keys.setdefault(name, set()).add(sec.lower())
    if len(keys) < 20 or "held_calls" not in keys:
        sys.exit("docs_code: keys of config/config_keys.c not found: update this script to the table")
    return keys


def code_words():
    """Every identifier-like word of the code, tests and units."""
    words = set()
    for d in CODE_DIRS:
        for root, _, files in os.walk(d):
            for f in files:
                if f.endswith((".c", ".h", ".sh", ".py", ".service", ".socket", ".yml")) or f == "rules":
                    words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", read(os.path.join(root, f))))
    return words


def code_tokens(path):
    """(line, word) of the words a document sets as code."""
    out = []
    for no, line in enumerate(read(path).splitlines(), 1):
        if path.endswith(".md"):
            spans = re.findall(r"`([^`]+)`", line)
        elif path == SAMPLE:
            spans = [line]
        else:
            spans = re.findall(r"\\fB(.*?)\\f[RPI]", line)
            m = re.match(r"\.B[IR]? (.*)", line)
            if m:
                spans.append(m.group(1).split('"')[0])
        for s in spans:
            out += [(no, w) for w in re.findall(r"(?<![A-Za-z0-9_./:-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![A-Za-z0-9_(/-])", s)]
    return out


def assigned(path):
    """(line, key) of every `key = value` a document shows as code, at the
    start of a backtick span or of a line of a fenced block (Markdown) or
    an example block (man page), or of a line of the sample."""
    out, block = [], False
    for no, line in enumerate(read(path).splitlines(), 1):
        if line.startswith(("```", ".EX", ".EE", ".nf", ".fi")):
            block = line.startswith(("```", ".EX", ".nf")) and not (block and line.startswith("```"))
            continue
        if path == SAMPLE or block:
            spans = [line]
        elif path.endswith(".md"):
            spans = re.findall(r"`([^`]+)`", line)
        else:
            spans = []
        for sp in spans:
            for m in re.finditer(r"^\s*[;#]?\s*([a-z][a-z0-9_]*) = ", sp):
                out.append((no, m.group(1)))
    return out


def check_keys():
    (keys, words), bad, n, notes = (config_keys(), code_words()), [], 0, set()
    metrics, pending = metric_names()
    for p in DOCS_MD + MANS + [SAMPLE]:
        for no, w in code_tokens(p):
            n += 1
            if w.startswith("rpcrdma_gw_"):
                if w in pending and w not in metrics:
                    notes.add(w)
                elif w not in metrics:
                    bad.append(f"{p}:{no}: metric `{w}` is not exported by gateway/metrics.c")
            elif w not in keys and w not in words and w not in FOREIGN:
                bad.append(f"{p}:{no}: `{w}` is no config key (config/config_keys.c) and no name of the code")
        for no, k in assigned(p):
            n += 1
            if k not in keys:
                bad.append(f"{p}:{no}: `{k} = ...`: no such config key")
    for w in sorted(notes):
        print(f"note: {w} is not in gateway/metrics.c yet (announced by another change, "
              "tests/pkg/monitoring-check.py PENDING)")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"keys: {n} key-shaped mentions in {len(DOCS_MD + MANS) + 1} documents, each a key or a name of the code")
    return 0


def section(text, start, stop):
    i = text.find(start)
    if i < 0:
        return ""
    j = text.find(stop, i + len(start))
    return text[i:j if j >= 0 else len(text)]


def gwctl_facts():
    ctl = read("gateway/control.c")
    # Dispatch: `!strcmp(cmd, "NAME")`; "json" is the --json prefix, not a command.
    server = set(re.findall(r'!strcmp\(cmd, "([a-z-]+)"\)', ctl)) - {"json"}
    src = read("tools/rpcrdma-gwctl.c")
    usage = section(src, '"commands:\\n"', '"\\n"')
    ucmds = set(re.findall(r'"  ([a-z][a-z-]*)[ \\]', usage))
    # Options are listed under the commands they belong to or in the block after them.
    uopts = set(re.findall(r'(--[a-z-]+|(?<![-\w])-[a-z])\b', section(src, '"commands:\\n"', "}")))
    longs = {"--" + o for o in re.findall(r'\{ "([a-z-]+)", (?:no|required|optional)_argument', src)}
    shorts = {"-" + c for c in re.sub(r"[^a-zA-Z]", "", re.search(r'getopt_long\(argc, argv, "([^"]*)"', src).group(1))}
    man = read("docs/man/rpcrdma-gwctl.8")
    mcmds = set()
    for blk in section(man, ".SH COMMANDS", ".SH EXIT").split(".TP\n")[1:]:
        m = re.match(r"\.B[IR]? (\S+)", blk)
        if m:
            mcmds.add(m.group(1).replace("\\-", "-").strip('"'))
    mopts = set()
    for blk in section(man, ".SH OPTIONS", ".SH COMMANDS").split(".TP\n")[1:]:
        mopts |= set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", blk.splitlines()[0]))
    ops = section(read("docs/operations.md"), "### 4.2 Control", "\n### ")
    ocmds = {c for c in server if re.search(r"`[^`]*(?<![\w-])" + re.escape(c) + r"(?![\w-])[^`]*`", ops)}
    helped = set(re.findall(r"[a-z][a-z-]*", " ".join(re.findall(
        r'"([^"]*)"', section(ctl, '!strcmp(cmd, "help")', "} else")))))
    return server, ucmds, uopts, longs | shorts, mcmds, mopts, ocmds, helped


def check_gwctl():
    server, ucmds, uopts, opts, mcmds, mopts, ocmds, helped = gwctl_facts()
    bad = []
    if len(server) < 5 or "status" not in server:
        sys.exit("docs_code: the commands of gateway/control.c were not found: update this script")

    def same(what, have, want, where):
        for c in sorted(want - have):
            bad.append(f"{where}: {what} '{c}' is missing")
        for c in sorted(have - want):
            bad.append(f"{where}: {what} '{c}' does not exist")
    same("command", ucmds, server, "tools/rpcrdma-gwctl.c usage text")
    same("command", mcmds, server, "docs/man/rpcrdma-gwctl.8 COMMANDS")
    for c in sorted(server - ocmds):
        bad.append(f"docs/operations.md 4.2: command '{c}' is not described")
    for c in sorted(server - helped - {"help"}):
        bad.append(f"gateway/control.c: the answer to help lacks '{c}'")
    comp = read("tools/rpcrdma-gwctl.bash-completion") if os.path.exists(
        "tools/rpcrdma-gwctl.bash-completion") else ""
    if not comp:
        bad.append("tools/rpcrdma-gwctl.bash-completion: missing (bash completion of the CLI)")
    else:
        m = re.search(r'local cmds="([^"]*)"', comp)
        same("command", set(m.group(1).split()) if m else set(), server,
             "tools/rpcrdma-gwctl.bash-completion cmds")
        copts = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", " ".join(
            re.findall(r'(?:opts=|-W )"([^"$]*)"', comp))))
        same("option", copts, opts, "tools/rpcrdma-gwctl.bash-completion")
    same("option", uopts, opts, "tools/rpcrdma-gwctl.c usage text")
    same("option", mopts, opts, "docs/man/rpcrdma-gwctl.8 OPTIONS")
    # Every use written in the documents: rpcrdma-gwctl [OPTIONS] WORD.
    n = 0
    for p in DOCS_MD + MANS:
        for no, line in enumerate(read(p).splitlines(), 1):
            for m in re.finditer(r"rpcrdma-gwctl((?: +(?:--?[a-z-]+(?: [A-Z/][A-Za-z/._-]*)?))*) +([a-z][a-z|-]*)", line):
                for o in re.findall(r"--?[a-z-]+", m.group(1)):
                    n += 1
                    if o not in opts:
                        bad.append(f"{p}:{no}: rpcrdma-gwctl {o}: no such option")
                for w in m.group(2).split("|"):
                    n += 1
                    if w and w not in server:
                        bad.append(f"{p}:{no}: rpcrdma-gwctl {w}: no such command")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"gwctl: {len(server)} commands and {len(opts)} options, the same in code, usage, man page "
          f"and operations.md; {n} uses in the documents exist")
    return 0


def check_readme():
    """README.md opens with `make demo` and `make check`, then has an
    "Install on a real host" section before the developer flow that takes
    an operator from the package to a first mount, with the configuration
    file the packaged unit reads."""
    text, bad = read("README.md"), []
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    first = [ln.split("#")[0].strip() for ln in (blocks[0] if blocks else "").splitlines()]
    if first != ["make demo", "make check"]:
        bad.append(f"README.md: the first block is {first}, not make demo, make check")
    i, j = text.find("\n## Install on a real host\n"), text.find("\n## What `make demo`")
    if i < 0 or j < 0 or not text.find("```") < i < j:
        bad.append("README.md: no '## Install on a real host' between the opening commands "
                   "and '## What `make demo` and `make check` do'")
    # What the product is, then how to install it, before the long feature list.
    first = re.search(r"^## .*$", text, re.M)
    if first and first.group(0) != "## Install on a real host":
        bad.append(f"README.md: the first section is '{first.group(0)}', not '## Install on a real "
                   "host' (what it is and how to install it come before the feature list)")
    intro = text[text.find("```", text.find("```") + 3):i if i > 0 else len(text)]
    if "Debian package" not in intro:
        bad.append("README.md: the paragraphs before the install section do not say it ships as a "
                   "Debian package")
    sec = text[i:j] if 0 <= i < j else ""
    conf = re.search(r"-c (\S+)", read("systemd/rpcrdma-gw.service")).group(1)
    for need in ("dpkg-buildpackage", "apt-get install ./rpcrdma-gw_", "editor " + conf,
                 "rpcrdma-gw --check-config " + conf, "systemctl enable --now rpcrdma-gw",
                 "mount -t nfs"):
        if need not in sec:
            bad.append(f"README.md, Install on a real host: no '{need}'")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"readme: opens with make demo/check; install section from package to mount ({conf})")
    return 0


def check_creds():
    """TLS keys under the packaged unit: the unit loads credentials
    (LoadCredential=) and docs/operations.md section 2.7 puts each one in the
    credential store and names its copy in the configuration; no key is
    installed where the unit's dynamic user cannot read it."""
    unit, bad = read("systemd/rpcrdma-gw.service"), []
    ids = re.findall(r"^LoadCredential=([A-Za-z0-9._-]+)$", unit, re.M)
    if not any(i.endswith(".key") for i in ids):
        bad.append("systemd/rpcrdma-gw.service: no LoadCredential= of a key (.key): the dynamic "
                   "user cannot read a key kept for root")
    sec = section(read("docs/operations.md"), "### 2.7 ", "\n## ")
    for i in ids:
        for need in (f"/etc/credstore/{i}", f"$CREDENTIALS_DIRECTORY/{i}"):
            if need not in sec:
                bad.append(f"docs/operations.md 2.7: credential {i} of the unit: no '{need}'")
    for line in sec.splitlines():
        if re.match(r"\s*install\b.*\.key\b", line) and "/etc/credstore" not in line:
            bad.append(f"docs/operations.md 2.7: '{line.strip()}': a key outside the credential "
                       "store, which the unit's dynamic user cannot read")
    if not re.search(r"tls_key = \$CREDENTIALS_DIRECTORY/", read("docs/configuration.md") +
                     read("docs/man/rpcrdma-gw.conf.5").replace("\\fR", "").replace("\\fP", "")) and \
            "$CREDENTIALS_DIRECTORY/NAME" not in read("docs/configuration.md"):
        bad.append("docs/configuration.md: tls_key does not say it may name $CREDENTIALS_DIRECTORY")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"creds: the unit loads {len(ids)} credentials ({', '.join(ids)}); operations.md 2.7 "
          "stores and names each")
    return 0


def daemon_facts():
    """rpcrdma-gw's options: getopt_long's table and short string in
    gateway/main.c, its usage text (--help), rpcrdma-gw(8) OPTIONS and
    docs/configuration.md's Command line table."""
    src = read("gateway/main.c")
    longs = {"--" + o for o in re.findall(r'\{ "([a-z-]+)", (?:no|required|optional)_argument', src)}
    shorts = {"-" + c for c in re.sub(r"[^a-zA-Z]", "",
                                      re.search(r'getopt_long\(argc, argv, "([^"]*)"', src).group(1))}
    # -f is --foreground's short form, taken for compatibility and not documented
    code = (longs | shorts) - {"-f"}
    usage = section(src, "static void usage(FILE *f)", "\n}")
    uopts = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-z-]*)", usage))
    man = read("docs/man/rpcrdma-gw.8")
    mopts = set()
    for blk in section(man, ".SH OPTIONS", ".SH OPERATION").split(".TP\n")[1:]:
        head = re.sub(r"\\f[RBIP]", " ", blk.splitlines()[0])
        mopts |= set(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-z-]*)", head))
    md = section(read("docs/configuration.md"), "## Command line", "\n## ")
    dopts = set()
    for row in re.findall(r"^\| (`.*?) \|", md, re.M):
        dopts |= set(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-z-]*)", row))
    return code, uopts, mopts, dopts


# Statements about a feature's presence that the code contradicts: (what,
# file and pattern showing the feature exists, pattern no document may
# then contain).  A new contradiction found by hand belongs here.
FACTS = [
    ("the daemon never forks", "gateway/main.c", r"never forks",
     r"(?i)detaches|daemon\(3\)|logs to syslog"),
    ("the AUTH_TLS probe is answered STARTTLS", "frontend-tcp/fe_tls_pre.c", r"STARTTLS",
     r"(?i)not offer(ed)? TLS|TLS[^.]{0,30}\byet\b|not offered yet"),
    ("NFSv4.0 callbacks are relayed (v40_callbacks)", "config/config_keys.c",
     r'"v40_callbacks".*CFG_V40CB_RELAY',
     r"(?i)NFSv4\.0: the server connects back"),
    ("the server's SM_NOTIFY is relayed to the clients", "gateway/nlm_notify.c", r"SM_NOTIFY",
     r"(?i)not relayed: the server's NSM"),
    ("[listener NAME] sections exist", "config/config.c", r'"listener"',
     r"(?i)listeners have no sections"),
    ("TLS keys are loaded (tls_key)", "config/config_keys.c", r'"tls_key"',
     r"(?i)TLS keys \*\*\(planned\)\*\*"),
    ("reload names the values that changed", "config/config_diff.c", r"cdf_values_what",
     r"values changed`\)"),
]


def check_daemon():
    code, uopts, mopts, dopts = daemon_facts()
    bad = []
    if len(code) < 8 or "--check-config" not in code:
        sys.exit("docs_code: the options of gateway/main.c were not found: update this script")
    for where, have in (("gateway/main.c usage (--help)", uopts), ("docs/man/rpcrdma-gw.8 OPTIONS", mopts),
                        ("docs/configuration.md Command line", dopts)):
        for o in sorted(code - have):
            bad.append(f"{where}: option {o} is missing")
        for o in sorted(have - code - {"-f"}):
            bad.append(f"{where}: option {o} does not exist")
    n = 0
    for what, path, evidence, claim in FACTS:
        if not re.search(evidence, read(path)):
            bad.append(f"docs_code FACTS: '{what}': no /{evidence}/ in {path}: update the table")
            continue
        for p in DOCS_MD + MANS + [SAMPLE]:
            for no, line in enumerate(read(p).splitlines(), 1):
                n += 1
                if re.search(claim, line):
                    bad.append(f"{p}:{no}: says the opposite of '{what}' ({path})")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"daemon: {len(code)} options, the same in getopt, --help, rpcrdma-gw(8) and "
          f"configuration.md; {len(FACTS)} facts of the code contradicted nowhere")
    return 0


if __name__ == "__main__":
    cmds = {"keys": check_keys, "gwctl": check_gwctl, "readme": check_readme, "creds": check_creds,
            "daemon": check_daemon}
    if len(sys.argv) != 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    sys.exit(cmds[sys.argv[1]]())
