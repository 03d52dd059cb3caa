# clnz: build the library, the command and the tests into build/.
#   make          library (build/libclnz.so, build/libclnz.a) and build/clnz
#   make run      install what is missing, build, find the nonzeros of a sample
#   make test     build and run the whole test suite on the default device (PoCL in CI)
#   make test-asan the same suite built with ASan, UBSan and LSan, in build/asan
#   make test-tsan the threads suite and threaded copies under ThreadSanitizer, in build/tsan
#   make test-valgrind the command-line tests with clnz under valgrind memcheck
#   make install   PREFIX=/usr/local (and DESTDIR): library, header, clnz, man pages, clnz.pc,
#                  the CMake package
CC ?= cc
PYTHON ?= /usr/bin/python3
B ?= build
CFLAGS ?= -O2 -g
CFLAGS += -fvisibility=hidden -pthread -std=gnu11 -Wall -Wextra -Wshadow -Wno-missing-field-initializers -fPIC -Iinclude -Ihost -Ikernels
LDLIBS = -lOpenCL -lm -pthread
# The version, from the header. The shared library's SONAME carries MAJOR, or
# MAJOR.MINOR before 1.0 (every 0.x minor release may change the ABI).
VERSION := $(shell sed -n 's/^\#define CLNZ_VERSION_STRING "\(.*\)"/\1/p' include/clnz.h)
MAJOR := $(firstword $(subst ., ,$(VERSION)))
MINOR := $(word 2,$(subst ., ,$(VERSION)))
SOVERSION := $(if $(filter 0,$(MAJOR)),$(MAJOR).$(MINOR),$(MAJOR))
# make install PREFIX=... DESTDIR=... (and make uninstall with the same)
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR ?= $(LIBDIR)/cmake/clnz
# The API's section 3 pages: one per function of the header (most of them
# .so links to their family's page) and clnz(3), the overview.
MAN3 = clnz ${shell sed -n 's/^[a-z_ ]*[ *]\(clnz_[a-z0-9_]*\)(.*/\1/p' include/clnz.h}

