# The vulkan backend: Vulkan's headers to build (the loader is dlopen'd, never linked).
BUILD_DEBS += libvulkan-dev
