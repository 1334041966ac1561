# x86-64: each routine is built with exactly the ISA extension it uses; copy.c and cpu.c, which
# run before the CPU is known, stay at the baseline. rep movsb needs no flag.
$(OBJ)/src/arch/x86/copy_sse.o: ISA_CFLAGS := -msse2
$(OBJ)/src/arch/x86/copy_sse41.o: ISA_CFLAGS := -msse4.1
$(OBJ)/src/arch/x86/copy_avx2.o: ISA_CFLAGS := -mavx2
$(OBJ)/src/arch/x86/copy_avx512.o: ISA_CFLAGS := -mavx512f
$(OBJ)/src/arch/x86/copy_movdir64b.o: ISA_CFLAGS := -mmovdir64b
