/* Conversion warnings as errors from here to the end of the file that
 * includes this, for the wrappers generated from <zkroute/calls.h>
 * (zkr__preload_calls_*, compat_check.c, which has no functions): a zkr_ call that stopped taking a
 * zoo_ call's arguments unchanged (or returning its type) is a build
 * error, not a silent conversion. */
#ifndef ZKR_STRICT_H
#define ZKR_STRICT_H

#pragma GCC diagnostic error "-Wconversion"
#pragma GCC diagnostic error "-Wsign-conversion"
#pragma GCC diagnostic error "-Wincompatible-pointer-types"
#pragma GCC diagnostic error "-Wint-conversion"
#ifndef __clang__ /* clang: part of -Wincompatible-pointer-types */
#pragma GCC diagnostic error "-Wdiscarded-qualifiers"
#endif

#endif
