/* SPDX-License-Identifier: MIT */
/* Settings, cuInit, versions, error strings and the test hooks of the simulated driver. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;
struct sim_state sim = {
	.phys = LIST_HEAD_INITIALIZER(sim.phys),
	.ranges = LIST_HEAD_INITIALIZER(sim.ranges),
	.next_id = 1,
};

static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static struct sim_config config;

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && *v ? (int)strtol(v, NULL, 0) : def;
}

static bool parse_uuid(const char *s, unsigned char uuid[16])
{
	for (int i = 0; i < 16; i++) {
		unsigned v;

		while (*s == '-')
			s++;
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) ||
		    sscanf(s, "%2x", &v) != 1)
			return false;
		uuid[i] = (unsigned char)v;
		s += 2;
	}
	return *s == '\0';
}

static void config_read(void)
{
	const char *uuid = getenv("GDRCOPY_SIM_CUDA_UUID");
	const char *backing = getenv("GDRCOPY_SIM_CUDA_BACKING");
	const char *hide = getenv("GDRCOPY_SIM_CUDA_HIDE");
	const char *attrs = getenv("GDRCOPY_SIM_CUDA_ATTR");
	const char *nvp2p = getenv("GDRCOPY_SIM_CUDA_NVP2P");

	config.driver_version = env_int("GDRCOPY_SIM_CUDA_VERSION", 13000);
	config.device_count = env_int("GDRCOPY_SIM_CUDA_DEVICES", 1);
	if (config.device_count < 0)
		config.device_count = 0;
	if (config.device_count > SIM_MAX_DEVICES)
		config.device_count = SIM_MAX_DEVICES;
	config.init_error = (CUresult)env_int("GDRCOPY_SIM_CUDA_INIT_ERROR", CUDA_SUCCESS);
	config.bad_range = env_int("GDRCOPY_SIM_CUDA_BAD_RANGE", 0);
	config.bad_ordinal = env_int("GDRCOPY_SIM_CUDA_BAD_ORDINAL", 0) != 0;
	config.fork_refuses = env_int("GDRCOPY_SIM_CUDA_FORK_REFUSES", 0) != 0;
	config.use_vulkan = !backing || strcmp(backing, "memfd") != 0;
	if (uuid && *uuid) {
		config.uuid_forced = parse_uuid(uuid, config.uuid);
		if (!config.uuid_forced)
			fprintf(stderr, "simcuda: GDRCOPY_SIM_CUDA_UUID=%s is not 32 hex digits; "
				"ignored\n", uuid);
	}
	/* Commas on both ends, so a lookup is a search for ",name,". */
	snprintf(config.hidden, sizeof(config.hidden), ",%s,", hide ? hide : "");
	snprintf(config.attr_overrides, sizeof(config.attr_overrides), "%s", attrs ? attrs : "");
	snprintf(config.nvp2p_path, sizeof(config.nvp2p_path), "%s", nvp2p ? nvp2p : "");
}

const struct sim_config *sim_config(void)
{
	pthread_once(&config_once, config_read);
	return &config;
}

/*
 * NVIDIA's driver does not survive fork: in a child of a process that had initialised it, cuInit
 * and every call that needs an initialised driver fail with CUDA_ERROR_NOT_INITIALIZED. The
 * simulator accepts them unless told to refuse.
 */
static bool forked_after_init(void)
{
	return sim_config()->fork_refuses && sim.initialized && sim.init_pid != getpid();
}

CUresult sim_check_init(void)
{
	return sim.initialized && !forked_after_init() ? CUDA_SUCCESS :
							 CUDA_ERROR_NOT_INITIALIZED;
}

CUresult CUDAAPI cuInit(unsigned int flags)
{
	const struct sim_config *cfg = sim_config();
	CUresult res = CUDA_SUCCESS;

	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (cfg->init_error != CUDA_SUCCESS)
		return cfg->init_error;
	pthread_mutex_lock(&sim_lock);
	if (forked_after_init()) {
		res = CUDA_ERROR_NOT_INITIALIZED;
	} else if (!sim.initialized) {
		sim_devices_init();
		if (cfg->device_count == 0) {
			res = CUDA_ERROR_NO_DEVICE;
		} else {
			sim.initialized = true;
			sim.init_pid = getpid();
		}
	}
	pthread_mutex_unlock(&sim_lock);
	return res;
}

CUresult CUDAAPI cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = sim_config()->driver_version;
	return CUDA_SUCCESS;
}

static const struct {
	CUresult code;
	const char *name;
	const char *text;
} errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
	  "an illegal memory access was encountered" },
	{ CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static int error_index(CUresult code)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == code)
			return (int)i;
	return -1;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **str)
{
	int i = error_index(error);

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = i < 0 ? NULL : errors[i].name;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **str)
{
	int i = error_index(error);

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = i < 0 ? NULL : errors[i].text;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

__attribute__((visibility("default"))) void simcuda_get_counters(struct simcuda_counters *c)
{
	pthread_mutex_lock(&sim_lock);
	*c = sim.counters;
	pthread_mutex_unlock(&sim_lock);
}

__attribute__((visibility("default"))) const char *simcuda_backing(void)
{
	const char *ret;

	pthread_mutex_lock(&sim_lock);
	ret = sim.vulkan_ok ? "vulkan" : "memfd";
	pthread_mutex_unlock(&sim_lock);
	return ret;
}
