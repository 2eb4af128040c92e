# rpcrdma-gw - GNU make build.  `make help` lists the targets.
#
# Sources are found by wildcard: a new file in a module folder, a new
# tests/unit/test_*.c, tests/fuzz/fuzz_*.c or tests/vm/t_*.sh is picked up
# without editing this file.

PREFIX    ?= /usr/local
UNITDIR   ?= $(PREFIX)/lib/systemd/system
DESTDIR   ?=
CC        ?= gcc
SANITIZE  ?=
# make fuzz: every target to FUZZ_RUNS executions, or FUZZ_SECONDS each if
# set (0: no time limit); make check: FUZZ_CHECK_SECONDS each (smoke).
FUZZ_RUNS ?= 10000000
FUZZ_SECONDS ?= 0
export FUZZ_CHECK_SECONDS ?= 5

# Every core by default (make check's build took 2 min on one core of two,
# 1 on both); a -j on the command line still wins.
ifeq (,$(filter -j% j%,$(MAKEFLAGS)))
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

BUILD     := build$(if $(SANITIZE),-san)
# One version, from the Debian changelog's first line: "rpcrdma-gw (X) ...".
VERSION   := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog 2>/dev/null)
PKGS      := libibverbs librdmacm libevent_core libevent_pthreads libevent_extra libtirpc \
             libsystemd inih json-c openssl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -fno-strict-aliasing \
             -D_GNU_SOURCE -DGW_VERSION='"$(VERSION)"' -MMD -MP $(PKG_CFLAGS) \
             -Ichunking -Iconfig -Ibackend-rdma -Ifrontend-tcp -Igateway
LDLIBS    += $(PKG_LIBS) -lpthread
ifneq ($(SANITIZE),)
CFLAGS    += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS   += -fsanitize=address,undefined
endif

