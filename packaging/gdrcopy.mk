# NVIDIA GDRCopy 2.6's make targets, for the instructions, Dockerfiles and distribution recipes
# written for it ("make prefix=<dir> CUDA=<dir> all install", then "sudo ./insmod.sh"):
#   config        the architecture, as GDRCopy's config_arch names it (GDRAPI_ARCH=X86)
#   version       the version (2.6)
#   lib, exes     the library; the tools (GDRCopy's tests)
#   driver        gdrdrv.ko (kernel/kernel.mk's "modules")
#   lib_install   the library, gdrapi.h, gdrapi.pc and the API's man pages
#   exes_install  the tools, their legacy names and their man pages
#   drv_install   gdrdrv.ko into $(DESTDIR)/lib/modules/<kernel>/kernel/drivers/misc, then
#                 depmod when DESTDIR is empty (the kernel: KVER=, else KDIR='s)
# GDRCopy's prefix=, exec_prefix=, libdir=, bindir=, includedir= and DESTDIR= are read as it
# reads them (install.mk). Its "install" is lib_install and exes_install; ours adds gdrdrv's
# sources for DKMS (install-dkms).

GDRAPI_ARCH := $(or $(filter-out generic,$(subst x86,X86,$(subst arm64,ARM64,$(subst \
	ppc64le,POWER,$(ARCH_DIR))))),GENERIC)
DRV_KVER = $(if $(filter command line environment,$(origin KVER)),$(KVER),$(shell \
	cat $(KDIR)/include/config/kernel.release 2>/dev/null))
DRV_DIR = $(DESTDIR)/lib/modules/$(DRV_KVER)/kernel/drivers/misc

.PHONY: config version exes driver lib_install exes_install drv_install
config:
	@echo "GDRAPI_ARCH=$(GDRAPI_ARCH)"
version:
	@echo "$(VERSION)"
exes: tools
driver: modules
lib_install: install-lib install-man-lib
exes_install: install-tools install-man-tools

drv_install: modules
	@test -n "$(DRV_KVER)" || { echo "drv_install: no kernel release in $(KDIR): give KVER=" >&2; \
		exit 1; }
	$(Q)$(INSTALL) -d -m 0755 $(DRV_DIR)
	$(Q)$(INSTALL) -m 0644 $(GDRDRV_KO) $(DRV_DIR)/gdrdrv.ko
	$(Q)if [ -z "$(DESTDIR)" ]; then depmod -a $(DRV_KVER); fi
