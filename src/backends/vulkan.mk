# The vulkan backend loads the Vulkan loader (libvulkan.so.1) at run time and needs no Vulkan
# headers to build. Should a source of it include <vulkan/vulkan.h> again, a build without
# those headers stops here with one line instead of inside the compiler.
VULKAN_HEADER_USERS := $(if $(filter 1,$(VULKAN)),$(shell grep -l '^\#include <vulkan/vulkan.h>' \
	src/backends/*.[ch]))
ifneq ($(VULKAN_HEADER_USERS),)
ifeq ($(shell echo '\#include <vulkan/vulkan.h>' | $(CC) -E -x c - >/dev/null 2>&1 && echo y),)
$(error $(firstword $(VULKAN_HEADER_USERS)) needs <vulkan/vulkan.h>: apt-get install libvulkan-dev, or make VULKAN=0 to leave the vulkan backend out)
endif
endif
