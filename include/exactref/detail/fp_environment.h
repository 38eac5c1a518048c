// exactref/detail/fp_environment.h — runs a computation in the default floating-point environment (round to nearest
// even, no flush-to-zero, no denormals-are-zero, exceptions masked), whatever the caller set, and gives the caller's
// back afterwards. Internal to src/: the trees and comparison orders (src/tree*.cpp, src/orders.cpp) and the
// shortest-decimal printer (src/io.cpp).
//
// Why: the library promises round-to-nearest-even bits identical on every machine and thread count
// (docs/same-bits.md). Native float and double operations round in the thread's current mode and, on x86-64, read
// and write subnormals as zero under MXCSR's DAZ and FTZ bits (FZ in AArch64's FPCR): fold_sum([1, 2^-60]) under
// FE_UPWARD would give 1 + 2^-52, and fold_sum([2^-1074, 2^-1074, 1e-310]) under FTZ/DAZ 0.
//
// The environment is per thread (MXCSR, FPCR and the x87 control word are thread state, and OpenMP's pool threads keep
// whatever environment they last had), so every thread that does the arithmetic holds its own guard: the calling
// thread for the whole call, and each thread of an OpenMP team for its share of a parallel region.
//
// Cost: when the thread is already in the default environment (the usual case) the guard reads MXCSR (or FPCR) and the
// rounding mode, and does nothing else; otherwise it saves the whole environment (fegetenv), installs FE_DFL_ENV, and
// restores the saved one (fesetenv) on exit. Once per call and once per thread per parallel region, never per element.
//
// Compilers do not model the environment (GCC and Clang ignore #pragma STDC FENV_ACCESS): they treat an arithmetic
// operation as a pure function of its operands and may schedule it before or after a call to fesetenv. pairwise_sum's
// last addition did move past the restoring fesetenv, and ran under the caller's FTZ/DAZ. So the guard puts a compiler
// barrier after it installs the default environment and before it restores the caller's (memory is then in order),
// and in_default_fp_environment() also forces the result, which may live in a register only, to be complete before
// the guard ends.
//
// Status flags are not part of the promise: in the fast case the operations raise FE_INEXACT etc. in the calling
// thread as IEEE arithmetic does; when the guard had to change the environment, the caller's whole environment,
// status flags included, is restored as it was.
#pragma once

#include <cfenv>  // std::fegetenv, std::fesetenv, std::fegetround, FE_DFL_ENV, FE_TONEAREST
#include <cstdint>

#if defined(__x86_64__) || defined(__SSE2__)
#include <xmmintrin.h>  // _mm_getcsr, _mm_setcsr: rounding control, exception masks, FTZ and DAZ of MXCSR
#endif

namespace exactref::detail {

/// RAII guard: the default floating-point environment in this thread for the guard's lifetime (see the file comment).
///   { const exactref::detail::default_fp_environment environment; /* native float/double arithmetic here */ }
class default_fp_environment {
public:
    default_fp_environment() noexcept {
        if (is_default()) return;  // nothing to save, nothing to restore
        changed_ = true;
        std::fegetenv(&saved_);
        std::fesetenv(FE_DFL_ENV);  // round to nearest, exceptions masked, flags clear
        clear_flush_to_zero();      // glibc's FE_DFL_ENV clears them too; other C libraries need not
        asm volatile("" ::: "memory");  // no load of the guarded computation's data moves above this point
    }
    ~default_fp_environment() {
        asm volatile("" ::: "memory");  // every store of the guarded computation is done before the restore
        if (changed_) std::fesetenv(&saved_);
    }
    default_fp_environment(const default_fp_environment&) = delete;
    default_fp_environment& operator=(const default_fp_environment&) = delete;

private:
#if defined(__x86_64__) || defined(__SSE2__)
    // MXCSR bits 6 (DAZ), 7-12 (exception masks), 13-14 (rounding control), 15 (FTZ); bits 0-5 are status flags.
    static constexpr unsigned mxcsr_control = 0xFFC0u;
    static constexpr unsigned mxcsr_default = 0x1F80u;  // every exception masked, round to nearest, no FTZ, no DAZ
    static constexpr unsigned mxcsr_ftz_daz = 0x8040u;
#elif defined(__aarch64__)
    // FPCR bits 8-12 and 15 (trap enables), 19 (FZ16), 22-23 (RMode), 24 (FZ), 25 (DN: default NaN); 0 is the default.
    static constexpr std::uint64_t fpcr_control = (std::uint64_t{0x9F} << 8) | (std::uint64_t{1} << 19) |
                                                  (std::uint64_t{3} << 22) | (std::uint64_t{1} << 24) |
                                                  (std::uint64_t{1} << 25);
    static std::uint64_t read_fpcr() noexcept {
        std::uint64_t fpcr = 0;
        asm volatile("mrs %0, fpcr" : "=r"(fpcr));
        return fpcr;
    }
#endif

    static bool is_default() noexcept {
#if defined(__x86_64__) || defined(__SSE2__)
        return (_mm_getcsr() & mxcsr_control) == mxcsr_default && std::fegetround() == FE_TONEAREST;
#elif defined(__aarch64__)
        return (read_fpcr() & fpcr_control) == 0;
#else
        return false;  // unknown flush-to-zero controls: always install FE_DFL_ENV
#endif
    }

    static void clear_flush_to_zero() noexcept {
#if defined(__x86_64__) || defined(__SSE2__)
        _mm_setcsr(_mm_getcsr() & ~mxcsr_ftz_daz);
#elif defined(__aarch64__)
        const std::uint64_t fpcr = read_fpcr() & ~fpcr_control;
        asm volatile("msr fpcr, %0" : : "r"(fpcr));
#endif
    }

    bool changed_ = false;
    std::fenv_t saved_{};
};

/// Nothing: the guard's stand-in where no floating-point arithmetic runs (integer trees).
struct no_fp_environment {};

/// f() computed in the default environment: the guard is held while f runs, and f's result is complete (in memory, at
/// a compiler barrier) before the caller's environment comes back (file comment).
///   const double s = exactref::detail::in_default_fp_environment([&] { return left_fold(xs); });
template <class F>
auto in_default_fp_environment(F&& f) {
    const default_fp_environment environment;
    auto result = f();
    asm volatile("" : "+m"(result) : : "memory");
    return result;
}

}  // namespace exactref::detail
