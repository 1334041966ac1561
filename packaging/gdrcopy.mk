# NVIDIA GDRCopy 2.6's make targets, for the instructions, Dockerfiles and distribution recipes
# written for it ("make prefix=<dir> CUDA=<dir> all install", then "sudo ./insmod.sh"):
#   config        the architecture, as GDRCopy's config_arch names it (GDRAPI_ARCH=X86)
#   version       the version (2.6)
#   lib, exes     the library; the tools (GDRCopy's tests)
#   driver        gdrdrv.ko (kernel/kernel.mk's "modules"), for the kernel KVER= names, as GDRCopy's
#   lib_install   the library, gdrapi.h, gdrconfig.h, gdrapi_ext.h, gdrapi.pc and the API's
#                 man pages
#   exes_install  the tools, their legacy names and their man pages
#   drv_install   gdrdrv.ko into $(DESTDIR)/lib/modules/<kernel>/kernel/drivers/misc, then
#                 depmod when DESTDIR is empty (the kernel: KVER=, else the one the module was
#                 built for, KDIR='s)
#   dist          its three release tarballs (packaging/dist.mk)
# GDRCopy's prefix=, exec_prefix=, libdir=, bindir=, includedir= and DESTDIR= are read as it
# reads them (install.mk). Its "install" is lib_install and exes_install; ours adds gdrdrv's
# sources for DKMS (install-dkms).

GDRAPI_ARCH := $(or $(filter-out generic,$(subst x86,X86,$(subst arm64,ARM64,$(subst \
	ppc64le,POWER,$(ARCH_DIR))))),GENERIC)
DRV_KVER = $(if $(filter command line environment,$(origin KVER)),$(KVER),$$(modinfo -F vermagic \
	$(GDRDRV_KO) | cut -d' ' -f1))

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
	$(Q)kver=$(DRV_KVER) && [ -n "$$kver" ] || \
		{ echo "drv_install: cannot read the kernel release of $(GDRDRV_KO): give KVER=" >&2; \
		exit 1; } && \
	dir=$(DESTDIR)/lib/modules/$$kver/kernel/drivers/misc && \
	$(INSTALL) -d -m 0755 $$dir && $(INSTALL) -m 0644 $(GDRDRV_KO) $$dir/gdrdrv.ko && \
	if [ -z "$(DESTDIR)" ]; then depmod -a $$kver; fi
