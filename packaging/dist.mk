# make dist: GDRCopy's three release tarballs (reference gdrcopy-2.6.md, 1.2) in $(BUILD), each
# with one top directory, from what this build made:
#   libgdrapi-linux-ARCH-VERSION.tar.gz      libgdrapi/lib64/ (libgdrapi.so.VERSION and its two
#                                            links), libgdrapi/include/ (the installed headers),
#                                            libgdrapi/LICENSE
#   gdrcopy-tests-linux-ARCH-VERSION.tar.gz  gdrcopy-tests/bin/gdrcopy_* (the tools built here)
#   gdrdrv-linux-ARCH-VERSION.tar.gz         gdrdrv/src/ (gdrdrv's sources, as DKMS gets them:
#                                            "make" there builds the module)
# ARCH is the target's, as uname -m names it on that machine. GDRCopy's dist-lib, dist-tests and
# dist-driver make one each. The file lists come from install.mk (read at run time: the
# fragments are read in any order).

DIST_ARCH := $(subst powerpc64le,ppc64le,$(firstword $(subst -, ,$(TARGET_MACHINE))))
DIST_DIR := $(BUILD)/dist
# dist_file NAME: the tarball; dist_tar NAME: $(DIST_DIR)/NAME into it, owned by root and in
# name order, whoever builds it.
dist_file = $(BUILD)/$(1)-linux-$(DIST_ARCH)-$(VERSION).tar.gz
dist_tar = tar --sort=name --owner=0 --group=0 --numeric-owner -C $(DIST_DIR) \
	-czf $(call dist_file,$(1)) $(1)

.PHONY: dist dist-lib dist-tests dist-driver
dist: dist-lib dist-tests dist-driver

dist-lib: $(LIB_SHARED)
	$(Q)rm -rf $(DIST_DIR)/libgdrapi
	$(Q)$(INSTALL) -d -m 0755 $(DIST_DIR)/libgdrapi/lib64 $(DIST_DIR)/libgdrapi/include
	$(Q)$(INSTALL) -m 0755 $(LIB_SHARED) $(DIST_DIR)/libgdrapi/lib64/$(LIB_REAL)
	$(Q)ln -s $(LIB_REAL) $(DIST_DIR)/libgdrapi/lib64/$(LIB_SONAME)
	$(Q)ln -s $(LIB_SONAME) $(DIST_DIR)/libgdrapi/lib64/libgdrapi.so
	$(Q)$(INSTALL) -m 0644 $(INSTALL_HEADERS) $(DIST_DIR)/libgdrapi/include
	$(Q)$(INSTALL) -m 0644 LICENSE $(DIST_DIR)/libgdrapi/LICENSE
	@$(if $(Q),echo "  TAR     $(call dist_file,libgdrapi)")
	$(Q)$(call dist_tar,libgdrapi)

dist-tests: $(if $(filter 1,$(BUILD_TOOLS)),tools,$(TOOLS_BIN)/gdrcopy_info)
	$(Q)rm -rf $(DIST_DIR)/gdrcopy-tests
	$(Q)$(INSTALL) -d -m 0755 $(DIST_DIR)/gdrcopy-tests/bin
	$(Q)for t in $(INSTALL_TOOLS); do \
		[ ! -x $(TOOLS_BIN)/$$t ] || $(INSTALL) -m 0755 $(TOOLS_BIN)/$$t $(DIST_DIR)/gdrcopy-tests/bin; \
	done
	@$(if $(Q),echo "  TAR     $(call dist_file,gdrcopy-tests)")
	$(Q)$(call dist_tar,gdrcopy-tests)

dist-driver:
	$(Q)rm -rf $(DIST_DIR)/gdrdrv
	$(Q)$(call install_gdrdrv_srcs,$(DIST_DIR)/gdrdrv/src)
	@$(if $(Q),echo "  TAR     $(call dist_file,gdrdrv)")
	$(Q)$(call dist_tar,gdrdrv)
