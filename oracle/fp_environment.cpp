// Setting the host floating-point environment for tests: rounding mode (C99 fesetround) and FTZ/DAZ (x86-64 MXCSR).
#include <cfenv>
#include <stdexcept>

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>  // _mm_getcsr, _mm_setcsr
#define EXACTREF_ORACLE_HAS_MXCSR 1
#endif

#include "oracle.h"

namespace exactref::oracle {
namespace {

#ifdef EXACTREF_ORACLE_HAS_MXCSR
constexpr unsigned mxcsr_ftz = 1u << 15;  // flush-to-zero: subnormal results become ±0
constexpr unsigned mxcsr_daz = 1u << 6;   // denormals-are-zero: subnormal operands read as ±0
#endif

int to_fe(rounding mode) {
    switch (mode) {
        case rounding::to_nearest_even: return FE_TONEAREST;
        case rounding::toward_zero: return FE_TOWARDZERO;
        case rounding::upward: return FE_UPWARD;
        case rounding::downward: return FE_DOWNWARD;
    }
    throw std::invalid_argument("oracle: unknown rounding mode");
}

}  // namespace

void set_rounding_mode(rounding mode) {
    if (std::fesetround(to_fe(mode)) != 0)
        throw std::runtime_error("oracle set_rounding_mode: the host refused fesetround(" +
                                 std::string(to_string(mode)) + ")");
}

rounding current_rounding_mode() {
    switch (std::fegetround()) {
        case FE_TOWARDZERO: return rounding::toward_zero;
        case FE_UPWARD: return rounding::upward;
        case FE_DOWNWARD: return rounding::downward;
        default: return rounding::to_nearest_even;
    }
}

bool ftz_daz_supported() noexcept {
#ifdef EXACTREF_ORACLE_HAS_MXCSR
    return true;
#else
    return false;
#endif
}

void set_ftz_daz(bool on) {
#ifdef EXACTREF_ORACLE_HAS_MXCSR
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(on ? (csr | mxcsr_ftz | mxcsr_daz) : (csr & ~(mxcsr_ftz | mxcsr_daz)));
#else
    if (on) throw std::runtime_error("oracle set_ftz_daz: FTZ/DAZ control is implemented for x86-64 only");
#endif
}

bool ftz_daz_enabled() noexcept {
#ifdef EXACTREF_ORACLE_HAS_MXCSR
    const unsigned csr = _mm_getcsr();
    return (csr & mxcsr_ftz) != 0 && (csr & mxcsr_daz) != 0;
#else
    return false;
#endif
}

fp_environment_guard::fp_environment_guard(rounding mode, bool ftz_daz) {
    if (ftz_daz && !ftz_daz_supported())
        throw std::runtime_error("oracle fp_environment_guard: FTZ/DAZ control is implemented for x86-64 only");
    std::fegetenv(&saved_env_);
#ifdef EXACTREF_ORACLE_HAS_MXCSR
    saved_mxcsr_ = _mm_getcsr();
#endif
    set_rounding_mode(mode);
    set_ftz_daz(ftz_daz);
}

fp_environment_guard::~fp_environment_guard() {
    std::fesetenv(&saved_env_);
#ifdef EXACTREF_ORACLE_HAS_MXCSR
    _mm_setcsr(saved_mxcsr_);
#endif
}

}  // namespace exactref::oracle