MODULES   := chunking config backend-rdma frontend-tcp gateway
mod_srcs   = $(filter-out gateway/main.c,$(wildcard $(1)/*.c))
mod_objs   = $(patsubst %.c,$(BUILD)/%.o,$(call mod_srcs,$(1)))
LIB_OBJS  := $(foreach m,$(MODULES),$(call mod_objs,$(m)))
LIB       := $(BUILD)/librpcrdmagw.a

DAEMON    := $(BUILD)/rpcrdma-gw
CTL       := $(BUILD)/rpcrdma-gwctl
# Link-time optimisation of the daemon (LTO=0: without; never with
# SANITIZE): the call path's one-line functions are inlined across files.
# In the TCG guest that cut a GETATTR's function calls by 29 % and ran one
# stream's small calls 9-12 % faster (docs/benchmarks.md).  Fat objects:
# the tests and tools link the same objects without it.
LTO       ?= $(if $(SANITIZE),0,1)
ifeq ($(LTO),1)
$(LIB_OBJS) $(BUILD)/gateway/main.o: CFLAGS += -flto=auto -ffat-lto-objects
$(DAEMON): LDFLAGS += -flto=auto
endif

# A tool's own parts (tests/tools/TOOL-PART.c of a tests/tools/TOOL.c) are
# not tools: gw-tlsclient-v41.c (its NFSv4.1 client), gw-xdrbuf.c (the XDR
# buffer and RPC framing of gw-fragclient and gw-tlsclient), rpcrdma-call-nfs.c
# (rpcrdma-call's MOUNT and NFSv3 commands).
TOOLS_PARTS := tests/tools/gw-tlsclient-v41.c tests/tools/gw-xdrbuf.c tests/tools/rpcrdma-call-nfs.c
TOOLS_SRC := $(filter-out $(TOOLS_PARTS),$(wildcard tests/peer/*.c tests/tools/*.c))
TOOLS     := $(patsubst tests/%.c,$(BUILD)/%,$(TOOLS_SRC))
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_HELP := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRC))
BENCH_SRC := $(wildcard tests/bench/bench_*.c)
BENCH_BINS:= $(patsubst tests/bench/%.c,$(BUILD)/tests/bench/%,$(BENCH_SRC))

# Fuzzers always build with clang, libFuzzer, ASan and UBSan in their own tree.
FUZZ_BUILD := build-fuzz
FUZZ_CFLAGS := -std=gnu11 -g -O1 -Wall -Wextra -Werror -D_GNU_SOURCE -Ichunking -Itests/unit \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(FUZZ_SRC))
FUZZ_LIBSRC := $(wildcard chunking/*.c)

.SECONDARY:
.PHONY: all check unit fuzz fuzz-build vm pkg bench soak demo deps install clean help tools
all: $(DAEMON) $(CTL) $(TOOLS)

# Tests, tools and benches may include the shared test helpers in tests/unit.
$(BUILD)/tests/%.o: CFLAGS += -Itests/unit

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(DAEMON): $(BUILD)/gateway/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(CTL): $(BUILD)/tools/rpcrdma-gwctl.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Test peers and tools (tests/peer/X.c -> $(BUILD)/peer/X): one file each.
tools: $(TOOLS)
$(TOOLS): $(BUILD)/%: $(BUILD)/tests/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter-out $(LIB),$^) $(LIB) $(LDLIBS)
$(BUILD)/tools/gw-tlsclient: $(BUILD)/tests/tools/gw-tlsclient-v41.o $(BUILD)/tests/tools/gw-xdrbuf.o
$(BUILD)/tools/gw-fragclient: $(BUILD)/tests/tools/gw-xdrbuf.o
$(BUILD)/tools/rpcrdma-call: $(BUILD)/tests/tools/rpcrdma-call-nfs.o

UNIT_HELP_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(UNIT_HELP))
# The backend's seam tests share a fake RDMA device (tests/unit/fake/): it
# needs cmocka, so it is linked into those only, not every test and bench.
$(BUILD)/tests/unit/test_be_seam $(BUILD)/tests/unit/test_be_send $(BUILD)/tests/unit/test_be_batch \
  $(BUILD)/tests/unit/test_gw_srvclose: \
  $(BUILD)/tests/unit/fake/be_fake.o
$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(UNIT_HELP_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka
$(BUILD)/tests/bench/%: $(BUILD)/tests/bench/%.o $(UNIT_HELP_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

fuzz-build: $(FUZZ_BINS)
# Targets over a pure file of gateway/ link that file too: fuzz_callback the
# relay's session map (callback.c), fuzz_xmap the XID map (xmap.c),
# fuzz_rdma_reply the reply translation (rdma_reply.c, with the backend's
# pure reply check in be_marshal.c).
$(FUZZ_BUILD)/fuzz_callback: gateway/callback.c gateway/callback.h
$(FUZZ_BUILD)/fuzz_xmap: gateway/xmap.c gateway/xmap.h
$(FUZZ_BUILD)/fuzz_rdma_reply: gateway/rdma_reply.c gateway/transport_rdma.h backend-rdma/be_marshal.c
$(FUZZ_BUILD)/fuzz_callback $(FUZZ_BUILD)/fuzz_xmap $(FUZZ_BUILD)/fuzz_rdma_reply: $(FUZZ_BUILD)/%: tests/fuzz/%.c $(FUZZ_LIBSRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -Iconfig -Igateway -Ibackend-rdma -Ifrontend-tcp -o $@ $< $(filter gateway/%.c backend-rdma/%.c,$^) $(FUZZ_LIBSRC)
# fuzz_proxy: the PROXY v2 decoder of the frontend's admission (fe_admit.c).
$(FUZZ_BUILD)/fuzz_proxy: tests/fuzz/fuzz_proxy.c frontend-tcp/fe_admit.c frontend-tcp/fe_admit.h
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -Iconfig -Ifrontend-tcp -o $@ $< frontend-tcp/fe_admit.c
# fuzz_tls_pre: the pre-TLS decisions of RPC-with-TLS (fe_tls_pre.c).
$(FUZZ_BUILD)/fuzz_tls_pre: tests/fuzz/fuzz_tls_pre.c frontend-tcp/fe_tls_pre.c frontend-tcp/fe_tls.h $(FUZZ_LIBSRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -Iconfig -Ifrontend-tcp -o $@ $< frontend-tcp/fe_tls_pre.c $(FUZZ_LIBSRC)
$(FUZZ_BUILD)/%: tests/fuzz/%.c $(FUZZ_LIBSRC) $(UNIT_HELP) chunking/chunking.h
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LIBSRC) $(UNIT_HELP)
# Targets over the daemon as a whole (reassembly + dispatch, the config
# parser, the control socket) link every module, built with the same
# instrumentation into $(FUZZ_BUILD)/lib.
FUZZ_WHOLE := $(addprefix $(FUZZ_BUILD)/,fuzz_gateway fuzz_config fuzz_control fuzz_nsm_udp \
              fuzz_sequence)
FUZZ_MODFLAGS := -fno-strict-aliasing -DGW_VERSION='"$(VERSION)"' $(PKG_CFLAGS) \
                 -Iconfig -Ibackend-rdma -Ifrontend-tcp -Igateway
FUZZ_LIB  := $(FUZZ_BUILD)/lib/librpcrdmagw.a
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_BUILD)/lib/%.o,$(foreach m,$(MODULES),$(call mod_srcs,$(m))))
$(FUZZ_BUILD)/lib/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(FUZZ_MODFLAGS) -MMD -MP -c -o $@ $<
$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	rm -f $@
	ar rcs $@ $^
# fuzz_sequence builds its calls with the tests' NFS encoder.
$(FUZZ_BUILD)/fuzz_sequence: tests/unit/nfs_enc.c
$(FUZZ_WHOLE): $(FUZZ_BUILD)/%: tests/fuzz/%.c tests/fuzz/fuzz_gw.h $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(FUZZ_MODFLAGS) -o $@ $< $(filter tests/unit/%.c,$^) $(FUZZ_LIB) \
	  $(PKG_LIBS) -lpthread

# Every tier; the last line is `check: N passed, N failed`.
check: all $(UNIT_BINS) $(BENCH_BINS) fuzz-build
	@BUILD=$(BUILD) FUZZ_BUILD=$(FUZZ_BUILD) SANITIZE=$(SANITIZE) tests/check.sh all

unit: $(UNIT_BINS)
	@BUILD=$(BUILD) tests/check.sh unit

vm: all
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) tests/check.sh vm

pkg:
	@BUILD=$(BUILD) tests/check.sh pkg

fuzz: fuzz-build
	@FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_CHECK_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) tests/check.sh fuzz

bench: all $(BENCH_BINS)
	@BUILD=$(BUILD) tests/bench/run.sh

# An hour (SOAK_SECONDS) of mixed clients with churn through the VM gateway:
# RSS, descriptors and calls in flight must stay flat (not in make check).
SOAK_SECONDS ?= 3600
soak: all
	BUILD=$(BUILD) SOAK_SECONDS=$(SOAK_SECONDS) VM_TIMEOUT=$$(($(SOAK_SECONDS) + 900)) \
	  tests/vm/run-vm.sh tests/vm/soak.sh $(SOAK_SECONDS)

demo: deps
	$(MAKE) all
	BUILD=$(BUILD) tests/vm/demo.sh

deps:
	@tests/deps.sh

install: $(DAEMON) $(CTL)
	install -D -m 0755 $(DAEMON) $(DESTDIR)$(PREFIX)/sbin/rpcrdma-gw
	install -D -m 0755 $(CTL) $(DESTDIR)$(PREFIX)/sbin/rpcrdma-gwctl
	install -D -m 0644 tools/rpcrdma-gwctl.bash-completion \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/rpcrdma-gwctl
	install -D -m 0644 config/rpcrdma-gw.conf $(DESTDIR)/etc/rpcrdma-gw/rpcrdma-gw.conf.sample
	mkdir -p $(DESTDIR)$(UNITDIR)
	for u in systemd/*.service systemd/*.socket; do \
	  sed 's|/usr/sbin/rpcrdma-gw|$(PREFIX)/sbin/rpcrdma-gw|g' "$$u" > $(DESTDIR)$(UNITDIR)/$$(basename $$u) && \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$$(basename $$u) || exit 1; done
	for m in docs/man/*.[1-9]; do [ -e "$$m" ] && s=$${m##*.} && \
	  install -D -m 0644 "$$m" $(DESTDIR)$(PREFIX)/share/man/man$$s/$$(basename $$m); done; true

clean:
	rm -rf build build-san build-fuzz

help:
	@echo "make           build the daemon ($(DAEMON))"
	@echo "make check     every test tier (unit, fuzz smoke, packaging, VM); SANITIZE=1 for ASan+UBSan"
	@echo "make unit      the cmocka unit tests only"
	@echo "make pkg       the packaging checks only (tests/pkg/check-*.sh: units, man pages, .deb, ops)"
	@echo "make vm        the VM tier only (qemu guest with Soft-RoCE and the kernel nfsd)"
	@echo "make demo      install deps, build, run the gateway story in the Soft-RoCE VM"
	@echo "make deps      install the Debian 12 packages for build, tests and the VM tier"
	@echo "make fuzz      run every libFuzzer target for FUZZ_RUNS executions (default 10 M; FUZZ_SECONDS caps)"
	@echo "make bench     benchmarks (not tests)"
	@echo "make soak      an hour of mixed clients through the VM gateway (SOAK_SECONDS=)"
	@echo "make install   DESTDIR= PREFIX= ; make clean"

-include $(shell find $(BUILD) $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