LIB_SRC = $(wildcard host/core/*.c host/tune/*.c host/strategy/*.c host/ops/*.c host/slices/*.c host/uses/*.c)
CLI_SRC = $(wildcard host/cli/*.c host/io/*.c)
LIB_HDR = include/clnz.h kernels/abi.h $(wildcard host/core/*.h host/tune/*.h host/strategy/*.h host/ops/*.h \
          host/slices/*.h host/uses/*.h)
CLI_HDR = $(wildcard host/cli/*.h host/io/*.h)
KERNEL_MAIN = kernels/scan.cl kernels/nonzero.cl kernels/mask.cl kernels/select.cl kernels/where.cl \
              kernels/image.cl kernels/lookback.cl kernels/stream.cl kernels/fill.cl kernels/count_axes.cl
KERNEL_ALL = $(KERNEL_MAIN) kernels/abi.h kernels/kname.h kernels/element.cl kernels/blelloch.cl kernels/bitpos.cl \
             kernels/chunk.cl kernels/value.cl kernels/index.cl kernels/nt_store.cl
TESTS = test_scan test_mask test_nonzero test_batched test_images test_api test_select test_large test_cache test_tune \
        test_faults test_threads test_strategies test_exact test_queue test_programs test_result_mem \
        test_fork test_count_batched test_io_alloc

LIB_OBJ = $(LIB_SRC:host/%.c=$(B)/obj/%.o) $(B)/obj/kernels_src.o
CLI_OBJ = $(CLI_SRC:host/%.c=$(B)/obj/%.o)
TEST_BIN = $(TESTS:%=$(B)/%)
PYTESTS = tests/test_cli.py tests/test_cli_select.py tests/test_cli_chunks.py \
          tests/test_cli_batch.py tests/test_cli_image.py tests/test_cli_faults.py \
          tests/test_cli_reliability.py tests/test_cli_bundle.py tests/test_cli_pipes.py \
          tests/test_example.py tests/test_lookback_stress.py

.PHONY: all run example test test-full suites run-suite/kernel-dir run-suite/strategies-part \
        run-suite/strategies-rest test-asan test-tsan test-valgrind test-oclgrind fuzz \
        install uninstall check-kernels deps deps-try clean bench bench-tools
all: $(B)/libclnz.so $(B)/libclnz.a $(B)/clnz

# Objects depend on the Makefile too: its flags (visibility, sanitizers) change them.
$(B)/obj/%.o: host/%.c $(LIB_HDR) $(CLI_HDR) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/kernels_src.c: $(KERNEL_ALL) scripts/embed-kernels
	@mkdir -p $(B)
	scripts/embed-kernels $@ $(KERNEL_MAIN)

$(B)/obj/kernels_src.o: $(B)/kernels_src.c Makefile
	@mkdir -p $(B)/obj
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/libclnz.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

# -z nodelete: a thread's message tag has a key destructor in the library
# (core/error.c), which a dlclose must not unmap under threads still alive.
$(B)/libclnz.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libclnz.so.$(SOVERSION) -Wl,-z,nodelete -o $@ $^ $(LDLIBS)

$(B)/clnz: $(CLI_OBJ) $(B)/libclnz.a
	$(CC) -o $@ $(CLI_OBJ) $(B)/libclnz.a -lpng $(LDLIBS)

$(B)/obj/tests/%.o: tests/%.c tests/testutil.h tests/fault_calls.h include/clnz.h
	@mkdir -p $(B)/obj/tests
	$(CC) $(CFLAGS) -Itests -c $< -o $@

$(B)/obj/tests/testutil.o: tests/testutil.c tests/testutil.h include/clnz.h
	@mkdir -p $(B)/obj/tests
	$(CC) $(CFLAGS) -Itests -c $< -o $@

$(B)/test_%: $(B)/obj/tests/test_%.o $(B)/obj/tests/testutil.o $(B)/libclnz.a
	$(CC) -o $@ $^ -lcmocka $(LDLIBS)

# The command's own readers (not the library's): the memory arrays are read into.
$(B)/obj/tests/test_io_alloc.o: host/io/io.h
IO_READ_OBJ = $(B)/obj/io/npy.o $(B)/obj/io/npy_header.o $(B)/obj/io/input.o
$(B)/test_io_alloc: $(B)/obj/tests/test_io_alloc.o $(B)/obj/tests/testutil.o $(IO_READ_OBJ) $(B)/libclnz.a
	$(CC) -o $@ $^ -lcmocka $(LDLIBS)

# The fault-injection suite intercepts these calls inside the static library.
FAULT_WRAP = clCreateBuffer clCreateKernel clEnqueueMapBuffer clEnqueueNDRangeKernel \
             clEnqueueReadBuffer clEnqueueFillBuffer clBuildProgram clCreateContext \
             clCreateCommandQueue clCreateProgramWithSource clCreateProgramWithBinary \
             clEnqueueUnmapMemObject clFinish clWaitForEvents clCreateUserEvent \
             clSetUserEventStatus \
             malloc calloc realloc posix_memalign
$(B)/test_faults: $(B)/obj/tests/test_faults.o $(B)/obj/tests/testutil.o $(B)/libclnz.a
	$(CC) -o $@ $^ $(FAULT_WRAP:%=-Wl,--wrap=%) -lcmocka $(LDLIBS)

# The command-line fault tests' LD_PRELOAD library. Built without the
# sanitizers even under test-asan (a preloaded library comes before their
# runtime), with a compiler of its own.
SHIM_CC ?= cc
$(B)/fault_shim.so: tests/fault_shim.c tests/fault_calls.h
	@mkdir -p $(@D)
	$(SHIM_CC) -shared -fPIC -O2 -Wall -Wextra -Iinclude -Itests -o $@ $< -ldl -pthread -lrt

# The man page, made from the command's own help texts.
$(B)/clnz.1: $(B)/clnz scripts/manpage README.md
	$(PYTHON) scripts/manpage $(B)/clnz $@

# The API's pages from scripts/man/*.3.in, their synopses copied from the header.
$(B)/man3/clnz.3: include/clnz.h $(wildcard scripts/man/*.3.in) scripts/manpage3
	rm -rf $(B)/man3
	$(PYTHON) scripts/manpage3 include/clnz.h scripts/man $(B)/man3

# clnz.pc and the CMake package from scripts/pkg/*.in. OpenCL is a public dependency
# (clnz.h includes CL/cl.h): Requires: OpenCL where pkg-config knows it.
PC_OPENCL = $(shell pkg-config --exists OpenCL 2>/dev/null && echo yes)
PKG_SED = -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
          -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
          -e 's|@SOVERSION@|$(SOVERSION)|g' \
          -e 's|@PC_REQUIRES@|$(if $(PC_OPENCL),OpenCL)|' -e 's|@PC_LIBS@|$(if $(PC_OPENCL),, -lOpenCL)|' \
          -e "s|@SIZEOF_VOID_P@|$$(echo | $(CC) -dM -E - | sed -n 's/^\#define __SIZEOF_POINTER__ //p')|"

# The versioned shared library with its two links, the static one, the
# header, the command and the man pages, clnz.pc for pkg-config and
# clnzConfig.cmake for CMake.
install: all $(B)/clnz.1 $(B)/man3/clnz.3
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(PKGCONFIGDIR) \
	  $(DESTDIR)$(CMAKEDIR)
	install -m 644 $(B)/libclnz.so $(DESTDIR)$(LIBDIR)/libclnz.so.$(VERSION)
	ln -sf libclnz.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libclnz.so.$(SOVERSION)
	ln -sf libclnz.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libclnz.so
	install -m 644 $(B)/libclnz.a $(DESTDIR)$(LIBDIR)/libclnz.a
	install -m 644 include/clnz.h $(DESTDIR)$(INCLUDEDIR)/clnz.h
	install -m 755 $(B)/clnz $(DESTDIR)$(BINDIR)/clnz
	install -m 644 $(B)/clnz.1 $(DESTDIR)$(MANDIR)/man1/clnz.1
	install -m 644 $(MAN3:%=$(B)/man3/%.3) $(DESTDIR)$(MANDIR)/man3/
	sed $(PKG_SED) scripts/pkg/clnz.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/clnz.pc
	sed $(PKG_SED) scripts/pkg/clnzConfig.cmake.in > $(DESTDIR)$(CMAKEDIR)/clnzConfig.cmake
	sed $(PKG_SED) scripts/pkg/clnzConfigVersion.cmake.in > $(DESTDIR)$(CMAKEDIR)/clnzConfigVersion.cmake
	@# a system-wide install: let the loader know the new library
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
	  ldconfig; fi

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libclnz.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libclnz.so.$(SOVERSION) \
	  $(DESTDIR)$(LIBDIR)/libclnz.so $(DESTDIR)$(LIBDIR)/libclnz.a \
	  $(DESTDIR)$(INCLUDEDIR)/clnz.h $(DESTDIR)$(BINDIR)/clnz \
	  $(DESTDIR)$(MANDIR)/man1/clnz.1 $(DESTDIR)$(PKGCONFIGDIR)/clnz.pc \
	  $(MAN3:%=$(DESTDIR)$(MANDIR)/man3/%.3) \
	  $(DESTDIR)$(CMAKEDIR)/clnzConfig.cmake $(DESTDIR)$(CMAKEDIR)/clnzConfigVersion.cmake
	@# the CMake package's own folder goes when it is empty
	-@rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null || true

deps:
	scripts/deps

# The benchmark's helpers (scripts/bench builds them itself through this).
bench-tools: $(B)/bench_clnz $(B)/bench_overhead $(B)/membw $(B)/bench_ab

$(B)/bench_clnz: scripts/bench_clnz.c scripts/bench_time.h $(B)/obj/c_loop.o $(B)/obj/mem_floor.o \
                $(IO_READ_OBJ) $(B)/libclnz.a
	$(CC) $(CFLAGS) -Iscripts -o $@ scripts/bench_clnz.c $(B)/obj/c_loop.o $(B)/obj/mem_floor.o \
	  $(IO_READ_OBJ) $(B)/libclnz.a $(LDLIBS)

# The C loop clnz is held to and the memory floor under both, built as well
# as this compiler can (-O3 for this very CPU), not as the library's host
# code is.
$(B)/obj/c_loop.o: scripts/c_loop.c scripts/c_loop.h include/clnz.h
$(B)/obj/mem_floor.o: scripts/mem_floor.c scripts/mem_floor.h scripts/read_loop.h
$(B)/obj/c_loop.o $(B)/obj/mem_floor.o:
	@mkdir -p $(@D)
	$(CC) -O3 -march=native -std=gnu11 -Wall -Wextra -pthread -Iinclude -c -o $@ $<

# A kernel change against the kernels before it, in one process.
$(B)/bench_ab: scripts/bench_ab.c scripts/bench_time.h $(IO_READ_OBJ) $(B)/libclnz.a
	$(CC) $(CFLAGS) -Iscripts -o $@ scripts/bench_ab.c $(IO_READ_OBJ) $(B)/libclnz.a $(LDLIBS)

# The per-call host overhead against a bare kernel launch (issue 17.4).
$(B)/bench_overhead: scripts/bench_overhead.c scripts/bench_time.h include/clnz.h \
                    $(B)/libclnz.a
	$(CC) $(CFLAGS) -Iscripts -o $@ scripts/bench_overhead.c $(B)/libclnz.a $(LDLIBS)

$(B)/membw: scripts/membw.c scripts/read_loop.h $(B)/obj/io/input.o
	$(CC) -O3 -march=native -std=gnu11 -Wall -Iinclude -Ihost -o $@ $< $(B)/obj/io/input.o -lpthread

# The imaging example (scripts/threshold_example.c): a synthetic night sky
# thresholded and its bright pixels found on one queue, into build/; the
# README shows copies (scripts/threshold_example_in.png, _out.png).
$(B)/threshold_example: scripts/threshold_example.c include/clnz.h $(B)/libclnz.a
	$(CC) $(CFLAGS) -o $@ scripts/threshold_example.c $(B)/libclnz.a -lpng $(LDLIBS)

example: $(B)/threshold_example
	$(PYTHON) scripts/example-input $(B)/example-sky.png
	$(B)/threshold_example $(B)/example-sky.png 120 $(B)/example-points.csv $(B)/example-marked.png

bench: all bench-tools
	$(PYTHON) scripts/bench

run: deps all
	$(PYTHON) scripts/run-sample

# Every kernel file compiles on its own as OpenCL C 1.2, for every dtype
# (clang's OpenCL front end; skipped where clang is missing), and defines
# every function it calls when built without optimizations: a C99 'inline'
# function has no definition of its own, so with -cl-opt-disable NVIDIA's
# compiler failed ("ptxas fatal: Unresolved extern function"). Helpers are
# plain functions, an external definition in every dialect: as 'static
# inline' PoCL's nz_write at 4096 work-items needed 16-32 MiB of stack, past
# its threads' 8 MiB (a crash in test_nonzero's full tier), plain less than
# 2 MiB, as with C99 'inline'; 'extern inline' is no definition at all in
# GNU89's reading, Oclgrind's ("Undefined external function").
CLANG ?= clang
KERNEL_CLANG = $(CLANG) -x cl -cl-std=CL1.2 -Xclang -finclude-default-header -Ikernels
# One line of defines and a file per syntax check, run $(JOBS) at a time
# (outside make's job slots: while make test builds, briefly twice JOBS
# processes): ~290 clang processes, 23 s one at a time before the quick
# tier's suites could start on the 2-core CI machine, 10.5 s on two. A
# failed check names its defines (parallel output may interleave).
check-kernels:
	@if ! command -v $(CLANG) >/dev/null; then echo "check-kernels: no clang, skipped"; exit 0; fi; \
	set -e; { for f in $(KERNEL_ALL); do echo $$f; done; \
	for d in 0 1 2 3 4 5 6 7 8 9 10 11; do \
	  echo -DCLNZ_DTYPE=$$d kernels/nonzero.cl; \
	  echo -DCLNZ_DTYPE=$$d kernels/count_axes.cl; \
	  for f in kernels/select.cl kernels/where.cl kernels/stream.cl; do for v in 1 2 4 8; do \
	    echo -DCLNZ_DTYPE=$$d -DVALUE_BYTES=$$v $$f; \
	  done; done; \
	  for a in 0 1; do for r in 0 1; do \
	    echo -DCLNZ_DTYPE=$$d -DVALUE_BYTES=8 -DLB_ATOM64=$$a -DLB_PLAIN_READ=$$r \
	      kernels/lookback.cl; \
	  done; done; \
	  for p in 1 2 3; do \
	    echo -DCLNZ_DTYPE=$$d -DVALUE_BYTES=4 -DLB_PROFILE=$$p kernels/lookback.cl; \
	  done; \
	  for s in 1 2; do \
	    echo -DCLNZ_DTYPE=$$d -DVALUE_BYTES=2 -DLB_SCATTER=$$s kernels/lookback.cl; \
	  done; \
	done; \
	echo -DSCAN_T=uint kernels/scan.cl; \
	echo -DCLNZ_NO_NT_STORE kernels/nonzero.cl; \
	for o in "5 -DIMAGE_READ=0" "6 -DIMAGE_READ=1" "10 -DIMAGE_READ=2" \
	    "5 -DIMAGE_READ=2 -DUNORM_SCALE=255"; do \
	  echo -DCLNZ_DTYPE=$$o kernels/image.cl; \
	done; } | xargs -P $(JOBS) -L 1 sh -c '$(KERNEL_CLANG) -fsyntax-only "$$@" || \
	  { echo "check-kernels: failed: $$*" >&2; exit 1; }' sh; \
	if grep -n '^[[:space:]]*inline' $(KERNEL_ALL); then \
	  echo "check-kernels: C99 'inline' above gives no definition: use a plain function"; exit 1; fi; \
	ll=$$(mktemp); trap 'rm -f "$$ll"' EXIT; \
	for f in $(KERNEL_ALL); do \
	  $(KERNEL_CLANG) -O0 -w -emit-llvm -S -o "$$ll" -DCLNZ_DTYPE=0 -DVALUE_BYTES=4 -DSCAN_T=uint $$f; \
	  undef=$$(sed -n 's/^declare .* @\([A-Za-z0-9_.]*\)(.*/\1/p' "$$ll" | \
	    grep -v '^_Z\|^llvm\.\|^__' || true); \
	  if [ -n "$$undef" ]; then echo "check-kernels: $$f calls $$undef without defining it" \
	    "at -O0 (C99 'inline' gives no definition: use a plain function)"; exit 1; fi; \
	done; \
	echo "check-kernels: every kernel file compiles alone as OpenCL C 1.2, and defines what it calls"

# Two tiers. make test (the README's test command, and CI's first step): every
# operation, dtype family, layout, strategy and error class at small sizes,
# a few minutes from a fresh clone. make test-full: the long cases too (every
# launch shape, huge inputs, fault injection, tuning runs: CLNZ_TEST_FULL=1
# in the suites), the install and Python module tests, then the sanitizers,
# Oclgrind's checks and the fuzzers. The C suites also run against the
# kernel files themselves (CLNZ_KERNEL_DIR), so a kernel that only compiles
# once embedded cannot slip through. The suites keep their tuning and program
# caches in build/, not in ~/.cache.
TESTS_FULL_ONLY = test_faults
# Test processes at once: the C suites, the command-line and Python module
# tests through pytest-xdist where it is installed (scripts/deps installs
# it), and check-kernels' clang runs. A cold run is mostly PoCL compiling programs, one at a time
# in each process: on the 2-core CI machine, from a fresh clone with PoCL's
# own cache empty, make test took 4m01s one process at a time (the C suites
# 2m07s, the command-line tests 2m06s of it), and the command-line tests
# 1m12s on two workers. The tiers build with as many jobs too; under
# make -jN the build and the suites share its job slots instead.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
ifneq ($(shell [ "$(JOBS)" -ge 1 ] 2>/dev/null && echo ok),ok)
$(error JOBS=$(JOBS): give a number of test processes, 1 or more)
endif
SUITE_JOBS = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS))
PYTEST_JOBS = $(shell [ "$(JOBS)" -gt 1 ] 2>/dev/null && $(PYTHON) -c 'import xdist' 2>/dev/null && \
                echo "-n $(JOBS)")
