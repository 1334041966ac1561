# Tier 1: tests of the core library. Tests that need internals link libgdrapi-test.a: the library's
# objects with a registry of their own (tests/unit/fake_registry.c) in place of src/registry.c,
# which adds the test-only backend (tests/unit/fake_backend.c).

UNIT_DIR := $(BUILD)/tests/unit
UNIT_TEST_LIB := $(UNIT_DIR)/libgdrapi-test.a
UNIT_TEST_LIB_OBJS := $(filter-out $(OBJ)/src/registry.o $(OBJ)/src/handle.o $(OBJ)/src/inflight.o, \
	$(LIB_OBJS)) $(OBJ)/tests/unit/fake_registry.o $(OBJ)/test/src/handle.o \
	$(OBJ)/test/src/inflight.o $(OBJ)/tests/unit/fake_backend.o

# The handle table and the in-flight records with their test knobs (gdr_handle_test_max_slots,
# gdr_inflight_test_claimed, ...).
$(OBJ)/test/src/handle.o $(OBJ)/test/src/inflight.o: $(OBJ)/test/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (test hooks)")
	$(Q)$(CC) $(ALL_CFLAGS) -DGDR_WITH_TEST_HOOKS -c -o $@ $<
$(OBJ)/tests/unit/test_handles.o $(OBJ)/tests/unit/test_close_unmap_fails.o \
	$(OBJ)/tests/unit/test_copy_signals.o $(OBJ)/tests/unit/test_copy_announce.o: \
	ALL_CFLAGS += -DGDR_WITH_TEST_HOOKS

$(UNIT_TEST_LIB): $(UNIT_TEST_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# Programs on the internal test library.
UNIT_INTERNAL := test_api test_threads test_handles test_copy_announce test_copy_signals \
	test_fork_fds test_fork_hold_off test_pin_range test_close_unmap_fails
# Stress and cycle checks on the same library (a few seconds each): not repeated under valgrind.
UNIT_STRESS := test_hostile test_cycles
# Programs on the shipped shared library, as clients use it.
UNIT_SHARED := test_abi test_exports test_clients test_no_backend test_header_cxx \
	test_error_reasons

$(addprefix $(UNIT_DIR)/,$(UNIT_INTERNAL) $(UNIT_STRESS)): $(UNIT_DIR)/%: $(OBJ)/tests/unit/%.o \
		$(HARNESS_OBJS) $(UNIT_TEST_LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -ldl

$(UNIT_DIR)/test_abi $(UNIT_DIR)/test_no_backend $(UNIT_DIR)/test_error_reasons: \
		$(UNIT_DIR)/%: $(OBJ)/tests/unit/%.o $(HARNESS_OBJS) $(LIB_SHARED)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) -lgdrapi \
		-Wl,-rpath,$(abspath $(LIB_DIR))

# dlopen by bare name finds the build's library through the program's RUNPATH.
$(UNIT_DIR)/test_clients: $(UNIT_DIR)/%: $(OBJ)/tests/unit/%.o $(HARNESS_OBJS) $(LIB_SHARED)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) -ldl \
		-Wl,--enable-new-dtags,-rpath,$(abspath $(LIB_DIR))

$(UNIT_DIR)/test_exports: tests/unit/test_exports.sh $(LIB_SHARED) $(LIB_STATIC)
	@mkdir -p $(dir $@)
	$(Q)sed 's|@LIB_DIR@|$(abspath $(LIB_DIR))|' $< >$@ && chmod +x $@

# The headers as C++ and as strict C: a compile test; the program only reports it ran.
$(UNIT_DIR)/test_header_cxx: tests/unit/test_header_cxx.cc include/gdrapi.h include/gdrapi_ext.h \
		$(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CXX     $<")
	$(Q)$(CXX) -std=c++11 -Wall -Wextra -Werror -pedantic -Iinclude -o $@ $< \
		-L$(LIB_DIR) -lgdrapi -Wl,-rpath,$(abspath $(LIB_DIR))
	$(Q)for h in gdrapi.h gdrapi_ext.h; do \
		printf '#include <%s>\n' $$h | \
		$(CC) -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude -fsyntax-only -x c - || exit; \
	done

UNIT_PROGRAMS := $(addprefix $(UNIT_DIR)/,$(UNIT_INTERNAL) $(UNIT_STRESS) $(UNIT_SHARED))
test-build: $(UNIT_PROGRAMS)
check-build-sanitize: $(addprefix $(UNIT_DIR)/,$(UNIT_INTERNAL) $(UNIT_STRESS))
TEST_TESTS += $(UNIT_PROGRAMS)
SANITIZE_TESTS += $(addprefix $(UNIT_DIR)/,$(UNIT_INTERNAL) $(UNIT_STRESS))
# Under TSan too: they run threads against one gdr_t.
check-build-tsan: $(addprefix $(UNIT_DIR)/,$(UNIT_INTERNAL) $(UNIT_STRESS))
TSAN_TESTS += $(addprefix $(UNIT_DIR)/,$(UNIT_INTERNAL) $(UNIT_STRESS))
# The exported-symbol test reads the library with nm (binutils).
CHECK_DEBS += binutils

# The internal tests again under valgrind (memcheck, definite leaks are errors).
VALGRIND_TESTS := $(addprefix $(UNIT_DIR)/valgrind/,$(UNIT_INTERNAL))
$(UNIT_DIR)/valgrind/%: $(UNIT_DIR)/% tests/unit/valgrind.sh
	@mkdir -p $(dir $@)
	$(Q)sed 's|@PROGRAM@|$(abspath $<)|' tests/unit/valgrind.sh >$@ && chmod +x $@
test-build: $(VALGRIND_TESTS)
TEST_TESTS += $(VALGRIND_TESTS)
CHECK_DEBS += valgrind

# src/cuda.c's translation of CUDA's errors, on its own object (cuda.o needs only log.o).
CUDA_ERRNO_TEST := $(UNIT_DIR)/test_cuda_errno
$(CUDA_ERRNO_TEST): $(OBJ)/tests/unit/test_cuda_errno.o $(OBJ)/src/cuda.o $(OBJ)/src/log.o \
		$(HARNESS_OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -ldl -lpthread
test-build: $(CUDA_ERRNO_TEST)
check-build-sanitize: $(CUDA_ERRNO_TEST)
TEST_TESTS += $(CUDA_ERRNO_TEST)
SANITIZE_TESTS += $(CUDA_ERRNO_TEST)

# test_setuid.sh: what a setuid program takes from its environment (root only; skips elsewhere).
SETUID_TEST := $(UNIT_DIR)/test_setuid
$(UNIT_DIR)/setuid_open: $(OBJ)/tests/unit/setuid_open.o $(LIB_STATIC)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -ldl -lpthread
$(SETUID_TEST): tests/unit/test_setuid.sh $(UNIT_DIR)/setuid_open
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@HARNESS@|$(abspath tests/harness/harness.sh)|' \
		-e 's|@PROGRAM@|$(abspath $(UNIT_DIR)/setuid_open)|' $< >$@ && chmod +x $@
test-build: $(SETUID_TEST)
TEST_TESTS += $(SETUID_TEST)
