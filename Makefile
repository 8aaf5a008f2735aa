# SPDX-License-Identifier: MIT OR GPL-2.0
#
# Colibri: top-level build.
#
#   make              the module for every supported kernel installed here,
#                     libcolibri, the colibri tool and the tests
#   make KDIR=DIR     the module for the kernel tree in DIR only
#   make demo         the main job: boot the VM, load colibri.ko, run it
#   make check        native tests, then the VM tests on every supported
#                     kernel; ends with "N passed, N failed, N skipped"
#   make check-unit   native tests only
#   make check-vm     VM tests only (KERNELS="6.1 6.12" to choose)
#   make lint         checkpatch.pl on our sources, sparse (C=1) on the module,
#                     the tree's layout (tests/layout/run: no call or include
#                     cycle, no file over 1000 lines, no FPU code in the
#                     integer-only engine objects)
#   make static       build/colibri-static: the tool linked statically
#   make install      the tool, libcolibri, the udev rule and systemd units
#                     (DESTDIR, PREFIX=/usr/local; docs/admin.md)
#   make deb          build/deb/*.deb: colibri and colibri-dkms (debian/)
#   make clean
#
# Everything lands in build/ (BUILD=...).  The module builds with W=1.

BUILD ?= build
override BUILD := $(abspath $(BUILD))
CC ?= gcc
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

# --- kernels -----------------------------------------------------------------

ifneq ($(KDIR),)
KDIR := $(abspath $(KDIR))
KRELS := $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
kdir-of = $(KDIR)
else
KRELS := $(shell scripts/kernels | awk '{ print $$2 }')
kdir-of = /lib/modules/$(1)/build
endif

KO := $(foreach r,$(KRELS),$(BUILD)/kmod/$(r)/colibri.ko)
# The reference accelerator (tests/accel/), a second module using colibri.ko's
# accelerator API.
ACCEL_KO := $(foreach r,$(KRELS),$(BUILD)/kmod/$(r)/accel/colibri_refaccel.ko)
ACCEL_SRCS := $(wildcard tests/accel/Kbuild tests/accel/*.c uapi/*.h) kmod/colibri_accel.h \
	kmod/colibri_cpu.c $(wildcard kmod/engine/*/*.[ch])
