# Kiln: build, test and measure. `make test` sets up everything on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CC ?= cc

INC := -Imicroruntime/include
CWARN := -std=c99 -Wall -Wextra -Werror -Wno-unused-parameter
CDEFS := -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
CFLAGS ?= -O2 -g
# The graph executor (src/graph/: JSON reader, graph, executor, factory) is in every library
# but measured apart from the core by `make size`.
MR_GRAPH_SRCS := $(sort $(wildcard microruntime/src/graph/*.c))
# The bytecode VM (src/vm/: executable loader, validator, interpreter, builtins, allocators).
MR_VM_SRCS := $(sort $(wildcard microruntime/src/vm/*.c))
# GPU backends (src/device/: drivers found by dlopen at run time).
MR_DEVICE_SRCS := $(sort $(wildcard microruntime/src/device/*.c))
MR_SRCS := $(sort $(wildcard microruntime/src/*.c)) $(MR_GRAPH_SRCS) $(MR_VM_SRCS) $(MR_DEVICE_SRCS)
MR_HDRS := $(wildcard microruntime/include/microruntime/*.h microruntime/src/*.h \
  microruntime/src/graph/*.h microruntime/src/vm/*.h microruntime/src/device/*.h)
# The dlopen-free static library leaves out the shared-library loader, the dynamic
# loading of platform.h and the ELF checks made before dlopen.
MR_DL_SRCS := $(addprefix microruntime/src/,module_dso.c platform_dl.c elf_check.c) $(MR_DEVICE_SRCS)
MR_NODL_SRCS := $(filter-out $(MR_DL_SRCS),$(MR_SRCS))
# In every library, but not part of the core that `make size` measures: benchmarking
# (time_evaluator), DLPack exchange with other frameworks, and saving params (deployments
# load them). A static link of a model that uses none of these leaves them out.
MR_EXTRA_SRCS := $(addprefix microruntime/src/,timer.c tensor_dlpack.c params_save.c map.c)
MR_CORE_SRCS := $(filter-out $(MR_EXTRA_SRCS) $(MR_GRAPH_SRCS) $(MR_VM_SRCS),$(MR_NODL_SRCS))
# Likewise for the graph executor: TVM's global functions and the packed functions of the
# executor and factory modules (for Python, TVM-style callers, debugging and profiling;
# mr_graph_executor_register adds them) stay out of a static app that uses graph_executor.h's
# C API: open a model, create an executor, set inputs or load params, run, read outputs.
MR_GRAPH_EXTRA_SRCS := $(addprefix microruntime/src/graph/,extras.c executor_module.c \
  factory_module.c args.c)
MR_GRAPH_CORE_SRCS := $(filter-out $(MR_GRAPH_EXTRA_SRCS),$(MR_GRAPH_SRCS))
# And for the VM: TVM's packed-function methods (src/vm/extras.c) are for Python and TVM-style
# callers; an app that calls functions through the C API links none of them.
MR_VM_EXTRA_SRCS := microruntime/src/vm/extras.c
MR_VM_CORE_SRCS := $(filter-out $(MR_VM_EXTRA_SRCS),$(MR_VM_SRCS))
# The AOT runtime (src/aot/: kernel workspaces from the caller's arena, serial parallel loops,
# errors): what a model compiled for the AOT executor links instead of the whole runtime. It
# defines the same services, so it is a library of its own, in no other.
MR_AOT_SRCS := $(sort $(wildcard microruntime/src/aot/*.c))
# tests/c/test_aot_model.c runs a generated model: tests/compiler/relay/test_aot_c_app.py
# builds it (not a `make ctest` test). The other test_aot_* tests link the AOT runtime only.
CTESTS := $(filter-out test_aot_model,$(patsubst tests/c/%.c,%,$(sort $(wildcard tests/c/test_*.c))))
# Hand-written ABI kernels that the module tests dlopen.
FIXTURES := $(patsubst tests/c/fixtures/%.c,build/tests/fixtures/%.so,$(sort $(wildcard tests/c/fixtures/*.c)))
# Only MR_DLL symbols leave the shared library.
MR_VIS := -fvisibility=hidden
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: all runtime venv test ctest pytest test-asan ctest-asan ctest-valgrind test-tsan lint size fuzz \
        test-interop test-onnx demo apps cortex-m clean

all: runtime

# ---- the C runtime -----------------------------------------------------------
runtime: build/libmicroruntime.a build/libmicroruntime_nodl.a build/libmicroruntime.so \
  build/libmicroruntime_aot.a

build/obj/%.o: microruntime/src/%.c $(MR_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) $(CFLAGS) $(MR_VIS) -fPIC $(INC) -c $< -o $@

build/obj_nodl/%.o: microruntime/src/%.c $(MR_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) $(CFLAGS) $(MR_VIS) -DMR_NO_DLOPEN $(INC) -c $< -o $@

build/obj_asan/%.o: microruntime/src/%.c $(MR_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) -O1 -g $(SAN) $(MR_VIS) -fPIC $(INC) -c $< -o $@

build/libmicroruntime.a: $(patsubst microruntime/src/%.c,build/obj/%.o,$(MR_SRCS))
	@rm -f $@; ar rcs $@ $^

build/libmicroruntime_nodl.a: $(patsubst microruntime/src/%.c,build/obj_nodl/%.o,$(MR_NODL_SRCS))
	@rm -f $@; ar rcs $@ $^

build/libmicroruntime.so: $(patsubst microruntime/src/%.c,build/obj/%.o,$(MR_SRCS))
	$(CC) -shared -o $@ $^ -ldl -lpthread -lm

build/libmicroruntime_asan.a: $(patsubst microruntime/src/%.c,build/obj_asan/%.o,$(MR_SRCS))
	@rm -f $@; ar rcs $@ $^

build/libmicroruntime_aot.a: $(patsubst microruntime/src/%.c,build/obj_nodl/%.o,$(MR_AOT_SRCS))
	@rm -f $@; ar rcs $@ $^

build/libmicroruntime_aot_asan.a: $(patsubst microruntime/src/%.c,build/obj_asan/%.o,$(MR_AOT_SRCS))
	@rm -f $@; ar rcs $@ $^

# ---- C tests -------------------------------------------------------------------
# test_graph_arena refuses allocations after initialisation: the runtime's calls to the
# allocator go through its wrappers.
ALLOC_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign
build/tests/test_graph_arena build/tests_asan/test_graph_arena: TEST_LDFLAGS := $(ALLOC_WRAP)

build/tests/%: tests/c/%.c tests/c/check.h $(MR_HDRS) build/libmicroruntime.a
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) $(CFLAGS) $(INC) -Imicroruntime/src -Itests/c $< build/libmicroruntime.a -o $@ -rdynamic -ldl -lpthread -lm $(TEST_LDFLAGS)

build/tests_asan/%: tests/c/%.c tests/c/check.h $(MR_HDRS) build/libmicroruntime_asan.a
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) -O1 -g $(SAN) $(INC) -Imicroruntime/src -Itests/c $< build/libmicroruntime_asan.a -o $@ -rdynamic -ldl -lpthread -lm $(TEST_LDFLAGS)

# The AOT runtime's tests link it alone, with the allocator refusing every call.
build/tests/test_aot_%: tests/c/test_aot_%.c tests/c/check.h $(MR_HDRS) build/libmicroruntime_aot.a
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) $(CFLAGS) $(INC) -Itests/c $< build/libmicroruntime_aot.a -o $@ $(ALLOC_WRAP)

build/tests_asan/test_aot_%: tests/c/test_aot_%.c tests/c/check.h $(MR_HDRS) build/libmicroruntime_aot_asan.a
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) -O1 -g $(SAN) $(INC) -Itests/c $< build/libmicroruntime_aot_asan.a -o $@ $(ALLOC_WRAP)

build/tests/fixtures/%.so: tests/c/fixtures/%.c $(wildcard microruntime/include/microruntime/*.h)
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) -O2 -shared -fPIC $(INC) $< -o $@

ctest: $(addprefix build/tests/,$(CTESTS)) $(FIXTURES)
	@set -e; for t in $(CTESTS); do echo "== $$t"; build/tests/$$t; done

ctest-asan: $(addprefix build/tests_asan/,$(CTESTS)) $(FIXTURES)
	@set -e; for t in $(CTESTS); do echo "== $$t (asan+ubsan)"; \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 build/tests_asan/$$t; done

ctest-valgrind: $(addprefix build/tests/,$(CTESTS)) $(FIXTURES)
	@set -e; for t in $(CTESTS); do echo "== $$t (valgrind)"; \
	  valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
	    --suppressions=tests/c/valgrind.supp build/tests/$$t; done

# ---- the small configuration ------------------------------------------------------
# The runtime built with MR_CONFIG_SMALL, as on a microcontroller but with dlopen (for the
# fixtures): its error sites record a code instead of a message, so under it CHECK_FAIL checks
# the status, the kind and the code (check.h). The tests that hold within its limits run here;
# the others test limits or message text of the normal build.
SMALL_CTESTS := test_blob test_dtype test_error test_graph_arena test_graph_concurrency \
  test_graph_executor \
  test_graph_json test_graph_linked_params test_module test_module_loader test_module_replace \
  test_ndarray test_object test_params test_registry test_timer test_workspace \
  test_workspace_sizes
MR_SMALL_SRCS := $(filter-out $(MR_DEVICE_SRCS),$(MR_SRCS))

build/obj_small/%.o: microruntime/src/%.c $(MR_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) $(CFLAGS) -DMR_CONFIG_SMALL $(INC) -c $< -o $@

build/libmicroruntime_small.a: $(patsubst microruntime/src/%.c,build/obj_small/%.o,$(MR_SMALL_SRCS))
	@rm -f $@; ar rcs $@ $^

build/tests_small/%: tests/c/%.c tests/c/check.h $(MR_HDRS) build/libmicroruntime_small.a
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) $(CFLAGS) -DMR_CONFIG_SMALL $(INC) -Imicroruntime/src -Itests/c $< build/libmicroruntime_small.a -o $@ -rdynamic -ldl -lpthread -lm $(TEST_LDFLAGS)
build/tests_small/test_graph_arena: TEST_LDFLAGS := $(ALLOC_WRAP)

.PHONY: ctest-small
ctest-small: $(addprefix build/tests_small/,$(SMALL_CTESTS)) $(FIXTURES)
	@set -e; for t in $(SMALL_CTESTS); do echo "== $$t (small config)"; build/tests_small/$$t; done

# ---- ThreadSanitizer -----------------------------------------------------------------
# The tests that use threads (the thread pool, graph executors shared by threads and one per
# thread, the VM), against a -fsanitize=thread build of the runtime; any race reported fails.
TSAN := -fsanitize=thread -fno-omit-frame-pointer
TSAN_TESTS := test_threadpool test_graph_concurrency test_vm

build/obj_tsan/%.o: microruntime/src/%.c $(MR_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) -O1 -g $(TSAN) $(MR_VIS) -fPIC $(INC) -c $< -o $@

build/libmicroruntime_tsan.a: $(patsubst microruntime/src/%.c,build/obj_tsan/%.o,$(MR_SRCS))
	@rm -f $@; ar rcs $@ $^

build/tests_tsan/%: tests/c/%.c tests/c/check.h $(MR_HDRS) build/libmicroruntime_tsan.a
	@mkdir -p $(@D)
	$(CC) $(CWARN) $(CDEFS) -O1 -g $(TSAN) $(INC) -Imicroruntime/src -Itests/c $< build/libmicroruntime_tsan.a -o $@ -rdynamic -ldl -lpthread -lm

test-tsan: $(addprefix build/tests_tsan/,$(TSAN_TESTS)) $(FIXTURES)
	@set -e; for t in $(TSAN_TESTS); do echo "== $$t (tsan)"; \
	  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" build/tests_tsan/$$t; done

# ---- fuzzing the loaders -----------------------------------------------------------
# Each target (tests/c/fuzz/fuzz_<name>.c) runs FUZZ_SECONDS from its seeds: params files, graph
# JSON and manifests (the JSON reader and graph loader),
# library blobs, device-module payloads (OpenCL/CUDA code and kernel tables), the ELF
# checks made before dlopen (seeded with the fixture .so files), VM executables (loaded), and
# VM bytecode that validates, run (vm_run, seeded with the vm seeds; its build stops a call
# after MR_VM_MAX_STEPS instructions, so that loops in the bytecode end, and refuses one
# allocation over MR_MAX_ALLOC_BYTES, so that a huge tensor is a clean error, not an OOM).
# With clang: libFuzzer (coverage-guided) + ASan/UBSan; without it, tests/c/fuzz/driver.c
# (random mutations of the seeds) with the C compiler's ASan/UBSan.
FUZZ_SECONDS ?= 20
FUZZ_TARGETS := params blob elf graph vm vm_run devmod
FUZZ_DEFS := -DMR_VM_MAX_STEPS=10000 -DMR_MAX_ALLOC_BYTES=67108864
# clang counts only if it links libFuzzer (Debian: packages clang and libclang-rt-dev).
ifneq ($(filter fuzz,$(MAKECMDGOALS)),)
FUZZ_CLANG := $(shell mkdir -p build && printf 'int LLVMFuzzerTestOneInput(void){return 0;}' \
  > build/fuzz_probe.c && clang -fsanitize=fuzzer,address build/fuzz_probe.c \
  -o build/fuzz_probe >/dev/null 2>&1 && command -v clang)
endif
ifneq ($(FUZZ_CLANG),)
FUZZ_CC := $(FUZZ_CLANG)
FUZZ_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_OBJ_FLAGS := $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_LINK_FLAGS := $(FUZZ_SAN) -fsanitize=fuzzer
FUZZ_DRIVER :=
FUZZ_MODE := libFuzzer
else
FUZZ_CC := $(CC)
FUZZ_OBJ_FLAGS := $(SAN)
FUZZ_LINK_FLAGS := $(SAN)
FUZZ_DRIVER := tests/c/fuzz/driver.c
FUZZ_MODE := mutation driver
endif
FUZZ_DIR := build/fuzz_$(if $(FUZZ_DRIVER),driver,libfuzzer)

$(FUZZ_DIR)/obj/%.o: microruntime/src/%.c $(MR_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CWARN) $(CDEFS) $(FUZZ_DEFS) -O1 -g $(FUZZ_OBJ_FLAGS) $(INC) -c $< -o $@

$(FUZZ_DIR)/libmicroruntime_fuzz.a: $(patsubst microruntime/src/%.c,$(FUZZ_DIR)/obj/%.o,$(MR_SRCS))
	@rm -f $@; ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/c/fuzz/fuzz_%.c $(FUZZ_DRIVER) $(FUZZ_DIR)/libmicroruntime_fuzz.a
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CWARN) $(CDEFS) -O1 -g $(FUZZ_LINK_FLAGS) $(INC) -Imicroruntime/src $< \
	  $(FUZZ_DRIVER) $(FUZZ_DIR)/libmicroruntime_fuzz.a -o $@ -ldl -lpthread -lm

fuzz: $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_TARGETS)) $(FIXTURES)
	@set -e; for t in $(FUZZ_TARGETS); do \
	  corpus=$(FUZZ_DIR)/corpus_$$t; log=$(FUZZ_DIR)/$$t.log; mkdir -p $$corpus; \
	  if [ $$t = elf ]; then cp $(FIXTURES) $$corpus/; else cp tests/c/fuzz/seeds/$${t%_run}/* $$corpus/; fi; \
	  if [ -n "$(FUZZ_DRIVER)" ]; then \
	    $(FUZZ_DIR)/fuzz_$$t $(FUZZ_SECONDS) $$corpus/* > $$log 2>&1 || { tail -60 $$log; exit 1; }; \
	  else \
	    ASAN_OPTIONS=detect_leaks=1 $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	      -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/ \
	      $$corpus > $$log 2>&1 \
	      || { tail -60 $$log; exit 1; }; \
	  fi; \
	  echo "fuzz $$t ($(FUZZ_MODE)): $$(grep -o 'number_of_executed_units: *[0-9]*' $$log \
	    | grep -o '[0-9]*$$') inputs in $(FUZZ_SECONDS) s, no failure"; \
	done

# ---- Python -------------------------------------------------------------------
$(VENV)/.installed: pyproject.toml setup.py microruntime/build_ffi.py microruntime/py_fastcall.c \
    $(MR_SRCS) $(wildcard microruntime/src/*.h microruntime/include/microruntime/*.h)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[compiler,test]"
	touch $@

venv: $(VENV)/.installed

pytest: venv
	$(PY) -m pytest tests

test: ctest ctest-small ctest-valgrind pytest

# Python tests that drive the runtime (directly, and through compiled kernels: parallel loops,
# workspaces, packed calls), against an ASan/UBSan build of the extension. Allocations too big
# for ASan return NULL, as malloc does, so the out-of-memory paths are tested too.
test-asan: ctest-asan venv
	$(PY) microruntime/build_ffi.py --inplace-asan
	LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so)" \
	  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 MR_FFI_VARIANT=asan \
	  $(PY) -m pytest tests/microruntime tests/compiler/build tests/compiler/codegen tests/apps \
	  -p no:cacheprovider

lint: venv
	$(PY) -m ruff check .
	$(MAKE) -s runtime CFLAGS="-O2 -g"

# The code and read-only data a link took from build/size/{,small_}{core,graph,vm,thumb}/ (its map).
define SIZE_LINKED_PY
import re, sys
text = open(sys.argv[1]).read()
text = text[text.index("Linker script and memory map"):]
parts = re.findall(r"^ [.](?:text|rodata)\S*\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+build/size/(?:small_)?(?:core|graph|vm|thumb)/",
                   text, re.M)
n = sum(int(p, 16) for p in parts)
print("%s: text %d bytes (%.1f KB)" % (sys.argv[2], n, n / 1024))
endef
export SIZE_LINKED_PY

SIZE_FLAGS := $(CWARN) $(CDEFS) -Os -DMR_NO_DLOPEN -ffunction-sections -fdata-sections \
  -fno-asynchronous-unwind-tables -fno-unwind-tables $(INC)
# Each part is measured as the text of its objects; a link of core + graph executor (+ VM)
# without the extras checks that they need nothing from them.
size:
	@rm -rf build/size; mkdir -p build/size/core build/size/extra build/size/graph
	@for f in $(MR_CORE_SRCS); do $(CC) $(SIZE_FLAGS) -c $$f -o build/size/core/$$(basename $$f .c).o || exit 1; done
	@for f in $(MR_EXTRA_SRCS); do $(CC) $(SIZE_FLAGS) -c $$f -o build/size/extra/$$(basename $$f .c).o || exit 1; done
	@ar rcs build/size/libmicroruntime_core.a build/size/core/*.o
	@strip --strip-unneeded build/size/libmicroruntime_core.a
	@size -t build/size/libmicroruntime_core.a | tail -1 | \
	  awk '{printf "microruntime core (static, -Os, no unwind tables, stripped, default config): text %d bytes (%.1f KB); goal <= 24 KB\n", $$1, $$1/1024}'
	@size -A build/size/core/*.o | awk '$$1 ~ /^\.text/ {c+=$$2} $$1 ~ /^\.rodata/ {r+=$$2} $$1 ~ /^\.eh_frame/ {e+=$$2} \
	  END {printf "  of which: code %d, read-only data (messages) %d, unwind tables (.eh_frame) %d\n", c, r, e}'
	@size -t build/size/extra/*.o | tail -1 | \
	  awk '{printf "outside the core (time_evaluator, DLPack, params saving, Map objects: %s): text %d bytes\n", "$(notdir $(MR_EXTRA_SRCS))", $$1}'
	@mkdir -p build/size/graph_extra
	@for f in $(MR_GRAPH_CORE_SRCS); do $(CC) $(SIZE_FLAGS) -c $$f -o build/size/graph/$$(basename $$f .c).o || exit 1; done
	@for f in $(MR_GRAPH_EXTRA_SRCS); do $(CC) $(SIZE_FLAGS) -c $$f -o build/size/graph_extra/$$(basename $$f .c).o || exit 1; done
	@core=$$(size -t build/size/libmicroruntime_core.a | tail -1 | awk '{print $$1}'); \
	  size -t build/size/graph/*.o | tail -1 | awk -v core=$$core '{printf "graph executor (src/graph except the extras: JSON reader, graph, executor, arena, factory, manifest, C API; default config): text %d bytes (%.1f KB); core + graph executor: %d bytes (%.1f KB); goal <= 40 KB\n", $$1, $$1/1024, core + $$1, (core + $$1)/1024}'
	@echo 'int main(void) { return 0; }' > build/size/main.c
	@$(CC) build/size/main.c build/size/core/*.o build/size/graph/*.o -lpthread -lm \
	  -o build/size/core_graph || { echo "core + graph executor needs the extras (see above)"; exit 1; }
	@$(CC) $(SIZE_FLAGS) -c tests/c/size_graph_app.c -o build/size/graph_app.o
	@$(CC) -Wl,--gc-sections -Wl,-Map=build/size/graph_app.map build/size/graph_app.o \
	  build/size/core/*.o build/size/graph/*.o -lpthread -lm -o build/size/graph_app
	@$(PYTHON) -c "$$SIZE_LINKED_PY" build/size/graph_app.map \
	  "core + graph executor as linked into a C app calling all of graph_executor.h (tests/c/size_graph_app.c, --gc-sections)"
	@size -t build/size/graph_extra/*.o | tail -1 | \
	  awk '{printf "graph executor extras (%s: the packed functions of the executor and factory modules, tvm.graph_executor.create and factory create; mr_graph_executor_register adds them, the C API needs none): text %d bytes\n", "$(notdir $(MR_GRAPH_EXTRA_SRCS))", $$1}'
	@mkdir -p build/size/vm
	@mkdir -p build/size/vm_extra
	@for f in $(MR_VM_CORE_SRCS); do $(CC) $(SIZE_FLAGS) -c $$f -o build/size/vm/$$(basename $$f .c).o || exit 1; done
	@for f in $(MR_VM_EXTRA_SRCS); do $(CC) $(SIZE_FLAGS) -c $$f -o build/size/vm_extra/$$(basename $$f .c).o || exit 1; done
	@core=$$(size -t build/size/libmicroruntime_core.a | tail -1 | awk '{print $$1}'); \
	  graph=$$(size -t build/size/graph/*.o | tail -1 | awk '{print $$1}'); \
	  size -t build/size/vm/*.o | tail -1 | awk -v core=$$core -v graph=$$graph '{printf "Relax VM (src/vm except extras.c: loader, validator, interpreter, builtins, allocators, C API; default config): text %d bytes (%.1f KB); core + graph executor + VM: %d bytes (%.1f KB); goal <= 64 KB\n", $$1, $$1/1024, core + graph + $$1, (core + graph + $$1)/1024}'
	@$(CC) build/size/main.c build/size/core/*.o build/size/graph/*.o build/size/vm/*.o -lpthread \
	  -lm -o build/size/core_graph_vm || { echo "core + graph executor + VM needs the extras"; exit 1; }
	@size -t build/size/vm_extra/*.o | tail -1 | \
	  awk '{printf "Relax VM extras (%s: vm_initialization, set_input, invoke_stateful, get_output, save_function, set_instrument, profile, ...): text %d bytes\n", "$(notdir $(MR_VM_EXTRA_SRCS))", $$1}'
	@mkdir -p build/size/aot
	@for f in $(MR_AOT_SRCS); do $(CC) $(SIZE_FLAGS) -c $$f -o build/size/aot/$$(basename $$f .c).o || exit 1; done
	@ar rcs build/size/libmicroruntime_aot.a build/size/aot/*.o
	@strip --strip-unneeded build/size/libmicroruntime_aot.a
	@size -t build/size/libmicroruntime_aot.a | tail -1 | \
	  awk '{printf "AOT runtime (src/aot: kernel workspaces from the caller'"'"'s arena, errors, serial parallel launch; what a tvmgen_<name>_run model links beside its kernels, weights and run function): text %d bytes (%.1f KB); goal <= 8 KB\n", $$1, $$1/1024}'
	@$(MAKE) -s size-small
	@if command -v arm-none-eabi-gcc >/dev/null; then $(MAKE) -s size-thumb; else \
	  echo "thumbv7em (Cortex-M4F): arm-none-eabi-gcc not installed (apt-get install gcc-arm-none-eabi)"; fi

# The same parts on x86-64 built with MR_CONFIG_SMALL (error sites record a code, not a message;
# the small limits), for comparison with the default config above and with thumbv7em below.
SMALL_SIZE_FLAGS := $(SIZE_FLAGS) -DMR_CONFIG_SMALL
.PHONY: size-small
size-small:
	@rm -rf build/size/small_*; mkdir -p build/size/small_core build/size/small_graph build/size/small_vm
	@for f in $(MR_CORE_SRCS); do $(CC) $(SMALL_SIZE_FLAGS) -c $$f -o build/size/small_core/$$(basename $$f .c).o || exit 1; done
	@for f in $(MR_GRAPH_CORE_SRCS); do $(CC) $(SMALL_SIZE_FLAGS) -c $$f -o build/size/small_graph/$$(basename $$f .c).o || exit 1; done
	@for f in $(MR_VM_CORE_SRCS); do $(CC) $(SMALL_SIZE_FLAGS) -c $$f -o build/size/small_vm/$$(basename $$f .c).o || exit 1; done
	@ar rcs build/size/libmicroruntime_small_core.a build/size/small_core/*.o
	@strip --strip-unneeded build/size/libmicroruntime_small_core.a
	@core=$$(size -t build/size/libmicroruntime_small_core.a | tail -1 | awk '{print $$1}'); \
	  graph=$$(size -t build/size/small_graph/*.o | tail -1 | awk '{print $$1}'); \
	  vm=$$(size -t build/size/small_vm/*.o | tail -1 | awk '{print $$1}'); \
	  awk -v core=$$core -v graph=$$graph -v vm=$$vm 'BEGIN {printf "x86-64 small config (MR_CONFIG_SMALL: error codes instead of messages): core %d, graph executor %d, Relax VM %d bytes; core + graph executor: text %d bytes (%.1f KB); core + graph executor + VM: %d bytes (%.1f KB)\n", core, graph, vm, core + graph, (core + graph)/1024, core + graph + vm, (core + graph + vm)/1024}'
	@$(CC) $(SMALL_SIZE_FLAGS) -c tests/c/size_graph_app.c -o build/size/small_graph_app.o
	@$(CC) -Wl,--gc-sections -Wl,-Map=build/size/small_graph_app.map build/size/small_graph_app.o \
	  build/size/small_core/*.o build/size/small_graph/*.o -lpthread -lm -o build/size/small_graph_app
	@$(PYTHON) -c "$$SIZE_LINKED_PY" build/size/small_graph_app.map \
	  "  x86-64 small config core + graph executor as linked into tests/c/size_graph_app.c (--gc-sections)"

# The bare-metal footprint: the same core + graph executor for Cortex-M4F (Thumb-2), built with
# MR_PLATFORM_BAREMETAL and MR_CONFIG_SMALL, text/data/bss as arm-none-eabi-size reports them;
# then the app linked with -flto (the runtime's part is the plain link's less what LTO saved:
# its map cannot tell the runtime's code from the app's).
THUMB_FLAGS := $(filter-out $(CDEFS),$(SIZE_FLAGS)) -DMR_PLATFORM_BAREMETAL -DMR_CONFIG_SMALL \
  -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16
THUMB_SRCS := $(filter-out $(MR_DL_SRCS) $(MR_EXTRA_SRCS) $(MR_GRAPH_EXTRA_SRCS) $(MR_VM_SRCS) \
  $(MR_DEVICE_SRCS),$(MR_SRCS))
.PHONY: size-thumb
size-thumb:
	@rm -rf build/size/thumb; mkdir -p build/size/thumb
	@for f in $(THUMB_SRCS); do arm-none-eabi-gcc $(THUMB_FLAGS) -c $$f -o build/size/thumb/$$(echo $$f | tr / _ | sed 's/^microruntime_src_//').o || exit 1; done
	@arm-none-eabi-ar rcs build/size/thumb/libmicroruntime_thumb.a build/size/thumb/*.o
	@arm-none-eabi-strip --strip-unneeded build/size/thumb/libmicroruntime_thumb.a
	@arm-none-eabi-size -t build/size/thumb/libmicroruntime_thumb.a | tail -1 | \
	  awk '{printf "thumbv7em (Cortex-M4F, -Os, bare metal, small config): core + graph executor: text %d, data %d, bss %d bytes (text %.1f KB)\n", $$1, $$2, $$3, $$1/1024}'
	@arm-none-eabi-gcc $(THUMB_FLAGS) -c tests/c/size_graph_app.c -o build/size/thumb_app.o
	@arm-none-eabi-gcc $(THUMB_FLAGS) --specs=nosys.specs -Wl,--gc-sections,--no-warn-rwx-segments \
	  -Wl,-Map=build/size/thumb_app.map build/size/thumb_app.o build/size/thumb/*.o -lm \
	  -o build/size/thumb_app 2>/dev/null
	@$(PYTHON) -c "$$SIZE_LINKED_PY" build/size/thumb_app.map \
	  "  thumbv7em core + graph executor as linked into tests/c/size_graph_app.c (--gc-sections)"
	@rm -rf build/size/thumb_lto; mkdir -p build/size/thumb_lto
	@for f in $(THUMB_SRCS) tests/c/size_graph_app.c; do arm-none-eabi-gcc $(THUMB_FLAGS) -flto -c $$f \
	  -o build/size/thumb_lto/$$(echo $$f | tr / _).o || exit 1; done
	@arm-none-eabi-gcc $(THUMB_FLAGS) -flto --specs=nosys.specs \
	  -Wl,--gc-sections,--no-warn-rwx-segments build/size/thumb_lto/*.o -lm \
	  -o build/size/thumb_app_lto 2>/dev/null
	@linked=$$($(PYTHON) -c "$$SIZE_LINKED_PY" build/size/thumb_app.map x | sed 's/.*text \([0-9]*\) bytes.*/\1/'); \
	  plain=$$(arm-none-eabi-size build/size/thumb_app | awk 'NR == 2 {print $$1}'); \
	  lto=$$(arm-none-eabi-size build/size/thumb_app_lto | awk 'NR == 2 {print $$1}'); \
	  awk -v l=$$linked -v p=$$plain -v t=$$lto 'BEGIN {printf "  thumbv7em the same app with link-time optimization (-flto on the runtime and the app): its text falls by %d bytes, so core + graph executor is about %d bytes (%.1f KB); goal <= 16 KB\n", p - t, l - (p - t), (l - (p - t))/1024}'
	@echo "  for comparison: TFLite Micro framework about 16-20 KB (published); TVM CRT graph path 27 KB (x86-64)"
	@mkdir -p build/size/thumb_aot
	@for f in $(MR_AOT_SRCS); do arm-none-eabi-gcc $(THUMB_FLAGS) -c $$f -o build/size/thumb_aot/$$(basename $$f .c).o || exit 1; done
	@arm-none-eabi-ar rcs build/size/thumb_aot/libmicroruntime_aot_thumb.a build/size/thumb_aot/*.o
	@arm-none-eabi-strip --strip-unneeded build/size/thumb_aot/libmicroruntime_aot_thumb.a
	@arm-none-eabi-size -t build/size/thumb_aot/libmicroruntime_aot_thumb.a | tail -1 | \
	  awk '{printf "AOT runtime thumbv7em (Cortex-M4F, -Os, bare metal): text %d, data %d, bss %d bytes (text %.1f KB)\n", $$1, $$2, $$3, $$1/1024}'

# Interop with Apache TVM 0.27 (large download; not part of `make test`).
test-interop: venv
	test -x .venv-tvm/bin/python || $(PYTHON) -m venv .venv-tvm
	.venv-tvm/bin/pip install -q "apache-tvm==0.27.0.post1" -e ".[compiler,test]"
	.venv-tvm/bin/python -m pytest tests/interop

# ONNX's whole node test suite through the ONNX frontend, on llvm (slow: a kernel build per
# case; not part of `make test`, which runs a few cases per operator). Prints the cases passed
# and the excluded ones with their reasons.
test-onnx: venv
	KILN_ONNX_FULL=1 $(PY) -m pytest -m onnx_full -p no:cacheprovider -rs \
	  tests/compiler/frontend/test_onnx_node_suite.py

# ---- the model zoo (bench/zoo/README.md): torchvision and transformers models exported by
# torch in their own venv, compiled by Kiln, compared with ONNX Runtime. A benchmark, not a test.
ZOO_VENV := .venv-zoo
ZOO_ONLY ?=
.PHONY: zoo
$(ZOO_VENV)/.installed:
	test -x $(ZOO_VENV)/bin/python || $(PYTHON) -m venv $(ZOO_VENV)
	$(ZOO_VENV)/bin/python -m pip install -q "torch==2.13.0+cpu" "torchvision==0.28.0" \
	  transformers onnx onnxscript onnxruntime numpy
	touch $@

zoo: venv $(ZOO_VENV)/.installed
	$(ZOO_VENV)/bin/python bench/zoo/export.py $(if $(ZOO_ONLY),--only $(ZOO_ONLY))
	$(PY) bench/zoo/check.py $(if $(ZOO_ONLY),--only $(ZOO_ONLY))

clean:
	rm -rf build

# ---- demo and apps (an ONNX model compiled to one file, run from Python and from C) --------
demo: venv runtime
	$(PY) apps/demo/run_demo.py

apps: venv runtime
	$(MAKE) -C apps/system_lib_deploy PYTHON=$(abspath $(PY)) run

# Cortex-M under qemu-system-arm, no OS (apps/cortex_m; needs gcc-arm-none-eabi
# libnewlib-arm-none-eabi qemu-system-arm): the MLP and the LeNet-style CNN on Cortex-M4F
# (mps2-an386) and Cortex-M7 (mps2-an500), then the MLPerf Tiny models (DS-CNN, ResNet-8,
# MobileNetV1-0.25, the AD autoencoder) on the M4F, M7 and M55 (mps3-an547) with the AOT and the
# graph executor, with a table of flash, RAM and cycles per inference. Each run exits with 0
# when the output matches the reference; a combination that cannot fit a board says why.
cortex-m: venv
	@set -e; for board in m4 m7; do for model in mlp lenet; do \
	  echo "== $$model on $$board"; \
	  $(MAKE) -s -C apps/cortex_m PYTHON=$(abspath $(PY)) BOARD=$$board MODEL=$$model run; \
	done; done
	$(PY) apps/cortex_m/mlperf_table.py build/cortex_m
