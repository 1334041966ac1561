# arm64: ASIMD (NEON) is in the armv8-a baseline that every AArch64 Linux compiler targets, so
# copy_neon.c and copy_stp.c are built with no extra flag (and a -march here would not be theirs
# alone: CFLAGS reach the dispatcher too).
