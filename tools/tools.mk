# The tools: gdrcopy_info (the backend report), gdrcopy_sanity, gdrcopy_copybw, gdrcopy_copylat,
# gdrcopy_apiperf (C, CUDA driver API) and gdrcopy_pplat (CUDA, built only where nvcc exists),
# with GDRCopy's legacy names as symlinks, in TOOLS_BIN (the top Makefile). None links libcuda:
# tools/cuda_loader.c binds their CUDA calls to libcuda.so.1 at run time (the NVIDIA driver's,
# or the simulated one of tests/sim/cuda through LD_LIBRARY_PATH), so they start, and explain
# themselves, where there is no driver. TOOLS=0, or no CUDA headers, leaves them out of "all".

# Tools find the library beside them in the build tree ($ORIGIN/../lib), installed in LIBDIR as
# seen from BINDIR (install.mk's: prefix=/usr libdir=/usr/lib64 gives $ORIGIN/../lib64, which
# ../lib alone would miss), and in the system paths. Relative, so a DESTDIR tree runs as it is.
# Packages set TOOLS_RPATH= (no RUNPATH). Read when a tool links, after every fragment.
tools_lib_from_bin = $$ORIGIN/$(shell realpath -m --relative-to='$(BINDIR)' '$(LIBDIR)')
TOOLS_RUNPATH = $$ORIGIN/../lib$(if $(filter-out $$ORIGIN/../lib,$(tools_lib_from_bin)),:$(tools_lib_from_bin))
TOOLS_RPATH = -Wl,--enable-new-dtags,-rpath,'$(TOOLS_RUNPATH)'

# A make install with another LIBDIR or BINDIR than the build's relinks the tools: the RUNPATH
# they were linked with is in this file, rewritten only when it changes (so its date says when).
TOOLS_RPATH_FILE := $(BUILD)/tools-rpath.txt
.PHONY: FORCE_TOOLS_RPATH
FORCE_TOOLS_RPATH:
$(TOOLS_RPATH_FILE): FORCE_TOOLS_RPATH
	@mkdir -p $(dir $@)
	$(Q)printf '%s\n' '$(tools_rpath_text)' | cmp -s - $@ || printf '%s\n' '$(tools_rpath_text)' >$@
tools_rpath_text = $(subst ',,$(TOOLS_RPATH))

$(TOOLS_BIN)/gdrcopy_info: $(OBJ)/tools/gdrcopy_info.o $(OBJ)/tools/stdout_check.o $(LIB_SHARED) \
		$(TOOLS_RPATH_FILE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) -lgdrapi $(TOOLS_RPATH)

# The helpers of common.h, one file per concept.
TOOLS_COMMON_OBJS := $(addprefix $(OBJ)/tools/,output.o stdout_check.o options.o cuda_loader.o cuda_device.o \
	gpu_alloc.o gdr_tool.o stats.o pattern.o sweep.o)
TOOLS_C := gdrcopy_copybw gdrcopy_copylat gdrcopy_apiperf gdrcopy_sanity
SANITY_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(sort $(wildcard tools/sanity*.c)))

$(TOOLS_BIN)/gdrcopy_copybw: $(OBJ)/tools/copybw.o
$(TOOLS_BIN)/gdrcopy_copylat: $(OBJ)/tools/copylat.o
$(TOOLS_BIN)/gdrcopy_apiperf: $(OBJ)/tools/apiperf.o
$(TOOLS_BIN)/gdrcopy_sanity: $(SANITY_OBJS)
$(addprefix $(TOOLS_BIN)/,$(TOOLS_C)): $(TOOLS_COMMON_OBJS) $(LIB_SHARED) $(TOOLS_RPATH_FILE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) -lgdrapi -ldl $(TOOLS_RPATH)
	$(Q)ln -sf $(notdir $@) $(dir $@)$(patsubst gdrcopy_%,%,$(notdir $@))

.PHONY: tools
tools: $(TOOLS_BIN)/gdrcopy_info $(addprefix $(TOOLS_BIN)/,$(TOOLS_C))
ifeq ($(BUILD_TOOLS),1)
all: tools
endif

# gdrcopy_demo, for make run (tools/demo.sh): in the tree only, never installed.
TOOLS_DEMO := $(BUILD)/demo/gdrcopy_demo
$(TOOLS_DEMO): $(OBJ)/tools/demo.o $(TOOLS_COMMON_OBJS) $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) -lgdrapi -ldl $(TOOLS_RPATH)

# pplat: the GPU kernel needs nvcc; the host side links with the C++ compiler and the static
# CUDA runtime, as nvcc would, so the tools' RPATH applies. PPLAT_GENCODE: PTX for any GPU from
# Turing on (the driver compiles it at load) and SASS for Hopper (the test H200).
PPLAT_GENCODE ?= -gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=sm_90

ifeq ($(HAVE_NVCC),1)
$(OBJ)/tools/pplat.o: tools/pplat.cu tools/common.h include/gdrapi.h include/gdrapi_ext.h \
		$(BUILD_CONFIG)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) -std=c++17 -O2 $(PPLAT_GENCODE) -Iinclude -Itools \
		-Xcompiler -Wall,-Wextra$(if $(filter 1,$(WERROR)),$(comma)-Werror) -c -o $@ $<

$(TOOLS_BIN)/gdrcopy_pplat: $(OBJ)/tools/pplat.o $(TOOLS_COMMON_OBJS) $(LIB_SHARED) \
		$(TOOLS_RPATH_FILE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CXX) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) -lgdrapi \
		-L$(CUDA)/lib64 -lcudart_static -ldl -lrt $(TOOLS_RPATH)

tools: $(TOOLS_BIN)/gdrcopy_pplat
endif
