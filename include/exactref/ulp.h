// exactref/ulp.h — distances in units in the last place.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <cstdint>

#include "exactref/format.h"
#include "exactref/reference.h"

namespace exactref {

/// Signed number of representable values of T from a to b (b above a: positive). +0.0 and -0.0 are the same point;
/// ±Inf count as one step beyond ±max. Exact (integer arithmetic on the encodings), and antisymmetric:
/// ulp_distance(b, a) == -ulp_distance(a, b).
///   ulp_distance(1.0f, std::nextafter(1.0f, 2.0f))  // -> 1
///   ulp_distance(-1.0f, 1.0f)                       // -> 2130706432 (2 · 0x3f800000)
/// Range: float32, float16 and bfloat16 distances always fit. Between binary64 values of opposite signs the distance
/// reaches 2^64 - 2^53 (-Inf to +Inf), more than int64 holds: when |distance| > 2^63 - 1 (e.g. -2.0 to 2.0, whose
/// distance is 2^63) it throws std::overflow_error rather than return a wrong count; abs_ulp_distance gives every
/// distance exactly.
/// Throws std::invalid_argument when a or b is NaN.
std::int64_t ulp_distance_bits(const format_info& f, std::uint64_t a_bits, std::uint64_t b_bits);

template <floating_format T>
std::int64_t ulp_distance(T a, T b) {
    return ulp_distance_bits(format_traits<T>::info, format_traits<T>::to_bits(a), format_traits<T>::to_bits(b));
}

/// |ulp_distance(a, b)| as an unsigned count, exact for every pair of non-NaN values of every format (at most
/// 2^64 - 2^53, binary64's -Inf to +Inf). Never overflows.
///   abs_ulp_distance(2.0, -2.0)  // -> 9223372036854775808 (2^63)
/// Throws std::invalid_argument when a or b is NaN.
std::uint64_t abs_ulp_distance_bits(const format_info& f, std::uint64_t a_bits, std::uint64_t b_bits);

template <floating_format T>
std::uint64_t abs_ulp_distance(T a, T b) {
    return abs_ulp_distance_bits(format_traits<T>::info, format_traits<T>::to_bits(a), format_traits<T>::to_bits(b));
}

/// The error of `result` against the exact value s of `ref`, in ulps of RN(s) in T's format:
/// (r - s) / ulp, ulp = 2^(max(e, emin) - p + 1) with 2^e <= |RN(s)| < 2^(e+1) (the smallest subnormal for RN(s) = 0;
/// the ulp of the largest finite value when RN(s) overflows).
/// Computed exactly and rounded once to binary64. NaN when r or s is NaN; ±inf when exactly one is infinite, 0 when
/// both are the same infinity.
double ulp_error_bits(const format_info& f, std::uint64_t result_bits, const reference& ref);

template <floating_format T>
double ulp_error(T result, const reference& ref) {
    return ulp_error_bits(format_traits<T>::info, format_traits<T>::to_bits(result), ref);
}

}  // namespace exactref
