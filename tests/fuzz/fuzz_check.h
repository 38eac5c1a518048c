// tests/fuzz/fuzz_check.h — the property check of the fuzz targets: a violated property prints what and aborts, so
// libFuzzer saves the input as a crash (a plain assert() would vanish under NDEBUG).
#pragma once

#include <cstdio>   // std::fprintf
#include <cstdlib>  // std::abort
#include <string>

#define EXACTREF_FUZZ_CHECK(condition, what)                                                             \
    do {                                                                                                 \
        if (!(condition)) {                                                                              \
            std::fprintf(stderr, "%s:%d: property violated: %s\n  %s\n", __FILE__, __LINE__, #condition, \
                         std::string(what).c_str());                                                     \
            std::abort();                                                                                \
        }                                                                                                \
    } while (0)