SUITES ?= $(filter-out $(TESTS_FULL_ONLY:%=$(B)/%),$(TEST_BIN))
INSTALL_TEST ?= 0
PYMOD_TEST ?= 0
suites: export CLNZ_CACHE_DIR = $(CURDIR)/build/cache
suites: export CLNZ = $(CURDIR)/$(B)/clnz
suites: export CLNZ_FAULT_SHIM = $(CURDIR)/$(B)/fault_shim.so
suites: export CLNZ_EXAMPLE = $(CURDIR)/$(B)/threshold_example
# PoCL installs a SIGFPE handler that steps over integer division by zero,
# the host's too: a launch plan that divided by an unset shape crashed on
# NVIDIA and passed here. Off, such a division is a crash here as well.
suites: export POCL_SIGFPE_HANDLER = 0
# The quick tier's kernels are built without optimizations: PoCL compiles
# them three times faster, and a cold compile is most of the quick tier's
# time. The long tier tests the optimized kernels users get.
suites: export CLNZ_BUILD_OPTIONS = $(if $(filter 1,$(CLNZ_TEST_FULL)),,-cl-opt-disable)
suites: all $(TEST_BIN) $(B)/fault_shim.so $(B)/threshold_example check-kernels
	@$(MAKE) --no-print-directory $(SUITE_JOBS) --output-sync=target $(SUITE_RUNS) \
	  run-suite/kernel-dir
	@if [ -n "$(strip $(PYTESTS))" ]; then echo "== command-line tests against numpy"; \
	  $(PYTHON) -m pytest -q $(PYTEST_JOBS) $(PYTESTS); fi
	@if [ "$(INSTALL_TEST)" = 1 ]; then echo "== make install, used out of tree through pkg-config"; \
	  MAKEFLAGS= tests/test_install.sh $(B); fi
	@if [ "$(PYMOD_TEST)" = 1 ]; then echo "== the Python module against numpy"; \
	  CLNZ_LIBRARY=$(CURDIR)/$(B)/libclnz.so PYTHONPATH=$(CURDIR)/host/python \
	  $(PYTHON) -m pytest -q $(PYTEST_JOBS) tests/test_python.py; fi

