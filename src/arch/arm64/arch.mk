# arm64: ASIMD (NEON) is part of the armv8-a baseline every AArch64 Linux compiler targets, so
# neither copy_neon.c nor copy_stp.c needs a flag; a -march in CFLAGS would apply to the
# dispatcher too. This file exists to say so.
