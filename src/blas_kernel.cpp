// The repair of OpenBLAS's Prescott fallback (src/blas_kernel.h says why). It uses two functions that OpenBLAS's
// DYNAMIC_ARCH build exports, declared weak here so that a build without them (a single-architecture OpenBLAS, or
// another BLAS behind cblas.h) links and simply repairs nothing:
//   gotoblas_dynamic_quit()  forgets the chosen kernel table;
//   gotoblas_dynamic_init()  chooses again (OPENBLAS_CORETYPE, when set, names the table) and initialises it,
// the two calls OpenBLAS itself makes when it loads and unloads (driver/others/dynamic.c). Between them no BLAS call
// may run, which is why the repair runs when this library loads, before any thread of the program can call OpenBLAS
// through it. OPENBLAS_CORETYPE is set only for the one call and restored afterwards, so the process environment
// is what it was.
#include "blas_kernel.h"

#include <cblas.h>

#include <cstdlib>  // std::getenv; setenv, unsetenv (POSIX)
#include <stdexcept>
#include <strings.h>  // strcasecmp (POSIX)

extern "C" {
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

namespace exactref::detail {

namespace {

std::string setting_text() {
    const char* raw = std::getenv("EXACTREF_BLAS_KERNEL");
    return raw == nullptr ? std::string() : std::string(raw);
}

bool setting_valid(const std::string& s) { return s.empty() || s == "keep" || s == "auto"; }

blas_kernel_state load_time_state() {
    blas_kernel_state st;
    st.chosen = openblas_get_corename();
    st.setting = setting_text();
    st.setting_valid = setting_valid(st.setting);
    // A bad setting repairs nothing here (a static initializer cannot throw); exact_matmul reports it.
    if (st.setting_valid) st.repaired = repair_blas_kernel(false);
    return st;
}

// Runs the repair when this translation unit is loaded: with the shared library, after OpenBLAS's own initialiser
// (the dynamic loader initialises dependencies first); with the static library, among the program's static
// initialisers, where OpenBLAS (a shared library) is already initialised too. Were OpenBLAS linked statically and
// initialised after this, its kernel would still be unset here ("Unknown", not "Prescott"): nothing is repaired.
[[maybe_unused]] const blas_kernel_state& state_at_load = blas_kernel();

}  // namespace

const blas_kernel_state& blas_kernel() {
    static const blas_kernel_state st = load_time_state();
    return st;
}

void check_blas_kernel_setting() {
    const blas_kernel_state& st = blas_kernel();
    if (!st.setting_valid)
        throw std::invalid_argument("EXACTREF_BLAS_KERNEL='" + st.setting +
                                    "': expected 'keep' (run the kernel OpenBLAS chose, even its SSE3 fallback "
                                    "'Prescott' on a CPU it does not know) or 'auto' (the default: replace that "
                                    "fallback by the kernel of the CPU's instruction sets), or leave it unset");
}

std::string fallback_blas_kernel() {
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();  // libgcc's and compiler-rt's checks include the OS's support of the vector state (XCR0)
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                        __builtin_cpu_supports("avx512cd");
    if (avx512 && __builtin_cpu_supports("avx512bf16")) return "Cooperlake";
    if (avx512) return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
    if (__builtin_cpu_supports("avx")) return "Sandybridge";
#endif
    return "";
}

std::string repair_blas_kernel(bool even_if_forced) {
    if (gotoblas_dynamic_init == nullptr || gotoblas_dynamic_quit == nullptr) return "";
    if (setting_text() == "keep") return "";
    const char* forced = std::getenv("OPENBLAS_CORETYPE");
    if (forced != nullptr && !even_if_forced) return "";  // the user's choice, e.g. the tests' Prescott runs
    if (strcasecmp(openblas_get_corename(), "Prescott") != 0) return "";
    const std::string target = fallback_blas_kernel();
    if (target.empty()) return "";  // a CPU without AVX: Prescott is the right kernel
    const std::string saved = forced == nullptr ? std::string() : std::string(forced);
    setenv("OPENBLAS_CORETYPE", target.c_str(), 1);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    if (forced == nullptr) unsetenv("OPENBLAS_CORETYPE");
    else setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
    return openblas_get_corename();
}

}  // namespace exactref::detail
