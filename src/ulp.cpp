// ulp_distance and ulp_error: exact integer arithmetic on encodings and on the exact reference.
#include "exactref/ulp.h"

#include <bit>
#include <limits>
#include <stdexcept>
#include <string>  // std::to_string

#include "exactref/multiprecision.h"

namespace exactref {

namespace {
// Position of a non-NaN value on the integer line of its format: +0 and -0 both map to 0, +Inf to max + 1.
// |position| <= 0x7ff0000000000000 < 2^63 (binary64's +Inf), so each position fits in int64; a difference of two
// positions may not (up to 2^64 - 2^53 in magnitude), so differences are taken in uint64 below.
std::int64_t ordinal(const format_info& f, std::uint64_t bits) {
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    const auto magnitude = static_cast<std::int64_t>(bits & (sign - 1));
    return (bits & sign) != 0 ? -magnitude : magnitude;
}

struct signed_distance {
    bool negative;             // b below a
    std::uint64_t magnitude;   // |ordinal(b) - ordinal(a)| < 2^64, exact
};

signed_distance distance(const format_info& f, std::uint64_t a_bits, std::uint64_t b_bits) {
    if (decode_bits(f, a_bits).is_nan || decode_bits(f, b_bits).is_nan)
        throw std::invalid_argument("ulp_distance: NaN has no place among the " + std::string(f.name) +
                                    " values; check for NaN first");
    const std::int64_t a = ordinal(f, a_bits), b = ordinal(f, b_bits);
    // hi - lo is in [0, 2^64): exact in uint64 (the conversion and the subtraction are modulo 2^64).
    if (b >= a) return {false, static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a)};
    return {true, static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b)};
}
}  // namespace

std::int64_t ulp_distance_bits(const format_info& f, std::uint64_t a_bits, std::uint64_t b_bits) {
    const signed_distance d = distance(f, a_bits, b_bits);
    constexpr auto int64_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (d.magnitude > int64_max)
        throw std::overflow_error("ulp_distance: " + std::to_string(d.magnitude) + " " + std::string(f.name) +
                                  " values lie between the two arguments, more than int64 holds (2^63 - 1); use "
                                  "abs_ulp_distance for the exact unsigned count");
    const auto magnitude = static_cast<std::int64_t>(d.magnitude);
    return d.negative ? -magnitude : magnitude;
}

std::uint64_t abs_ulp_distance_bits(const format_info& f, std::uint64_t a_bits, std::uint64_t b_bits) {
    return distance(f, a_bits, b_bits).magnitude;
}

double ulp_error_bits(const format_info& f, std::uint64_t result_bits, const reference& ref) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const decoded r = decode_bits(f, result_bits);
    const std::uint64_t rn_bits = ref.sum.round_bits(f, rounding::to_nearest_even);
    const decoded rn = decode_bits(f, rn_bits);
    const bool s_special = ref.sum.has_nan() || ref.sum.positive_inf_count() > 0 || ref.sum.negative_inf_count() > 0;
    if (r.is_nan || (s_special && rn.is_nan)) return nan;
    if (s_special) {  // s is ±Inf
        if (r.is_inf && r.negative == rn.negative) return 0;
        return rn.negative ? inf : -inf;
    }
    if (r.is_inf) return r.negative ? -inf : inf;
    // ulp of RN(s) in f: 2^(max(e, emin) - p + 1), e the exponent of RN(s)'s leading bit.
    int ulp_exponent;
    if (rn.is_inf) ulp_exponent = f.emax - f.precision + 1;
    else if (rn.significand == 0) ulp_exponent = f.subnormal_lsb_exponent();
    else ulp_exponent = std::max(rn.exponent + 63 - std::countl_zero(rn.significand), f.emin) - f.precision + 1;
    mpq_class err = value_to_mpq(f, result_bits) - to_mpq(ref.sum);
    if (ulp_exponent >= 0) mpq_div_2exp(err.get_mpq_t(), err.get_mpq_t(), static_cast<mp_bitcnt_t>(ulp_exponent));
    else mpq_mul_2exp(err.get_mpq_t(), err.get_mpq_t(), static_cast<mp_bitcnt_t>(-ulp_exponent));
    return to_double(err, rounding::to_nearest_even);
}

}  // namespace exactref
