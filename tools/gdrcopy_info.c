/* SPDX-License-Identifier: MIT */
/*
 * gdrcopy_info: which backends can map GPU memory on this machine, why the others cannot, and what
 * gdr_open would choose. Each probe runs in a child process, since the library reads its logging
 * variables once per process and a forced backend is chosen at gdr_open.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"


struct probe {
	int opened;
	int backend;		/* GDR_ATTR_EXT_BACKEND */
	int driver_major, driver_minor;
	int persistent, dmabuf, to_impl, from_impl;
	char why[512];
};

/* A name from gdrapi_ext.h, or "unknown". */
static const char *known(const char *name)
{
	return name ? name : "unknown";
}

/*
 * Which NVIDIA driver flavor the loaded gdrdrv was built for, from its
 * /proc/driver/gdrdrv/params (GDRCopy's module writes the same line); NULL if it does not say.
 */
static const char *gdrdrv_flavor(char *buf, size_t len)
{
	static const char key[] = "Built for NVIDIA driver flavor: ";
	FILE *f = fopen("/proc/driver/gdrdrv/params", "r");
	const char *flavor = NULL;
	char line[256];

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, sizeof(key) - 1)) {
			snprintf(buf, len, "%.*s", (int)strcspn(line + sizeof(key) - 1, "\n"),
				 line + sizeof(key) - 1);
			flavor = buf;
			break;
		}
	}
	fclose(f);
	return flavor;
}

/* What a probe opens with: one backend forced, no setting at all, or this shell's settings. */
enum probe_env { PROBE_FORCED, PROBE_UNSET, PROBE_AS_SET };

/* In a child: open as env says (backend: the one forced), report through fds. */
static void child_probe(enum probe_env env, const char *backend, int result_fd, int log_fd)
{
	struct probe p = { 0 };
	gdr_t g;

	dup2(log_fd, 2);
	if (env == PROBE_FORCED) {
		setenv("GDRCOPY_BACKEND", backend, 1);
	} else if (env == PROBE_UNSET) {
		/* Both of the library's backend switches: GDRCopy's dma-buf one forces a backend too. */
		unsetenv("GDRCOPY_BACKEND");
		unsetenv("GDRCOPY_USE_DMABUF_MMAP");
	}
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	setenv("GDRCOPY_LOG_LEVEL", "2", 1);
	g = gdr_open();
	if (g) {
		p.opened = 1;
		gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_BACKEND, &p.backend);
		gdr_driver_get_version(g, &p.driver_major, &p.driver_minor);
		gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &p.persistent);
		gdr_get_attribute(g, GDR_ATTR_USING_DMA_BUF_MMAP, &p.dmabuf);
		gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_COPY_TO_IMPL, &p.to_impl);
		gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_COPY_FROM_IMPL, &p.from_impl);
		gdr_close(g);
	}
	if (write(result_fd, &p, sizeof(p)) != sizeof(p))
		_exit(1);
	_exit(0);
}

