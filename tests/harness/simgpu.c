/* SPDX-License-Identifier: MIT */
/*
 * The simulated GPU of tiers 1 and 2: the simulated CUDA driver (tests/sim/cuda) in front of
 * any other libcuda, and Mesa's lavapipe as the Vulkan driver (see harness.h).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

void test_use_sim_cuda(const char *dir)
{
	const char *old = getenv("LD_LIBRARY_PATH");
	char lib[PATH_MAX], path[8192];

	snprintf(lib, sizeof(lib), "%s/libcuda.so.1", dir);
	if (access(lib, R_OK))
		test_skip_program("simulated CUDA driver not built: %s is missing (make sim-cuda)",
				  lib);
	/*
	 * Loaded by its path, it is the libcuda.so.1 that a later dlopen of that name finds (the
	 * dynamic loader matches loaded libraries by their SONAME), and it stays loaded.
	 */
	if (!dlopen(lib, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "cannot load %s: %s\n", lib, dlerror());
		exit(TEST_FAIL);
	}
	/* For programs this one executes. */
	snprintf(path, sizeof(path), "%s%s%s", dir, old && *old ? ":" : "", old ? old : "");
	setenv("LD_LIBRARY_PATH", path, 1);
}

/* The ELF machine this program is built for: the driver library must be for it too. */
#if defined(__x86_64__)
#define TEST_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define TEST_ELF_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define TEST_ELF_MACHINE EM_PPC64
#else
#define TEST_ELF_MACHINE EM_NONE
#endif

/*
 * Whether a manifest's library_path can be this program's driver: a bare name (one manifest
 * for every architecture, as Debian 13 installs it) is resolved by the dynamic loader, which
 * finds the one of this architecture; a path (one manifest per architecture, as Debian 12's
 * lvp_icd.<cpu>.json) must name an ELF file for this machine.
 */
static bool driver_is_ours(const char *library)
{
	Elf64_Ehdr eh;
	ssize_t n;
	int fd;

	if (!strchr(library, '/'))
		return true;
	fd = open(library, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, &eh, sizeof(eh));
	close(fd);
	return n == (ssize_t)sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	       eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_machine == TEST_ELF_MACHINE;
}

/* The "library_path" of a Vulkan manifest (a JSON file), or false. */
static bool manifest_library(const char *manifest, char *library, size_t len)
{
	char text[4096], *p, *end;
	size_t n;
	FILE *f;

	f = fopen(manifest, "r");
	if (!f)
		return false;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	p = strstr(text, "\"library_path\"");
	if (!p || !(p = strchr(p + 14, ':')) || !(p = strchr(p, '"')))
		return false;
	end = strchr(++p, '"');
	if (!end || (size_t)(end - p) >= len)
		return false;
	memcpy(library, p, (size_t)(end - p));
	library[end - p] = '\0';
	return true;
}

/* The loader's system directories for driver manifests, as Debian installs Mesa's. */
static const char *const icd_dirs[] = {
	"/usr/local/share/vulkan/icd.d",
	"/usr/share/vulkan/icd.d",
	"/etc/vulkan/icd.d",
};

const char *test_lavapipe_icd(void)
{
	static char found[PATH_MAX];
	const char *given = getenv("GDR_TEST_LVP_ICD");
	char library[PATH_MAX];

	if (given && *given)
		return access(given, R_OK) ? NULL : given;
	if (found[0])
		return found;
	for (size_t i = 0; i < sizeof(icd_dirs) / sizeof(icd_dirs[0]); i++) {
		DIR *d = opendir(icd_dirs[i]);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			if (strncmp(e->d_name, "lvp_icd.", 8) || !strstr(e->d_name, ".json"))
				continue;
			snprintf(found, sizeof(found), "%s/%s", icd_dirs[i], e->d_name);
			if (manifest_library(found, library, sizeof(library)) &&
			    driver_is_ours(library))
				break;
			found[0] = '\0';
		}
		closedir(d);
		if (found[0])
			return found;
	}
	return NULL;
}

const char *test_lavapipe_missing(void)
{
	void *lib;

	if (!test_lavapipe_icd())
		return "no lavapipe manifest for this architecture (lvp_icd*.json in "
		       "/usr/share/vulkan/icd.d): install mesa-vulkan-drivers";
	lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return "no Vulkan loader (libvulkan.so.1): install libvulkan1";
	dlclose(lib);
	return NULL;
}

void test_use_lavapipe(void)
{
	const char *icd = test_lavapipe_icd();

	if (icd) {
		setenv("VK_DRIVER_FILES", icd, 1);
		/* Older loaders read only the old name. */
		setenv("VK_ICD_FILENAMES", icd, 1);
	}
	setenv("GDRCOPY_BACKEND", "vulkan", 1);
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	if (!getenv("GDRCOPY_LOG_LEVEL"))
		setenv("GDRCOPY_LOG_LEVEL", "3", 1);
}

const char *test_vulkan_loader_path(void)
{
	static char path[PATH_MAX];
	void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	struct link_map *lm = NULL;
	bool found;

	if (!lib)
		return NULL;
	found = !dlinfo(lib, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name[0];
	if (found)
		snprintf(path, sizeof(path), "%s", lm->l_name);
	dlclose(lib);
	return found ? path : NULL;
}

void *test_use_vulkan_hostile(const char *dir, const char **why)
{
	const char *real = test_vulkan_loader_path();
	char lib[PATH_MAX];
	void *hostile;

	if (!real) {
		*why = "no Vulkan loader (libvulkan.so.1) to wrap: install libvulkan1";
		return NULL;
	}
	/* Still loaded, it would be the libvulkan.so.1 that the library's dlopen finds. */
	if (dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD)) {
		*why = "the real Vulkan loader stays loaded in this process";
		return NULL;
	}
	setenv("GDRCOPY_TEST_VK_LOADER", real, 1);
	snprintf(lib, sizeof(lib), "%s/libvulkan.so.1", dir);
	/* Loaded by its path, it is the libvulkan.so.1 a later dlopen of that name finds. */
	hostile = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	if (!hostile)
		*why = "the hostile Vulkan loader is not built (make test-build)";
	return hostile;
}
