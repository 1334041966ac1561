# libgdrapi: the shared library (SONAME libgdrapi.so.2), its dev symlink, and libgdrapi.a
# (LIB_SHARED, LIB_STATIC and the like are in the top Makefile, for the other parts).

# VULKAN=0 leaves the vulkan backend out, explicitly: its place in the registry says that this
# build has none (backends/omitted.c), and gdr_open and gdrcopy_info say so. Without CUDA's
# headers (CUDA_PARTS=0, see the Makefile) dmabuf is left out the same way, with the cuda.c
# they share.
LIB_OMIT := $(if $(filter 0,$(CUDA_PARTS)),dmabuf vulkan,$(if $(filter 0,$(VULKAN)),vulkan))
LIB_BACKENDS := $(filter-out $(LIB_OMIT),gdrdrv dmabuf vulkan)
LIB_SRCS := $(sort $(filter-out src/backends/omitted.c \
	$(if $(filter vulkan,$(LIB_OMIT)),$(wildcard src/backends/vulkan*.c)) \
	$(if $(filter dmabuf,$(LIB_OMIT)),src/backends/dmabuf.c src/cuda.c), \
	$(wildcard src/*.c src/backends/*.c src/arch/generic/*.c)) \
	$(if $(LIB_OMIT),src/backends/omitted.c))
ifneq ($(ARCH_DIR),generic)
LIB_SRCS += $(sort $(wildcard src/arch/$(ARCH_DIR)/*.c))
endif
# Per-file ISA flags (ISA_CFLAGS) for the routines of this architecture.
-include src/arch/$(ARCH_DIR)/arch.mk

LIB_OBJS := $(LIB_SRCS:%.c=$(OBJ)/%.o)
# Sanitizer runtimes resolve at run time, so -z defs only holds for the plain build.
LIB_ZDEFS := $(if $(filter 1,$(SANITIZE)),,-Wl,-z,defs)

$(OBJ)/src/%.o: ALL_CFLAGS += -fvisibility=hidden
$(OBJ)/src/backends/omitted.o: ALL_CFLAGS += $(foreach b,$(LIB_OMIT),-DGDR_OMIT_$(b))

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