# $(call logged,NAME,COMMAND): COMMAND's output goes to $(B)/logs/NAME.log
# as it runs (a suite that hangs can be watched there) and is printed when
# it ends; after SUITE_TIMEOUT seconds it is stopped and named.
SUITE_TIMEOUT ?= 3600
logged = mkdir -p $(B)/logs; log=$(B)/logs/$(1).log; timeout $(SUITE_TIMEOUT) $(2) > $$log 2>&1; \
  rc=$$?; cat $$log; [ $$rc != 124 ] || echo "$(1): stopped after $(SUITE_TIMEOUT) s (SUITE_TIMEOUT)"; \
  exit $$rc

# One suite of the C tests (suites runs them $(JOBS) at a time: make prints
# each one's output whole when it ends), and test_api again on the kernels
# built from kernels/ itself, so one that only compiles embedded cannot slip
# through.
run-suite/kernel-dir:
	@echo "== kernels built from kernels/ (CLNZ_KERNEL_DIR)"
	@$(call logged,kernel-dir,env CLNZ_KERNEL_DIR=kernels $(B)/test_api)
run-suite/%:
	@echo "== $*"
	@$(call logged,$(notdir $*),$*)
# test_strategies, the longest suite by far (its long tier alone took 14.5
# min from cold caches on the CI machine, the look-back's three tests 70 %
# of it; every other suite together 7), runs as two jobs, first: the tests
# named STRATEGIES_PART, and the others.
STRATEGIES_PART = test_lookback*
SUITE_RUNS = $(if $(filter $(B)/test_strategies,$(SUITES)),run-suite/strategies-part \
               run-suite/strategies-rest) \
             $(patsubst %,run-suite/%,$(filter-out $(B)/test_strategies,$(SUITES)))
