# make install / make uninstall: the library, headers, pkg-config file, tools, man pages and the
# gdrdrv sources for DKMS.
#   PREFIX= (or GDRCopy's prefix=, default /usr/local), DESTDIR=, LIBDIR= (default $(PREFIX)/lib;
#   Debian multiarch: LIBDIR=/usr/lib/x86_64-linux-gnu), BINDIR=, INCLUDEDIR=, MANDIR=,
#   PKGCONFIGDIR=, DKMS_SRCDIR= (default /usr/src/gdrdrv-<version>, where DKMS looks, for the
#   system prefixes /usr and /usr/local; $(PREFIX)/src/gdrdrv-<version> for any other prefix,
#   which a user without root installs into).
#   MODPROBEDIR= also installs gdrdrv's modprobe configuration (with its sources); it is empty by
#   default, because kmod reads no file under /usr/local. Packages set it.
# GDRCopy's lower-case names (prefix, exec_prefix, libdir, bindir, includedir) are honoured; the
# upper-case ones win when both are given.

prefix ?= /usr/local
PREFIX ?= $(prefix)
exec_prefix ?= $(PREFIX)
libdir ?= $(exec_prefix)/lib
bindir ?= $(exec_prefix)/bin
includedir ?= $(PREFIX)/include
mandir ?= $(PREFIX)/share/man
LIBDIR ?= $(libdir)
BINDIR ?= $(bindir)
INCLUDEDIR ?= $(includedir)
MANDIR ?= $(mandir)
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DKMS_SRCDIR ?= $(if $(filter /usr /usr/local,$(PREFIX)),/usr/src,$(PREFIX)/src)/gdrdrv-$(VERSION)
MODPROBEDIR ?=

INSTALL ?= install

# A directory with a space would be cut in two by the shell: install would create the pieces
# (one relative, in this tree) and uninstall remove them.
INSTALL_GOALS := install install-lib install-tools install-man install-man-lib install-man-tools \
	install-dkms uninstall lib_install exes_install drv_install
ifneq ($(filter $(INSTALL_GOALS),$(MAKECMDGOALS)),)
$(foreach v,DESTDIR PREFIX LIBDIR BINDIR INCLUDEDIR MANDIR PKGCONFIGDIR DKMS_SRCDIR MODPROBEDIR, \
	$(call no_space,$(v)))
endif

# Tools that may exist in $(BUILD)/bin (gdrcopy_info always; the others when their part is built),
# and GDRCopy's legacy names for four of them. gdrcopy_pplat never had one.
INSTALL_TOOLS := gdrcopy_info gdrcopy_sanity gdrcopy_copybw gdrcopy_copylat gdrcopy_apiperf \
	gdrcopy_pplat
INSTALL_TOOL_LINKS := copybw:gdrcopy_copybw copylat:gdrcopy_copylat apiperf:gdrcopy_apiperf \
	sanity:gdrcopy_sanity

