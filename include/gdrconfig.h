/* SPDX-License-Identifier: MIT */
/*
 * gdrconfig.h - the architecture macros of NVIDIA GDRCopy's header of this name, installed
 * beside gdrapi.h as GDRCopy installs it, for programs and build scripts that include it:
 * exactly one of GDRAPI_X86, GDRAPI_POWER and GDRAPI_ARM64, from the compiler's own macros.
 * As GDRCopy's, it knows only GCC-compatible compilers (GCC, clang) and those three
 * architectures, and stops the build for anything else, where a program that relies on one
 * of the macros would otherwise go on without any.
 *
 * Neither gdrapi.h nor this library needs it: the library also builds for other architectures
 * (with its generic copy routines), where this header is an error.
 */
#ifndef GDRCONFIG_H
#define GDRCONFIG_H

#if !defined(__GNUC__)
#error "gdrconfig.h: the compiler is not GCC-compatible (GDRCopy's header knows no other)"
#elif defined(__powerpc__)
#define GDRAPI_POWER 1
#elif defined(__aarch64__)
#define GDRAPI_ARM64 1
#elif defined(__i386__) || defined(__x86_64__) || defined(__X86__)
#define GDRAPI_X86 1
#else
#error "gdrconfig.h: an architecture GDRCopy does not know (it knows x86, POWER and ARM64)"
#endif

#endif /* GDRCONFIG_H */