run-suite/strategies-part:
	@echo "== $(B)/test_strategies: $(STRATEGIES_PART)"
	@$(call logged,strategies-part,env CLNZ_TEST_ONLY='$(STRATEGIES_PART)' $(B)/test_strategies)
run-suite/strategies-rest:
	@echo "== $(B)/test_strategies: all but $(STRATEGIES_PART)"
	@$(call logged,strategies-rest,env CLNZ_TEST_SKIP='$(STRATEGIES_PART)' $(B)/test_strategies)

# Both tiers install what is missing first, as make run does (a fresh Debian
# machine has no PoCL, cmocka or numpy; scripts/deps is quiet when all is
# there), but only where that needs no password and works: else they go on.
deps-try:
	@scripts/deps --try

test: deps-try
	@$(MAKE) --no-print-directory $(SUITE_JOBS) suites

# The long tier; last, the benchmark's helpers are built, so that they
# still build when a lent GPU's few minutes come (scripts/gpu-check).
test-full: export CLNZ_TEST_FULL = 1
test-full: deps-try
	@$(MAKE) --no-print-directory $(SUITE_JOBS) suites SUITES="$(TEST_BIN)" INSTALL_TEST=1 PYMOD_TEST=1
	@$(MAKE) --no-print-directory test-asan PYTESTS="tests/test_cli_image.py tests/test_cli_chunks.py"
	@$(MAKE) --no-print-directory test-tsan
	@$(MAKE) --no-print-directory test-oclgrind
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=15
	@$(MAKE) --no-print-directory bench-tools