# Man pages: section 1 goes with its tool, the rest always.
MAN_PAGES_1 := $(sort $(wildcard man/*.1))
MAN_PAGES_LIB := $(sort $(wildcard man/*.3 man/*.7))
MAN_PAGES_4 := $(sort $(wildcard man/*.4))

# The module's sources, as DKMS or a prebuilt-kmod build needs them: kernel/ with its Makefile
# (the out-of-tree build DKMS runs) but without the top-level fragment kernel.mk, and without
# what an in-tree build leaves (objects, kbuild's *.mod.c, configure.sh's gdrdrv_config.h).
GDRDRV_SRCS := $(sort $(filter-out %.mod.c %/gdrdrv_config.h, \
	$(shell find kernel -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \
	-o -name '*.sh' \) -not -path '*/.*')))

# The headers: GDRCopy's two (gdrapi.h, gdrconfig.h) and gdrcopy's extensions.
INSTALL_HEADERS := include/gdrapi.h include/gdrapi_ext.h include/gdrconfig.h

# install_gdrdrv_srcs DIR: GDRDRV_SRCS into DIR, kernel/'s tree as it is (make dist's too).
install_gdrdrv_srcs = \
	for f in $(GDRDRV_SRCS); do \
		rel=$${f\#kernel/}; \
		$(INSTALL) -d -m 0755 $(1)/$$(dirname $$rel); \
		case $$f in *.sh) mode=0755 ;; *) mode=0644 ;; esac; \
		$(INSTALL) -m $$mode $$f $(1)/$$rel; \
	done

PC_FILE := $(BUILD)/pkgconfig/gdrapi.pc
DKMS_CONF := $(BUILD)/dkms/dkms.conf

# Regenerated on every install: PREFIX and LIBDIR are make variables, not files make can track.
.PHONY: $(PC_FILE) $(DKMS_CONF)
$(PC_FILE): packaging/gdrapi.pc.in
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@EXEC_PREFIX@|$(if $(filter $(PREFIX),$(exec_prefix)),$${prefix},$(exec_prefix))|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< >$@

$(DKMS_CONF): packaging/dkms/dkms.conf.in
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@VERSION@|$(VERSION)|' $< >$@

.PHONY: install install-lib install-tools install-man install-dkms uninstall
install: install-lib install-tools install-man install-dkms

install-lib: $(LIB_SHARED) $(LIB_STATIC) $(PC_FILE)
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(Q)$(INSTALL) -m 0755 $(LIB_SHARED) $(DESTDIR)$(LIBDIR)/$(LIB_REAL)
	$(Q)ln -sf $(LIB_REAL) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libgdrapi.so
	$(Q)$(INSTALL) -m 0644 $(LIB_STATIC) $(DESTDIR)$(LIBDIR)/libgdrapi.a
	$(Q)$(INSTALL) -m 0644 $(INSTALL_HEADERS) $(DESTDIR)$(INCLUDEDIR)
	$(Q)$(INSTALL) -m 0644 $(PC_FILE) $(DESTDIR)$(PKGCONFIGDIR)/gdrapi.pc
	@# A direct install as root makes the new library visible to ld.so at once.
	$(Q)if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
		ldconfig; fi

# The tools and their pages wait for every tool to be built, so that make -j install installs
# what a serial one does.
install-tools: $(if $(filter 1,$(BUILD_TOOLS)),tools)
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(BINDIR)
	$(Q)for t in $(INSTALL_TOOLS); do \
		[ -x $(BUILD)/bin/$$t ] || continue; \
		$(INSTALL) -m 0755 $(BUILD)/bin/$$t $(DESTDIR)$(BINDIR)/$$t; \
	done
	$(Q)for l in $(INSTALL_TOOL_LINKS); do \
		[ -x $(BUILD)/bin/$${l#*:} ] || continue; \
		ln -sf $${l#*:} $(DESTDIR)$(BINDIR)/$${l%%:*}; \
	done

# A tool's page goes with the tool. A page that is only ".so man<n>/<page>" (a second name of
# that page) is installed as a symbolic link, which man, mandb and the packaging tools follow.
install_man_page = \
	target=$$(sed -n 's|^\.so man[1-9]/||p' $(1)); \
	if [ -n "$$target" ]; then ln -sf $$target $(DESTDIR)$(MANDIR)/man$(2)/$(notdir $(1)); \
	else $(INSTALL) -m 0644 $(1) $(DESTDIR)$(MANDIR)/man$(2)/$(notdir $(1)); fi

.PHONY: install-man-lib install-man-tools
install-man: install-man-lib install-man-tools

install-man-lib:
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	$(Q)$(foreach p,$(MAN_PAGES_LIB),$(call install_man_page,$(p),$(subst .,,$(suffix $(p))));)

install-man-tools: $(if $(filter 1,$(BUILD_TOOLS)),tools)
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(MANDIR)/man1
	$(Q)$(foreach p,$(MAN_PAGES_1), \
		tool=$$(sed -n 's|^\.so man1/\(.*\)\.1$$|\1|p' $(p)); \
		if [ -x $(BUILD)/bin/$${tool:-$(basename $(notdir $(p)))} ]; then \
			$(call install_man_page,$(p),1); fi;)

# gdrdrv(4) and the modprobe configuration go with the module's sources.
install-dkms: $(DKMS_CONF)
	$(Q)$(call install_gdrdrv_srcs,$(DESTDIR)$(DKMS_SRCDIR))
	$(Q)$(INSTALL) -m 0644 $(DKMS_CONF) $(DESTDIR)$(DKMS_SRCDIR)/dkms.conf
	$(Q)$(INSTALL) -m 0755 packaging/dkms/dkms-make.sh $(DESTDIR)$(DKMS_SRCDIR)/dkms-make.sh
	$(Q)$(INSTALL) -m 0644 packaging/dkms/nvidia-driver.sh $(DESTDIR)$(DKMS_SRCDIR)/nvidia-driver.sh
	$(Q)$(INSTALL) -m 0755 packaging/dkms/dkms-match-flavor.sh $(DESTDIR)$(DKMS_SRCDIR)/dkms-match-flavor.sh
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(MANDIR)/man4
	$(Q)$(foreach p,$(MAN_PAGES_4),$(call install_man_page,$(p),4);)
ifneq ($(MODPROBEDIR),)
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(MODPROBEDIR)
	$(Q)$(INSTALL) -m 0644 packaging/dkms/gdrdrv-modprobe.conf $(DESTDIR)$(MODPROBEDIR)/gdrdrv.conf
endif

# Removes exactly what install may have put there. Shared directories (bin, lib, man1...) stay,
# even when empty: they belong to the system, not to us.
uninstall:
	$(Q)rm -f $(DESTDIR)$(LIBDIR)/$(LIB_REAL) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME) \
		$(DESTDIR)$(LIBDIR)/libgdrapi.so $(DESTDIR)$(LIBDIR)/libgdrapi.a \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(notdir $(INSTALL_HEADERS))) \
		$(DESTDIR)$(PKGCONFIGDIR)/gdrapi.pc
	$(Q)rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(INSTALL_TOOLS) \
		$(foreach l,$(INSTALL_TOOL_LINKS),$(firstword $(subst :, ,$(l)))))
	$(Q)rm -f $(foreach p,$(MAN_PAGES_1) $(MAN_PAGES_LIB) $(MAN_PAGES_4), \
		$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p)))
	$(Q)rm -rf $(DESTDIR)$(DKMS_SRCDIR)
	$(Q)$(if $(MODPROBEDIR),rm -f $(DESTDIR)$(MODPROBEDIR)/gdrdrv.conf)
