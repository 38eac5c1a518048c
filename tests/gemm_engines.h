// The exact GEMM's engines as a test parameter (tests/test_gemm.cpp, tests/test_gemm_covers.cpp): every test of a
// suite deriving from gemm_engine_test runs once per engine and dispatch level (binary64, int8-vnni where the CPU has
// it, int8-plain), with current_engine() set for the test's products.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>  // getenv, setenv, unsetenv (EXACTREF_GEMM_T)
#include <stdexcept>
#include <string>
#include <vector>

#include "exactref/gemm.h"

namespace exactref_test {

// The planner prices slices with the engines' costs measured at run time; under AddressSanitizer those prices are
// distorted (the instrumented int8 kernels run many times slower than DGEMM), so assertions about the slice pattern it
// picks (slice counts, far entries, which elements Step S6 encloses) hold only without it. Exactness is checked either way.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool running_under_address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool running_under_address_sanitizer = true;
#else
inline constexpr bool running_under_address_sanitizer = false;
#endif
#else
inline constexpr bool running_under_address_sanitizer = false;
#endif

inline exactref::gemm_engine& current_engine() {
    static exactref::gemm_engine engine = exactref::gemm_engine::binary64;
    return engine;
}

class gemm_engine_test : public ::testing::TestWithParam<exactref::gemm_engine> {
protected:
    void SetUp() override {
        current_engine() = GetParam();
        if (current_engine() == exactref::gemm_engine::int8_vnni && !supports_int8_vnni())
            GTEST_SKIP() << "this CPU or OS has no AVX-512 VNNI: int8-vnni is tested where it runs";
    }
    void TearDown() override { current_engine() = exactref::gemm_engine::binary64; }

public:
    // Whether a forced int8-vnni product runs here (it throws std::runtime_error where it cannot).
    static bool supports_int8_vnni() {
        using namespace exactref;
        const std::vector<float> one{1.0f};
        try {
            (void)exact_matmul(row_major<float>(one, 1, 1), row_major<float>(one, 1, 1),
                               matmul_options{matmul_method::sliced, 1, 0, true, gemm_engine::int8_vnni});
            return true;
        } catch (const std::runtime_error&) {
            return false;
        }
    }
};

// INSTANTIATE_TEST_SUITE_P(Engines, Suite, all_engines(), engine_test_name).
inline auto all_engines() {
    return ::testing::Values(exactref::gemm_engine::binary64, exactref::gemm_engine::int8_vnni,
                             exactref::gemm_engine::int8_plain);
}
inline std::string engine_test_name(const ::testing::TestParamInfo<exactref::gemm_engine>& info) {
    std::string name = exactref::engine_name(info.param);
    for (char& ch : name)
        if (ch == '-') ch = '_';
    return name;
}

// An environment variable set (value) or unset (nullptr) for one test, restored afterwards.
struct environment_guard {
    std::string name, saved;
    bool had = false;
    environment_guard(const char* variable, const char* value) : name(variable) {
        const char* old = std::getenv(variable);
        had = old != nullptr;
        if (had) saved = old;
        if (value != nullptr) setenv(variable, value, 1);
        else unsetenv(variable);
    }
    ~environment_guard() {
        if (had) setenv(name.c_str(), saved.c_str(), 1);
        else unsetenv(name.c_str());
    }
    environment_guard(const environment_guard&) = delete;
    environment_guard& operator=(const environment_guard&) = delete;
};

// EXACTREF_GEMM_T (levels, enclosed, auto) for one test, restored afterwards.
struct t_source_guard : environment_guard {
    explicit t_source_guard(const char* value) : environment_guard("EXACTREF_GEMM_T", value) {}
};

}  // namespace exactref_test
