# gdrcopy_info: the backend report (no CUDA needed).
TOOLS_BIN := $(BUILD)/bin
# Tools find the library beside them in the build tree ($ORIGIN/../lib) and in the system paths.
TOOLS_RPATH := -Wl,--enable-new-dtags,-rpath,'$$ORIGIN/../lib'

$(TOOLS_BIN)/gdrcopy_info: $(OBJ)/tools/gdrcopy_info.o $(LIB_SHARED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -L$(LIB_DIR) -lgdrapi $(TOOLS_RPATH)

all: $(TOOLS_BIN)/gdrcopy_info