# The whole suite again, host code built with AddressSanitizer,
# UndefinedBehaviorSanitizer (every report fatal) and LeakSanitizer, in
# build/asan (sharing build/cache: compiled programs do not depend on how
# the host code was built). tests/lsan.supp names the leaks that are
# PoCL's own; full stacks (fast_unwind_on_malloc=0) so that it can.
# intercept_tls_get_addr=0: PoCL dlopens and dlcloses each compiled kernel
# library, and the leak checker's walk of dynamic TLS blocks then sometimes
# follows a stale one and dies ("Tracer caught signal 11", ~1 run in 40).
# PYTESTS=... picks command-line test files (CI: the image readers').
SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# use_sigaltstack=0: PoCL's LLVM replaces a compiling thread's alternate
# signal stack with one it malloc'd, and ASan then fails to unmap it when
# the thread exits (test_threads' threads compile and exit).
test-asan: export ASAN_OPTIONS = detect_leaks=1:fast_unwind_on_malloc=0:intercept_tls_get_addr=0:use_sigaltstack=0
test-asan: export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
test-asan: export UBSAN_OPTIONS = print_stacktrace=1
test-asan:
	$(MAKE) $(SUITE_JOBS) B=build/asan CC="$(CC) $(SANITIZE)" INSTALL_TEST=0 PYMOD_TEST=0 suites

