# The packages end to end (tests/pkg/test_packages.sh): make deb, lintian, make rpm and the
# RPMs' file lists; then dpkg -i on this machine (as root, when nothing it would replace is
# installed), a pkg-config client, DKMS, removal.
PKG_TEST := $(BUILD)/tests/pkg/test_packages

# Two package builds that each run tier 1 (make test), lintian and the RPMs: about five minutes
# on a 2-core machine, past the runner's default limit, so it asks for fifteen. What installs
# them into this machine is a test of its own, which runs alone (another test could find what
# it installs), after every other: the builds' .debs are its input.
PKG_INSTALL_TEST := $(BUILD)/tests/pkg/test_packages_install
$(PKG_TEST) $(PKG_INSTALL_TEST): tests/pkg/test_packages.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s %s %s %s\n' $(abspath $<) $(CURDIR) $(abspath $(BUILD)) \
		$(abspath $(CUDA)) $(if $(filter $(PKG_TEST),$@),builds,install) >$@ && chmod +x $@
	$(Q)$(if $(filter $(PKG_TEST),$@),echo 900 >$@.timeout,touch $@.serial)

check-build: $(PKG_TEST) $(PKG_INSTALL_TEST)
CHECK_TESTS += $(PKG_TEST)
CHECK_TESTS_LAST += $(PKG_INSTALL_TEST)
CHECK_DEBS += dpkg-dev debhelper dh-dkms dkms lintian rpm pkg-config man-db kmod binutils

# make install, parallel and serial, and GDRCopy's install targets (tests/pkg/test_install.sh).
# make dist's three tarballs, their layout, and a client and gdrdrv built from them
# (tests/pkg/test_dist.sh).
INSTALL_TEST := $(BUILD)/tests/pkg/test_install
DIST_TEST := $(BUILD)/tests/pkg/test_dist

$(INSTALL_TEST) $(DIST_TEST): $(BUILD)/tests/pkg/%: tests/pkg/%.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s %s %s\n' $(abspath $<) $(CURDIR) $(abspath $(BUILD)) \
		$(abspath $(CUDA)) >$@ && chmod +x $@

check-build: $(INSTALL_TEST) $(DIST_TEST)
CHECK_TESTS += $(INSTALL_TEST) $(DIST_TEST)

# DKMS's build script's choice of NVIDIA driver flavor, with make and modinfo stood in for
# (tests/pkg/test_dkms_make.sh), and the packages' scriptlets installed before the NVIDIA driver
# and triggered by its files (another flavor, or other sources to build against), against
# stand-ins of dkms, modinfo and make (tests/pkg/test_dkms_flavor.sh): tier 1, they install and
# build nothing.
DKMS_MAKE_TEST := $(BUILD)/tests/pkg/test_dkms_make
DKMS_FLAVOR_TEST := $(BUILD)/tests/pkg/test_dkms_flavor

$(DKMS_MAKE_TEST) $(DKMS_FLAVOR_TEST): $(BUILD)/tests/pkg/%: tests/pkg/%.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(CURDIR) >$@ && chmod +x $@

test-build: $(DKMS_MAKE_TEST) $(DKMS_FLAVOR_TEST)
TEST_TESTS += $(DKMS_MAKE_TEST) $(DKMS_FLAVOR_TEST)

# Which gdrdrv packages rpm lets be installed together: stand-ins of this spec's and NVIDIA's,
# built by rpmbuild without files, on a database of the test's own
# (tests/pkg/test_rpm_kmod_conflicts.sh): tier 1, it installs nothing on the machine.
RPM_KMOD_CONFLICTS_TEST := $(BUILD)/tests/pkg/test_rpm_kmod_conflicts

$(RPM_KMOD_CONFLICTS_TEST): tests/pkg/test_rpm_kmod_conflicts.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(CURDIR) >$@ && chmod +x $@

test-build: $(RPM_KMOD_CONFLICTS_TEST)
TEST_TESTS += $(RPM_KMOD_CONFLICTS_TEST)

# make deb's check of the Build-Depends, with dpkg-checkbuilddeps and dpkg-buildpackage stood in
# for (tests/pkg/test_deb_build_deps.sh): tier 1, it builds no package.
DEB_BUILD_DEPS_TEST := $(BUILD)/tests/pkg/test_deb_build_deps

$(DEB_BUILD_DEPS_TEST): tests/pkg/test_deb_build_deps.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(CURDIR) >$@ && chmod +x $@

test-build: $(DEB_BUILD_DEPS_TEST)
TEST_TESTS += $(DEB_BUILD_DEPS_TEST)
