# clnz: build the library, the command and the tests into build/.
#   make          library (build/libclnz.so, build/libclnz.a) and build/clnz
#   make run      install what is missing, build, find the nonzeros of a sample
#   make test     build and run the whole test suite on the default device (PoCL in CI)
CC ?= cc
PYTHON ?= /usr/bin/python3
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wshadow -Wno-missing-field-initializers -fPIC -Iinclude -Ihost
LDLIBS = -lOpenCL -lm

LIB_SRC = host/error.c host/devices.c host/context.c host/program.c host/plan.c \
          host/launch.c host/tensor.c host/predicate.c host/scan.c host/nz_stages.c \
          host/enqueue.c host/host_api.c host/cache.c host/program_cache.c \
          host/tune_store.c host/tune.c host/transfer.c host/select.c host/where.c \
          host/chunked.c host/batched.c host/channels.c
CLI_SRC = host/cli_main.c host/cli_npy.c host/cli_tune.c host/cli_select.c host/cli_image.c
KERNEL_MAIN = kernels/scan.cl kernels/nonzero.cl kernels/mask.cl kernels/select.cl kernels/where.cl \
              kernels/image.cl
KERNEL_ALL = $(KERNEL_MAIN) kernels/element.cl kernels/blelloch.cl kernels/bitpos.cl \
             kernels/chunk.cl kernels/value.cl
TESTS = test_scan test_mask test_nonzero test_batched test_images test_api test_select test_large test_cache test_tune

LIB_OBJ = $(LIB_SRC:host/%.c=build/obj/%.o) build/obj/kernels_src.o
CLI_OBJ = $(CLI_SRC:host/%.c=build/obj/%.o)
TEST_BIN = $(TESTS:%=build/%)
PYTESTS = tests/test_cli.py tests/test_cli_select.py tests/test_cli_chunks.py \
          tests/test_cli_batch.py tests/test_cli_image.py

.PHONY: all run test check-kernels deps clean bench bench-tools
all: build/libclnz.so build/libclnz.a build/clnz

build/obj/%.o: host/%.c include/clnz.h host/internal.h host/devices.h host/cli_npy.h host/cli.h
	@mkdir -p build/obj
	$(CC) $(CFLAGS) -c $< -o $@

build/kernels_src.c: $(KERNEL_ALL) scripts/embed-kernels
	@mkdir -p build
	scripts/embed-kernels $@ $(KERNEL_MAIN)

build/obj/kernels_src.o: build/kernels_src.c
	@mkdir -p build/obj
	$(CC) $(CFLAGS) -c $< -o $@

build/libclnz.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

build/libclnz.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libclnz.so.0 -o $@ $^ $(LDLIBS)

build/clnz: $(CLI_OBJ) build/libclnz.a
	$(CC) -o $@ $(CLI_OBJ) build/libclnz.a -lpng $(LDLIBS)

build/obj/tests/%.o: tests/%.c tests/testutil.h include/clnz.h
	@mkdir -p build/obj/tests
	$(CC) $(CFLAGS) -Itests -c $< -o $@

build/obj/tests/testutil.o: tests/testutil.c tests/testutil.h include/clnz.h
	@mkdir -p build/obj/tests
	$(CC) $(CFLAGS) -Itests -c $< -o $@

build/test_%: build/obj/tests/test_%.o build/obj/tests/testutil.o build/libclnz.a
	$(CC) -o $@ $^ -lcmocka $(LDLIBS)

deps:
	scripts/deps

# The benchmark's helpers (scripts/bench builds them itself through this).
bench-tools: build/bench_clnz build/membw

build/bench_clnz: scripts/bench_clnz.c build/obj/cli_npy.o build/libclnz.a
	$(CC) $(CFLAGS) -o $@ scripts/bench_clnz.c build/obj/cli_npy.o build/libclnz.a $(LDLIBS)

build/membw: scripts/membw.c
	$(CC) -O3 -march=native -std=gnu11 -Wall -o $@ $< -lpthread

bench: all bench-tools
	$(PYTHON) scripts/bench

run: deps all
	$(PYTHON) scripts/run-sample

# Every kernel file compiles on its own as OpenCL C 1.2, for every dtype
# (clang's OpenCL front end; skipped where clang is missing).
CLANG ?= clang
check-kernels:
	@if ! command -v $(CLANG) >/dev/null; then echo "check-kernels: no clang, skipped"; exit 0; fi; \
	set -e; for f in $(KERNEL_ALL); do \
	  $(CLANG) -x cl -cl-std=CL1.2 -fsyntax-only -Xclang -finclude-default-header -Ikernels $$f; \
	done; \
	for d in 0 1 2 3 4 5 6 7 8 9 10 11; do \
	  $(CLANG) -x cl -cl-std=CL1.2 -fsyntax-only -Xclang -finclude-default-header -Ikernels \
	    -DCLNZ_DTYPE=$$d kernels/nonzero.cl; \
	  for f in kernels/select.cl kernels/where.cl; do for v in 1 2 4 8; do \
	    $(CLANG) -x cl -cl-std=CL1.2 -fsyntax-only -Xclang -finclude-default-header -Ikernels \
	      -DCLNZ_DTYPE=$$d -DVALUE_BYTES=$$v $$f; \
	  done; done; \
	done; \
	$(CLANG) -x cl -cl-std=CL1.2 -fsyntax-only -Xclang -finclude-default-header -Ikernels \
	  -DSCAN_T=uint kernels/scan.cl; \
	for o in "5 -DIMAGE_READ=0" "6 -DIMAGE_READ=1" "10 -DIMAGE_READ=2" "5 -DIMAGE_READ=2 -DUNORM_SCALE=255"; do \
	  $(CLANG) -x cl -cl-std=CL1.2 -fsyntax-only -Xclang -finclude-default-header -Ikernels \
	    -DCLNZ_DTYPE=$$o kernels/image.cl; \
	done; \
	echo "check-kernels: every kernel file compiles alone as OpenCL C 1.2"

# The C suites run against the kernel files themselves too (CLNZ_KERNEL_DIR),
# so a kernel that only compiles once embedded cannot slip through.
# The suites keep their tuning and program caches in build/, not in ~/.cache.
test: export CLNZ_CACHE_DIR = $(CURDIR)/build/cache
test: all $(TEST_BIN) check-kernels
	@set -e; for t in $(TEST_BIN); do echo "== $$t"; $$t; done
	@echo "== kernels built from kernels/ (CLNZ_KERNEL_DIR)"; CLNZ_KERNEL_DIR=kernels build/test_api
	@echo "== command-line tests against numpy"
	$(PYTHON) -m pytest -q $(PYTESTS)

clean:
	rm -rf build