# The command-line tests with $(B)/clnz under valgrind memcheck: a wrapper in
# $(B)/valgrind runs each clnz process under it, logging to
# $(B)/valgrind/log.PID; any report (an error, or a leak of any kind that
# tests/valgrind.supp does not name) fails the target. Slow: under valgrind
# PoCL sees a CPU without AVX-512 and compiles its kernels again (a minute
# or more each, once: they land in build/cache). VALGRIND_PYTESTS picks files.
VALGRIND_PYTESTS ?= $(PYTESTS)
VALGRIND = valgrind --quiet --error-exitcode=99 --leak-check=full --num-callers=500 \
           --show-leak-kinds=definite,indirect,possible \
           --errors-for-leak-kinds=definite,indirect,possible \
           --suppressions=$(CURDIR)/tests/valgrind.supp
test-valgrind: export CLNZ_CACHE_DIR = $(CURDIR)/build/cache
test-valgrind: export CLNZ = $(CURDIR)/$(B)/valgrind/clnz
test-valgrind: export CLNZ_TEST_TIMEOUT = 3600
test-valgrind: export CLNZ_FAULT_SHIM = $(CURDIR)/$(B)/fault_shim.so
test-valgrind: all $(B)/fault_shim.so
	@rm -rf $(B)/valgrind && mkdir -p $(B)/valgrind
	@# hwloc would print that its x86 backend cannot work under valgrind, and PoCL,
	@# compiling for the CPU valgrind emulates, prints clang's "N warnings generated."
	@# (never seen outside valgrind): neither is clnz's, so the wrapper drops them
	@printf '#!/bin/bash\nexport HWLOC_COMPONENTS=-x86\nexec %s --log-file=%s/log.%%p %s "$$@" 2> >(grep -v "^[0-9]* warnings\\? generated\\.$$" >&2)\n' \
	  "$(VALGRIND)" "$(CURDIR)/$(B)/valgrind" "$(CURDIR)/$(B)/clnz" > $(B)/valgrind/clnz
	@chmod +x $(B)/valgrind/clnz
	$(PYTHON) -m pytest -q $(PYTEST_JOBS) $(VALGRIND_PYTESTS)
	@n=$$(ls $(B)/valgrind | grep -c '^log\.'); bad=$$(grep -l . $(B)/valgrind/log.* || true); \
	if [ -n "$$bad" ]; then cat $$bad; echo "test-valgrind: reports in $$bad"; exit 1; fi; \
	echo "test-valgrind: $$n clnz processes under memcheck, no report"

# Oclgrind, a second OpenCL implementation that simulates a device and
# checks every kernel for data races and API misuse: small cases of every
# strategy (test_strategies), and of the mask, where/select, batched and
# image kernels. Its ICD is made visible through a private vendors folder
# (OCL_ICD_VENDORS), never by touching /etc/OpenCL. Its reports never change
# an OpenCL return code, so a suite fails on any "Kernel:" or "OCLGRIND
# FATAL" line on stderr; tests/oclgrind/selfcheck.c first proves that a
# seeded race is caught. Programs are built fresh (a cached binary loses the
# source lines of the reports). --uninitialized stays off: Oclgrind 21.10
# reports false errors on CL_MEM_USE_HOST_PTR buffers with it.
# test_results_made_ahead is left out: what it tests is the host's sizing
# of blocking results (ops/ahead.c), on inputs past 256 KiB of entries,
# and it took about 10 of the simulator's minutes; the kernels it drives
# (counts, writes short of their count) the other tests check here.
OCLGRIND_ICD ?= /usr/lib/oclgrind/liboclgrind-rt-icd.so
OCLGRIND_SUITES = test_strategies test_count_batched test_batched test_select test_mask test_images
test-oclgrind: export OCL_ICD_VENDORS = $(CURDIR)/$(B)/oclgrind/vendors
test-oclgrind: export OCLGRIND_DATA_RACES = 1
test-oclgrind: export OCLGRIND_CHECK_API = 1
test-oclgrind: export CLNZ_CACHE_DIR = $(CURDIR)/$(B)/oclgrind/cache
test-oclgrind: export CLNZ_TEST_FULL = 0
test-oclgrind: export CLNZ_TEST_SKIP = test_results_made_ahead
test-oclgrind: $(OCLGRIND_SUITES:%=$(B)/%) $(B)/oclgrind-selfcheck
	@[ -f "$(OCLGRIND_ICD)" ] || { echo "test-oclgrind: no $(OCLGRIND_ICD) (scripts/deps installs oclgrind)"; exit 1; }
	@rm -rf $(B)/oclgrind && mkdir -p $(B)/oclgrind/vendors
	@echo "$(OCLGRIND_ICD)" > $(B)/oclgrind/vendors/oclgrind.icd
	@$(B)/oclgrind-selfcheck > $(B)/oclgrind/selfcheck.log 2>&1 || { cat $(B)/oclgrind/selfcheck.log; exit 1; }
	@grep -q "data race" $(B)/oclgrind/selfcheck.log || { cat $(B)/oclgrind/selfcheck.log; \
	  echo "test-oclgrind: Oclgrind did not report the seeded race: its checks are not on"; exit 1; }
	@echo "== Oclgrind reports a seeded race: its checks are on"
	@$(MAKE) --no-print-directory $(SUITE_JOBS) --output-sync=target \
	  $(OCLGRIND_SUITES:%=oclgrind-suite/%)

