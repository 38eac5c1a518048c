// exactref/config.h — what every public header needs before anything else: C++20.
//
// Each public header includes this one first, so a build with an older standard stops at its first line with the
// reason (exactref uses concepts, std::span, std::bit_cast and designated initializers) instead of deep in another
// header. MSVC reports its standard in _MSVC_LANG (__cplusplus stays 199711L without /Zc:__cplusplus).
#pragma once

#if defined(_MSVC_LANG)
#define EXACTREF_CPLUSPLUS _MSVC_LANG
#else
#define EXACTREF_CPLUSPLUS __cplusplus
#endif

#if EXACTREF_CPLUSPLUS < 202002L
#error "exactref needs C++20 (-std=c++20): compile with -std=c++20 or newer (CMake: link exactref::exactref, which asks for cxx_std_20)"
#endif