/* Pull "backend NAME: unavailable: REASON" (or the ERR line) out of the child's log. */
static void find_reason(const char *log, const char *backend, char *why, size_t len)
{
	char key[64];
	const char *p, *end;

	snprintf(key, sizeof(key), "backend %s: unavailable: ", backend);
	p = strstr(log, key);
	if (p) {
		p += strlen(key);
	} else if ((p = strstr(log, "ERR:  ")) != NULL) {
		p += 6;
	} else {
		snprintf(why, len, "gdr_open failed without saying why");
		return;
	}
	end = strchr(p, '\n');
	snprintf(why, len, "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
}

/*
 * Run a probe in a child process, into *out; 0, or errno when no child could be started. *out is
 * zeroed first, so it is defined whatever happens: a static analyzer that does not know errno is
 * then non-zero after a failed pipe or fork sees no path that reads it unset.
 */
static int run_probe(enum probe_env env, const char *backend, struct probe *out)
{
	int result[2], log[2], status;
	char text[8192];
	size_t used = 0;
	ssize_t n;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (pipe(result) || pipe(log))
		return errno;
	/* Or the child's copy of what stdout has buffered may be written a second time. */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		close(result[0]);
		close(log[0]);
		child_probe(env, backend, result[1], log[1]);
	}
	close(result[1]);
	close(log[1]);
	while (used < sizeof(text) - 1 && (n = read(log[0], text + used, sizeof(text) - 1 - used)) > 0)
		used += (size_t)n;
	text[used] = '\0';
	if (read(result[0], out, sizeof(*out)) != sizeof(*out))
		snprintf(out->why, sizeof(out->why), "the probe process died");
	else if (!out->opened)
		find_reason(text, backend ? backend : "", out->why, sizeof(out->why));
	close(result[0]);
	close(log[0]);
	waitpid(pid, &status, 0);
	return 0;
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static int file_has(const char *path, const char *needle)
{
	char line[4096];
	int found = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/*
 * Why gdrdrv is not there, when /dev/gdrdrv is missing, and the next step that can work on this
 * machine: the library only knows that the node is missing.
 */
static void gdrdrv_advice(char *why, size_t len)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	const char *dir;
	struct utsname u;
	ssize_t n;
	int in_tree;

	uname(&u);
	if (!exists("/sys/module/nvidia") && !exists("/sys/module/nvidia_current")) {
		snprintf(why, len, "no /dev/gdrdrv: gdrdrv pins through the NVIDIA kernel driver, "
			 "which is not loaded here");
		return;
	}
	if (file_has("/sys/module/module/parameters/sig_enforce", "Y")) {
		snprintf(why, len, "no /dev/gdrdrv: this kernel loads only signed modules; sign "
			 "gdrdrv.ko with a key it trusts (DKMS can) before loading it");
		return;
	}
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
	if (file_has(path, "/gdrdrv.ko")) {
		snprintf(why, len, "no /dev/gdrdrv: gdrdrv is installed but not loaded: sudo modprobe "
			 "gdrdrv");
		return;
	}
	/* Run from a build tree (build/bin/gdrcopy_info): the module and insmod.sh may be at hand. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	dir = dirname(exe);
	snprintf(path, sizeof(path), "%s/../../insmod.sh", dir);
	in_tree = n > 0 && exists(path);
	snprintf(path, sizeof(path), "%s/../kernel/gdrdrv.ko", dir);
	if (in_tree && exists(path)) {
		snprintf(why, len, "no /dev/gdrdrv: gdrdrv is built but not loaded: sudo ./insmod.sh");
		return;
	}
	snprintf(path, sizeof(path), "/lib/modules/%s/build/Makefile", u.release);
	if (in_tree && exists(path))
		snprintf(why, len, "no /dev/gdrdrv: build and load gdrdrv with make modules && sudo "
			 "./insmod.sh, or install the gdrdrv-dkms package");
	else if (in_tree)
		snprintf(why, len, "no /dev/gdrdrv: install the headers of kernel %s and the "
			 "gdrdrv-dkms package, or build gdrdrv with make modules KDIR=<its build dir>",
			 u.release);
	else
		snprintf(why, len, "no /dev/gdrdrv: install the gdrdrv-dkms (Debian) or gdrcopy-kmod "
			 "(RPM) package, with the headers of kernel %s", u.release);
}

/*
 * Programs started from this shell open with its settings, not with none: when it has one of
 * the library's backend switches, what gdr_open does with it. 0, or 1 if a probe cannot start.
 */
static int report_settings(void)
{
	const char *backend = getenv("GDRCOPY_BACKEND"), *dmabuf = getenv("GDRCOPY_USE_DMABUF_MMAP");
	char set[160];
	struct probe p;

	if (backend && *backend)
		snprintf(set, sizeof(set), "GDRCOPY_BACKEND=%.64s", backend);
	else if (dmabuf && *dmabuf)
		snprintf(set, sizeof(set), "GDRCOPY_USE_DMABUF_MMAP=%.64s", dmabuf);
	else
		return 0;
	if (run_probe(PROBE_AS_SET, NULL, &p)) {
		perror("gdrcopy_info: fork");
		return 1;
	}
	if (p.opened) {
		printf("with %s, as here: gdr_open uses: %s\n", set,
		       known(gdr_ext_backend_name(p.backend)));
		return 0;
	}
	if (backend && !strcmp(backend, "gdrdrv") && !exists("/dev/gdrdrv"))
		gdrdrv_advice(p.why, sizeof(p.why));
	printf("with %s, as here: gdr_open fails: %s\n", set, p.why);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gdrcopy_info [-h]\n"
		   "Reports which gdrcopy backends can map GPU memory here and why the others cannot.\n"
		   "  -h, --help      print this help\n");
}

/* -h alone; anything else is named on a line of its own first, as the other tools do. */
static void options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		/* getopt has said which option it does not know. */
		usage(c == 'h' ? stdout : stderr);
		exit(c == 'h' ? 0 : 2);
	}
	if (optind < argc) {
		fprintf(stderr, "gdrcopy_info: unexpected argument %s (see -h)\n", argv[optind]);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct probe p, chosen;
	int major, minor, any = 0;

	options(argc, argv);
	gdr_runtime_get_version(&major, &minor);
	printf("gdrcopy %d.%d (libgdrapi.so.%d), API-compatible with NVIDIA GDRCopy 2.6\n", major,
	       minor, major);
	printf("%-8s %s\n", "backend", "status");
	/* In the order gdr_open tries them. */
	for (int id = GDR_BACKEND_GDRDRV; gdr_ext_backend_name(id); id++) {
		const char *backend = gdr_ext_backend_name(id);

		if (run_probe(PROBE_FORCED, backend, &p)) {
			perror("gdrcopy_info: fork");
			return 1;
		}
		if (p.opened) {
			char flavor[64];
			const char *built_for = !strcmp(backend, "gdrdrv") ?
						gdrdrv_flavor(flavor, sizeof(flavor)) : NULL;

			any = 1;
			printf("%-8s available (driver interface %d.%d, persistent %d%s%s%s)\n",
			       backend, p.driver_major, p.driver_minor, p.persistent,
			       built_for ? ", built for the " : "", built_for ? built_for : "",
			       built_for ? " NVIDIA driver" : "");
		} else {
			if (!strcmp(backend, "gdrdrv") && !exists("/dev/gdrdrv"))
				gdrdrv_advice(p.why, sizeof(p.why));
			printf("%-8s unavailable: %s\n", backend, p.why);
		}
	}
	if (run_probe(PROBE_UNSET, NULL, &chosen)) {
		perror("gdrcopy_info: fork");
		return 1;
	}
	if (chosen.opened) {
		printf("gdr_open uses: %s\n", known(gdr_ext_backend_name(chosen.backend)));
		printf("copy routines for 4 KiB on write-combined mappings: to GPU %s, from GPU %s\n",
		       known(gdr_ext_copy_impl_name(chosen.to_impl)),
		       known(gdr_ext_copy_impl_name(chosen.from_impl)));
	} else {
		printf("gdr_open fails: %s\n", any ? chosen.why :
			"no backend can map GPU memory on this machine (see the reasons above)");
	}
	return report_settings();
}