# One suite under Oclgrind (test-oclgrind runs them $(JOBS) at a time, the
# longest first), its log in $(B)/oclgrind/.
oclgrind-suite/%:
	@echo "== $* under Oclgrind (data races, API)"; log=$(B)/oclgrind/$*.log; \
	if ! $(B)/$* > $$log 2>&1; then tail -40 $$log; exit 1; fi; \
	if grep -q "Kernel:\|OCLGRIND FATAL" $$log; then \
	  grep -B4 -A14 "Kernel:\|OCLGRIND FATAL" $$log | head -80; \
	  echo "test-oclgrind: Oclgrind reported the kernels of $*"; exit 1; fi

$(B)/oclgrind-selfcheck: tests/oclgrind/selfcheck.c
	@mkdir -p $(B)
	$(CC) -O2 -Wall -o $@ $< -lOpenCL

# The threads suite built with ThreadSanitizer in build/tsan: several threads
# on one context and on a context each; and the transposed inputs, whose
# C-order copies of 4 MiB or more are split between threads
# (core/relayout.c). Any report fails it.
test-tsan: export CLNZ_CACHE_DIR = $(CURDIR)/build/cache
test-tsan: export TSAN_OPTIONS = halt_on_error=1
test-tsan:
	$(MAKE) B=build/tsan CC="$(CC) -fsanitize=thread -fno-omit-frame-pointer" build/tsan/test_threads \
	  build/tsan/test_nonzero
	build/tsan/test_threads
	CLNZ_TEST_ONLY='test_transposed*' build/tsan/test_nonzero

# libFuzzer targets for the parsers of untrusted bytes (clang, with ASan and
# UBSan), built from the sources; seeds in tests/fuzz/<name>/. New inputs go
# to build/fuzz/corpus-<name>, a crash to build/fuzz/crash-*.
FUZZ_CC ?= clang
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
             -std=gnu11 -Iinclude -Ihost -Ikernels
FUZZ_SECONDS ?= 30
FUZZ_TARGETS = fuzz_array fuzz_cache fuzz_args

$(B)/fuzz/fuzz_array: tests/fuzz/fuzz_array.c host/io/image.c host/io/npy.c host/io/npy_header.c \
                      host/io/input.c $(LIB_SRC) \
                      $(B)/kernels_src.c
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ -lpng $(LDLIBS)

$(B)/fuzz/fuzz_cache: tests/fuzz/fuzz_cache.c $(LIB_SRC) $(B)/kernels_src.c
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ $(LDLIBS)

$(B)/fuzz/fuzz_args: tests/fuzz/fuzz_args.c host/cli/args.c host/io/text_out.c $(LIB_SRC) \
                     $(B)/kernels_src.c
	@mkdir -p $(B)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ $(LDLIBS)

# -close_fd_mask=2: the targets' own messages (usage errors) stay out of the
# log; libFuzzer's and the sanitizers' reports still reach it. A target's
# dictionary, if any, is tests/fuzz/<name>.dict.
fuzz: $(FUZZ_TARGETS:%=$(B)/fuzz/%)
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(B)/fuzz/corpus-$$t; \
	  echo "== $$t, $(FUZZ_SECONDS) s"; \
	  dict=tests/fuzz/$${t#fuzz_}.dict; [ -f $$dict ] && dict=-dict=$$dict || dict=; \
	  if ! $(B)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	       -close_fd_mask=2 $$dict \
	       -artifact_prefix=$(B)/fuzz/ $(B)/fuzz/corpus-$$t tests/fuzz/$${t#fuzz_} \
	       > $(B)/fuzz/$$t.log 2>&1; then \
	    tail -40 $(B)/fuzz/$$t.log; exit 1; \
	  fi; \
	  grep -E "stat::number_of_executed_units|stat::new_units_added" $(B)/fuzz/$$t.log; \
	done

clean:
	rm -rf build
