# libgdrapi: the shared library (SONAME libgdrapi.so.2), its dev symlink, and libgdrapi.a.

# VULKAN=0 leaves the vulkan backend out, explicitly: vulkan_omitted.c takes its place in the
# registry, and gdr_open and gdrcopy_info say that this build has no vulkan backend.
VULKAN ?= 1
VULKAN_SRCS := $(wildcard src/backends/vulkan*.c)
VULKAN_OMITTED_SRC := src/backends/vulkan_omitted.c
LIB_SRCS := $(sort $(filter-out $(if $(filter 0,$(VULKAN)),$(VULKAN_SRCS),$(VULKAN_OMITTED_SRC)), \
	$(wildcard src/*.c src/backends/*.c src/arch/generic/*.c)) \
	$(if $(filter 0,$(VULKAN)),$(VULKAN_OMITTED_SRC)))
ifneq ($(ARCH_DIR),generic)
LIB_SRCS += $(sort $(wildcard src/arch/$(ARCH_DIR)/*.c))
endif
# Per-file ISA flags (ISA_CFLAGS) for the routines of this architecture.
-include src/arch/$(ARCH_DIR)/arch.mk

LIB_OBJS := $(LIB_SRCS:%.c=$(OBJ)/%.o)
LIB_SONAME := libgdrapi.so.$(VERSION_MAJOR)
LIB_REAL := libgdrapi.so.$(VERSION)
LIB_DIR := $(BUILD)/lib
LIB_SHARED := $(LIB_DIR)/$(LIB_REAL)
LIB_STATIC := $(LIB_DIR)/libgdrapi.a
# Sanitizer runtimes resolve at run time, so -z defs only holds for the plain build.
LIB_ZDEFS := $(if $(filter 1,$(SANITIZE)),,-Wl,-z,defs)

$(OBJ)/src/%.o: ALL_CFLAGS += -fvisibility=hidden

$(LIB_SHARED): $(LIB_OBJS) src/libgdrapi.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=src/libgdrapi.map \
		$(LIB_ZDEFS) $(ALL_LDFLAGS) -o $@ $(LIB_OBJS) -ldl
	$(Q)ln -sf $(LIB_REAL) $(LIB_DIR)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $(LIB_DIR)/libgdrapi.so

$(LIB_STATIC): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

.PHONY: lib
lib: $(LIB_SHARED) $(LIB_STATIC)
all: lib