KMOD_SRCS := Kbuild $(wildcard kmod/*.c kmod/*.h kmod/engine/*/*.[ch] uapi/*.h)

# --- userspace ---------------------------------------------------------------

GCC_INC := $(shell $(CC) -print-file-name=include)

# Engine sources build exactly as the kernel's FPU objects do: freestanding,
# no libc headers, no FP contraction, SSE2 baseline plus the ISA of x86/'s
# *_avx2.c and *_avx512.c files (Kbuild: the folders of kmod/engine/).  The
# integer-only folders build the same here: a process may use the FPU
# anywhere.
ENGINE_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-ffp-contract=off -fno-strict-aliasing -ffreestanding -fno-common \
	-nostdinc -isystem $(GCC_INC) -D_MM_MALLOC_H_INCLUDED -Ikmod/engine -fPIC
ISA_AVX2 := -mavx2 -mfma -mf16c
ISA_AVX512 := -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mavx512dq -mavx2 -mfma -mf16c

USER_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-ffp-contract=off -D_GNU_SOURCE -Iuapi -Ikmod/engine -Iuserspace/lib \
	-I/usr/include/cjson -fPIC
USER_LIBS := -lcjson -lpcre2-8 -lutf8proc -luring -lpthread -lm
# CPPFLAGS, CFLAGS and LDFLAGS from the environment (dpkg-buildflags' for
# the Debian package) go to userspace objects and links, never to the
# engine, which builds as it does in the kernel.
USER_CFLAGS += $(CPPFLAGS) $(CFLAGS)

ENGINE_SRCS := $(wildcard kmod/engine/*/*.c)
LIB_SRCS := $(wildcard userspace/lib/*/*.c)
CLI_SRCS := $(wildcard userspace/cli/*.c)
SERVE_SRCS := $(wildcard userspace/serve/*.c)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
VM_SRCS := $(wildcard tests/vm/*.c)
# VM tests that are scripts (tests/vm/NAME_test.sh), installed next to the programs.
VM_SCRIPTS := $(wildcard tests/vm/*_test.sh)
EXAMPLE_SRCS := $(wildcard tests/libcolibri/*.c)

ENGINE_OBJS := $(patsubst kmod/engine/%.c,$(BUILD)/engine/%.o,$(ENGINE_SRCS))
LIB_OBJS := $(patsubst userspace/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
CLI_OBJS := $(patsubst userspace/cli/%.c,$(BUILD)/cli/%.o,$(CLI_SRCS))
SERVE_OBJS := $(patsubst userspace/serve/%.c,$(BUILD)/serve/%.o,$(SERVE_SRCS))
# colibri serve's HTTP library: only the tool (and the server's unit tests) link it.
SERVE_LIBS := -lmicrohttpd
LIBCOLIBRI := $(BUILD)/lib/libcolibri.a
COLIBRI := $(BUILD)/colibri
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
VM_BINS := $(patsubst tests/vm/%.c,$(BUILD)/tests/vm/%,$(VM_SRCS))
VM_SCRIPT_BINS := $(patsubst tests/vm/%.sh,$(BUILD)/tests/vm/%,$(VM_SCRIPTS))
EXAMPLE_BINS := $(patsubst tests/libcolibri/%.c,$(BUILD)/tests/libcolibri/%,$(EXAMPLE_SRCS))

# kselftest_harness.h and checkpatch.pl come from Debian's linux-source-6.1,
# extracted here at build time and never committed.
LINUX_SRC_TAR := $(firstword $(wildcard /usr/src/linux-source-6.1.tar.xz))
KSFT := $(BUILD)/kselftest
KSFT_HDR := $(KSFT)/kselftest_harness.h

.PHONY: all modules userspace tests demo check check-unit check-vm lint clean
all: modules userspace static tests

# --- module ------------------------------------------------------------------

modules: $(KO) $(ACCEL_KO)

# One symlink tree per kernel keeps objects apart; W=1 on every build.
$(BUILD)/kmod/%/colibri.ko: $(KMOD_SRCS)
	@mkdir -p $(BUILD)/kmod/$*
	$(Q)cp -rsf $(CURDIR)/Kbuild $(CURDIR)/kmod $(CURDIR)/uapi $(BUILD)/kmod/$*/
	$(Q)find $(BUILD)/kmod/$* -xtype l -delete
	@echo "  MODULE  $* "
	$(Q)$(MAKE) -s -C $(call kdir-of,$*) M=$(BUILD)/kmod/$* W=1 $(if $(C),C=$(C)) modules

# Its own symlink tree per kernel, next to colibri.ko's; modpost resolves
# colibri_accel_register() & co through colibri.ko's Module.symvers.
$(BUILD)/kmod/%/accel/colibri_refaccel.ko: $(ACCEL_SRCS) $(BUILD)/kmod/%/colibri.ko
	@mkdir -p $(BUILD)/kmod/$*/accel/tests
	$(Q)cp -sf $(CURDIR)/tests/accel/Kbuild $(BUILD)/kmod/$*/accel/Kbuild
	$(Q)cp -rsf $(CURDIR)/kmod $(CURDIR)/uapi $(BUILD)/kmod/$*/accel/
	$(Q)cp -rsf $(CURDIR)/tests/accel $(BUILD)/kmod/$*/accel/tests/
	$(Q)find $(BUILD)/kmod/$*/accel -xtype l -delete
	@# Kbuild reruns modpost only when its command line changes, not when
	@# colibri.ko's symbol versions do: without this the module keeps stale ones.
	$(Q)rm -f $(BUILD)/kmod/$*/accel/Module.symvers
	@echo "  MODULE  $* (refaccel)"
	$(Q)$(MAKE) -s -C $(call kdir-of,$*) M=$(BUILD)/kmod/$*/accel W=1 $(if $(C),C=$(C)) \
		KBUILD_EXTRA_SYMBOLS=$(BUILD)/kmod/$*/Module.symvers modules

# --- userspace ---------------------------------------------------------------

userspace: $(LIBCOLIBRI) $(COLIBRI)

$(BUILD)/engine/x86/%_avx2.o: kmod/engine/x86/%_avx2.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(ENGINE_CFLAGS) $(ISA_AVX2) -MMD -MP -c $< -o $@

$(BUILD)/engine/x86/%_avx512.o: kmod/engine/x86/%_avx512.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(ENGINE_CFLAGS) $(ISA_AVX512) -MMD -MP -c $< -o $@

$(BUILD)/engine/%.o: kmod/engine/%.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(ENGINE_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/lib/%.o: userspace/lib/%.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/cli/%.o: userspace/cli/%.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Iuserspace/serve -MMD -MP -c $< -o $@

$(BUILD)/serve/%.o: userspace/serve/%.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Iuserspace/serve -MMD -MP -c $< -o $@

# The page at / is taken in by the assembler (.incbin), which -MMD does not see.
$(BUILD)/serve/serve_page.o: userspace/serve/page/index.html

$(LIBCOLIBRI): $(ENGINE_OBJS) $(LIB_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

$(COLIBRI): $(CLI_OBJS) $(SERVE_OBJS) $(LIBCOLIBRI)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(SERVE_OBJS) $(LIBCOLIBRI) $(USER_LIBS) $(SERVE_LIBS)

# --- static tool ---------------------------------------------------------------

# The same objects linked with -static against Debian's static liburing,
# PCRE2, utf8proc and glibc.  Debian 12 ships no static cJSON: scripts/setup
# fetches Debian's cjson source package (apt-get source) and it is compiled
# here into build/static/libcjson.a, with the flags of everything else.
CJSON_SRC ?= $(firstword $(wildcard /var/cache/colibri/deb-src/cjson-*/cJSON.c))
MULTIARCH_LIB := /usr/lib/$(shell $(CC) -print-multiarch)
STATIC_LIBS := $(BUILD)/static/libcjson.a $(MULTIARCH_LIB)/libpcre2-8.a \
	$(MULTIARCH_LIB)/libutf8proc.a $(MULTIARCH_LIB)/liburing.a

.PHONY: static
static: $(BUILD)/colibri-static

$(BUILD)/static/libcjson.a: $(CJSON_SRC)
	@test -n "$(CJSON_SRC)" || { echo "cJSON's Debian source is missing: run scripts/setup" >&2; exit 1; }
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -std=c89 -fPIC $(CPPFLAGS) $(CFLAGS) -c $(CJSON_SRC) -o $(@D)/cJSON.o
	$(Q)rm -f $@ && ar rcs $@ $(@D)/cJSON.o

# colibri serve stays out: Debian's libmicrohttpd.a needs GnuTLS, and
# GnuTLS's static archive needs p11-kit and libunistring, which Debian 12
# ships shared only.  userspace/static/cmd_serve_none.c takes its place;
# colibri chat needs only serve_prompt.o and the answer parsers.
STATIC_CLI_OBJS := $(filter-out $(BUILD)/cli/cmd_serve.o,$(CLI_OBJS)) \
	$(BUILD)/serve/serve_prompt.o $(BUILD)/serve/serve_harmony.o \
	$(BUILD)/serve/serve_tagged.o $(BUILD)/serve/serve_call_syntax.o \
	$(BUILD)/static/cmd_serve_none.o

$(BUILD)/static/cmd_serve_none.o: userspace/static/cmd_serve_none.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Iuserspace/cli -MMD -MP -c -o $@ $<

$(BUILD)/colibri-static: $(STATIC_CLI_OBJS) $(LIBCOLIBRI) $(BUILD)/static/libcjson.a
	$(Q)$(CC) -static $(LDFLAGS) -o $@ $(STATIC_CLI_OBJS) $(LIBCOLIBRI) $(STATIC_LIBS) -lpthread -lm

# --- install -------------------------------------------------------------------

# Debian's places by default for what udev and systemd read (neither looks
# under /usr/local); the rest under PREFIX.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
SYSCONFDIR ?= /etc
UDEVRULESDIR ?= /lib/udev/rules.d
SYSTEMDUNITDIR ?= /lib/systemd/system
# The public API (docs/libcolibri.md): the session API, the device and
# io_uring clients, the tokenizer, and the ABI they use.
LIB_HEADERS := userspace/lib/colibri_session.h userspace/lib/libcolibri.h \
	userspace/lib/colibri_uring.h userspace/lib/tokenizer.h uapi/colibri.h
subst-dirs = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	-e 's|@DATADIR@|$(DATADIR)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	-e 's|@VERSION@|$(VERSION)|g'
# The upstream version: debian/changelog's first line, less any Debian revision.
VERSION := $(shell head -n 1 debian/changelog | tr -d '()' | cut -d ' ' -f 2 | sed 's/-[^-]*$$//')

.PHONY: install
install: $(COLIBRI) $(LIBCOLIBRI)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/colibri \
		$(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(DATADIR)/colibri/models $(DESTDIR)$(SYSCONFDIR)/colibri
	install -m 0755 $(COLIBRI) $(DESTDIR)$(BINDIR)/colibri
	install -m 0644 $(LIBCOLIBRI) $(DESTDIR)$(LIBDIR)/libcolibri.a
	install -m 0644 $(LIB_HEADERS) $(DESTDIR)$(INCLUDEDIR)/colibri/
	$(subst-dirs) scripts/system/libcolibri.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libcolibri.pc
	install -m 0644 scripts/system/60-colibri.rules $(DESTDIR)$(UDEVRULESDIR)/
	$(subst-dirs) scripts/system/colibri-model@.service > $(DESTDIR)$(SYSTEMDUNITDIR)/colibri-model@.service
	$(subst-dirs) scripts/system/colibri-serve@.service > $(DESTDIR)$(SYSTEMDUNITDIR)/colibri-serve@.service
	install -m 0644 docs/colibri.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 models/shakespeare-moe.colibri models/README.md $(DESTDIR)$(DATADIR)/colibri/models/

# The two packages, built by dpkg-buildpackage in a copy of the tracked
# files (its results land in the parent of the tree it builds).
.PHONY: deb
deb:
	$(Q)scripts/build-deb $(BUILD)/deb

# --- tests -------------------------------------------------------------------

tests: $(UNIT_BINS) $(VM_BINS) $(VM_SCRIPT_BINS) $(EXAMPLE_BINS)

$(VM_SCRIPT_BINS): $(BUILD)/tests/vm/%: tests/vm/%.sh
	@mkdir -p $(@D)
	$(Q)install -m 755 $< $@

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIBCOLIBRI) tests/unit/cb_test.h tests/unit/cb_test_rng.h \
		tests/unit/cb_test_variant.h
	@mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Itests/unit -MMD -MP -o $@ $< $(LIBCOLIBRI) $(USER_LIBS)

# The server's own pieces (test_serve_*.c), with serve/'s objects.
$(BUILD)/tests/unit/test_serve_%: tests/unit/test_serve_%.c $(SERVE_OBJS) $(LIBCOLIBRI) tests/unit/cb_test.h
	@mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Iuserspace/serve -Itests/unit -MMD -MP -o $@ $< $(SERVE_OBJS) $(LIBCOLIBRI) $(USER_LIBS) $(SERVE_LIBS)

# Programs on libcolibri's public API (docs/libcolibri.md): they see only
# userspace/lib's headers (no engine, no uapi include path) and link only
# libcolibri and the system libraries it needs.
EXAMPLE_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Iuserspace/lib

$(BUILD)/tests/libcolibri/%.o: tests/libcolibri/%.c
	@mkdir -p $(@D)
	$(Q)$(CC) $(EXAMPLE_CFLAGS) -MMD -MP -c $< -o $@

$(EXAMPLE_BINS): $(BUILD)/tests/libcolibri/%: $(BUILD)/tests/libcolibri/%.o $(LIBCOLIBRI)
	$(Q)$(CC) -o $@ $< $(LIBCOLIBRI) $(USER_LIBS)

$(KSFT_HDR):
	@test -n "$(LINUX_SRC_TAR)" || { echo "linux-source-6.1 is not installed: run scripts/setup" >&2; exit 1; }
	@mkdir -p $(KSFT)
	$(Q)tar -xJf $(LINUX_SRC_TAR) -C $(KSFT) --strip-components=1 --wildcards \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/tools/testing/selftests/kselftest.h' \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
	$(Q)cp $(KSFT)/tools/testing/selftests/kselftest_harness.h \
		$(KSFT)/tools/testing/selftests/kselftest.h $(KSFT)/

$(BUILD)/tests/vm/%: tests/vm/%.c $(KSFT_HDR) $(LIBCOLIBRI) $(wildcard tests/vm/*.h)
	@mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Wno-sign-compare -Wno-misleading-indentation -Wno-format-truncation -I$(KSFT) -Itests/vm -MMD -MP -o $@ $< $(LIBCOLIBRI) $(USER_LIBS)

# The main job, in the VM because the host cannot load modules.
demo: all
	$(Q)scripts/demo

check: all
	$(Q)tests/vm/make-fixtures
	$(Q)scripts/run-tests --unit --vm

check-unit: userspace tests
	$(Q)scripts/run-tests --unit

check-vm: all
	$(Q)tests/vm/make-fixtures
	$(Q)scripts/run-tests --vm

# --- style -------------------------------------------------------------------

CHECKPATCH := $(KSFT)/scripts/checkpatch.pl
lint: $(KSFT_HDR)
	-$(Q)$(CHECKPATCH) --no-tree --quiet --strict --show-types \
		--ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES,NEW_TYPEDEFS,CAMELCASE \
		-f $(wildcard kmod/*.c kmod/*.h kmod/engine/*/*.[ch] \
		   uapi/*.h tests/accel/*.c)
	$(Q)rm -f $(KO) && $(MAKE) --no-print-directory modules C=2
	$(Q)COLIBRI_BUILD=$(BUILD) tests/layout/run

clean:
	rm -rf $(BUILD)

-include $(wildcard $(BUILD)/engine/*.d $(BUILD)/engine/*/*.d $(BUILD)/lib/*.d $(BUILD)/lib/*/*.d $(BUILD)/cli/*.d $(BUILD)/serve/*.d $(BUILD)/tests/*/*.d)
