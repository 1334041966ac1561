# Packages, built from a copy of the tree (committed or not; the build directory left out).
#   make deb    libgdrapi2, libgdrapi-dev, gdrcopy-tools, gdrdrv-dkms and the metapackage
#               gdrcopy in $(BUILD)/deb/
#               (dpkg-buildpackage; DEB_FLAGS= adds options, e.g. -aarm64 to cross-build;
#               DEB_BUILD_PROFILES=pkg.gdrcopy.notools / pkg.gdrcopy.nodkms leave packages
#               out; DEB_BUILD_OPTIONS=nocheck skips the tests (make test) the build runs).
#               CUDA's Build-Depends not installed as packages (a toolkit from NVIDIA's
#               installer, say) turn dpkg-buildpackage's check off (-d), saying which; any
#               other unmet one stops it with the apt-get line (packaging/deb-build-deps.sh).
#   make rpm    gdrcopy, gdrcopy-devel, gdrcopy-kmod (DKMS) in $(BUILD)/rpm/RPMS/
#               KMOD=1 adds gdrcopy-kmod-<KVER>, gdrdrv prebuilt for kernel KVER (default: the
#               newest kernel with a build tree here) from its build tree KDIR.
#               RPMBUILD_FLAGS= adds options.

PKG_NAME := gdrcopy-$(VERSION)
DEB_OUT := $(BUILD)/deb
RPM_TOP := $(abspath $(BUILD)/rpm)
DEB_FLAGS ?=
KMOD ?= 0
# sort -V: make's sort is lexical, and would put 6.1.0-9 after 6.1.0-10.
KVER ?= $(notdir $(patsubst %/build,%,$(shell ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1)))
# kernel/kernel.mk's KDIR defaults to the running kernel's tree; here only a KDIR given on the
# command line or in the environment counts.
RPM_KDIR := $(if $(filter command line environment,$(origin KDIR)),$(KDIR),/lib/modules/$(KVER)/build)
# On a system whose packages are not RPMs (Debian), rpmbuild cannot check BuildRequires, and no
# debuginfo tooling is set up.
RPM_FOREIGN := $(shell rpm -q rpm >/dev/null 2>&1 || echo 1)
RPMBUILD_FLAGS ?= $(if $(RPM_FOREIGN),--nodeps --define 'debug_package %{nil}')

.PHONY: deb rpm
deb:
	$(Q)command -v dpkg-buildpackage >/dev/null || \
		{ echo "make deb: dpkg-buildpackage is missing: apt-get install dpkg-dev debhelper dh-dkms" >&2; exit 1; }
	$(Q)changelog=$$(dpkg-parsechangelog -l packaging/deb/debian/changelog -S Version) && \
		[ "$${changelog%-*}" = "$(VERSION)" ] || \
		{ echo "make deb: packaging/deb/debian/changelog is at $$changelog, gdrapi.h at $(VERSION): add a changelog entry" >&2; exit 1; }
	$(Q)rm -rf $(DEB_OUT) && mkdir -p $(DEB_OUT)
	$(Q)packaging/copy-source.sh $(DEB_OUT)/$(PKG_NAME) $(BUILD)
	$(Q)cp -R packaging/deb/debian $(DEB_OUT)/$(PKG_NAME)/debian
	$(Q)cd $(DEB_OUT)/$(PKG_NAME) && flags='$(DEB_FLAGS)' && \
		more=$$(packaging/deb-build-deps.sh $(abspath $(CUDA)) $$flags) && flags="$$flags $$more" && \
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL CUDA=$(abspath $(CUDA)) \
			dpkg-buildpackage -us -uc -b $$flags
	@# The copy of the tree served its purpose; a failed build keeps it for a look.
	$(Q)rm -rf $(DEB_OUT)/$(PKG_NAME)
	$(Q)ls -1 $(DEB_OUT)/*.deb

rpm:
	$(Q)command -v rpmbuild >/dev/null || \
		{ echo "make rpm: rpmbuild is missing: apt-get install rpm (Debian) or dnf install rpm-build" >&2; exit 1; }
	$(Q)$(if $(filter 1,$(KMOD)),[ -e "$(RPM_KDIR)/Makefile" ] || \
		{ echo "make rpm KMOD=1: no kernel build tree at KDIR=$(RPM_KDIR) (KVER=$(KVER))" >&2; exit 1; })
	$(Q)rm -rf $(RPM_TOP) && mkdir -p $(RPM_TOP)/SOURCES $(RPM_TOP)/SPECS
	$(Q)packaging/copy-source.sh $(RPM_TOP)/$(PKG_NAME) $(BUILD)
	$(Q)tar -C $(RPM_TOP) -czf $(RPM_TOP)/SOURCES/$(PKG_NAME).tar.gz $(PKG_NAME)
	$(Q)rm -rf $(RPM_TOP)/$(PKG_NAME)
	$(Q)sed 's|@VERSION@|$(VERSION)|' packaging/rpm/gdrcopy.spec.in >$(RPM_TOP)/SPECS/gdrcopy.spec
	@# The package's own make must not inherit this one's variables (BUILD=, CUDA=...).
	$(Q)env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL rpmbuild -bb --define '_topdir $(RPM_TOP)' --define 'cuda $(abspath $(CUDA))' \
		$(if $(filter 1,$(KMOD)),--with kmod --define 'kver $(KVER)' --define 'kdir $(RPM_KDIR)') \
		$(RPMBUILD_FLAGS) $(RPM_TOP)/SPECS/gdrcopy.spec
	$(Q)find $(RPM_TOP)/RPMS -name '*.rpm' | sort
