// exactref/format.h — the four IEEE 754 binary formats the library reasons about.
//
// binary64 (double), binary32 (float), binary16 (exactref::float16) and bfloat16 (exactref::bfloat16):
// precision p (significand bits, hidden bit included), exponent range [emin, emax], unit roundoff u = 2^-p,
// and a decode of a value into sign, integer significand and exponent that uses integer operations only
// (std::bit_cast), so nothing here depends on the floating-point environment (rounding mode, FTZ/DAZ).
//
// Source: IEEE 754-2019 §3.3 (parameters), §3.4 (binary interchange encoding); bfloat16 is binary32 with the
// low 16 significand bits removed (Google Brain; Intel BF16 whitepaper 2018).
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <bit>          // std::bit_cast
#include <cstdint>
#include <stdexcept>    // std::invalid_argument
#include <string>
#include <string_view>

namespace exactref {

/// The element types the library accepts, by their usual array names.
enum class dtype { float64, float32, float16, bfloat16 };

/// Parameters of one binary format (IEEE 754-2019 Table 3.5).
///   precision p      significand bits including the hidden bit (53, 24, 11, 8)
///   emin, emax       exponent range of normal numbers: 2^emin is the smallest normal, (2 - 2^(1-p)) 2^emax the largest
///   unit roundoff u  2^-p for round-to-nearest; bounds use u_exponent() = -p
struct format_info {
    dtype id;
    std::string_view name;   // "float64", "float32", "float16", "bfloat16"
    int precision;
    int emin;
    int emax;
    int exponent_bits;
    int storage_bits;

    /// Exponent of the least significant bit of the smallest subnormal: emin - p + 1 (e.g. -1074 for binary64).
    constexpr int subnormal_lsb_exponent() const noexcept { return emin - precision + 1; }
    /// Unit roundoff u = 2^u_exponent() (round-to-nearest, Higham §2.1).
    constexpr int u_exponent() const noexcept { return -precision; }
    /// Biased exponent field of Inf/NaN.
    constexpr std::uint32_t special_exponent_field() const noexcept { return (1u << exponent_bits) - 1u; }
};

inline constexpr format_info binary64_info{dtype::float64, "float64", 53, -1022, 1023, 11, 64};
inline constexpr format_info binary32_info{dtype::float32, "float32", 24, -126, 127, 8, 32};
inline constexpr format_info binary16_info{dtype::float16, "float16", 11, -14, 15, 5, 16};
inline constexpr format_info bfloat16_info{dtype::bfloat16, "bfloat16", 8, -126, 127, 8, 16};

/// Parameters of a dtype.
constexpr const format_info& info(dtype d) noexcept {
    switch (d) {
        case dtype::float64: return binary64_info;
        case dtype::float32: return binary32_info;
        case dtype::float16: return binary16_info;
        case dtype::bfloat16: return bfloat16_info;
    }
    return binary64_info;
}

/// Parses "float64" | "float32" | "float16" | "bfloat16" (also "f64", "double", "f32", "float", "f16", "half", "bf16").
/// Throws std::invalid_argument naming the accepted spellings.
dtype parse_dtype(std::string_view name);

/// Rounding-direction attributes of IEEE 754-2019 §4.3.
enum class rounding {
    to_nearest_even,  // RN: roundTiesToEven
    toward_zero,      // RZ
    upward,           // RU: toward +Inf
    downward,         // RD: toward -Inf
};

std::string_view to_string(rounding mode) noexcept;

/// Host storage of an IEEE binary16 value: the 16 bits, no arithmetic. Conversions go through float exactly
/// (every binary16 value is a binary32 value); from float they round to nearest even with integer operations.
struct float16 {
    std::uint16_t bits = 0;
    constexpr float16() noexcept = default;
    static constexpr float16 from_bits(std::uint16_t b) noexcept { float16 h; h.bits = b; return h; }
    explicit float16(float value) noexcept;
    explicit operator float() const noexcept;
    friend constexpr bool operator==(float16, float16) = default;  // bitwise
};

/// Host storage of a bfloat16 value: the top 16 bits of a binary32. Same conventions as float16.
struct bfloat16 {
    std::uint16_t bits = 0;
    constexpr bfloat16() noexcept = default;
    static constexpr bfloat16 from_bits(std::uint16_t b) noexcept { bfloat16 h; h.bits = b; return h; }
    explicit bfloat16(float value) noexcept;
    explicit operator float() const noexcept;
    friend constexpr bool operator==(bfloat16, bfloat16) = default;  // bitwise
};

/// Compile-time format of a storage type: format_traits<double>, <float>, <float16>, <bfloat16>.
template <class T> struct format_traits;

template <> struct format_traits<double> {
    using bits_type = std::uint64_t;
    static constexpr const format_info& info = binary64_info;
    static bits_type to_bits(double x) noexcept { return std::bit_cast<bits_type>(x); }
    static double from_bits(bits_type b) noexcept { return std::bit_cast<double>(b); }
};
template <> struct format_traits<float> {
    using bits_type = std::uint32_t;
    static constexpr const format_info& info = binary32_info;
    static bits_type to_bits(float x) noexcept { return std::bit_cast<bits_type>(x); }
    static float from_bits(bits_type b) noexcept { return std::bit_cast<float>(b); }
};
template <> struct format_traits<float16> {
    using bits_type = std::uint16_t;
    static constexpr const format_info& info = binary16_info;
    static bits_type to_bits(float16 x) noexcept { return x.bits; }
    static float16 from_bits(bits_type b) noexcept { return float16::from_bits(b); }
};
template <> struct format_traits<bfloat16> {
    using bits_type = std::uint16_t;
    static constexpr const format_info& info = bfloat16_info;
    static bits_type to_bits(bfloat16 x) noexcept { return x.bits; }
    static bfloat16 from_bits(bits_type b) noexcept { return bfloat16::from_bits(b); }
};

template <class T>
concept floating_format = requires { format_traits<T>::info; };

/// A value split into integer parts with integer operations only:
///   finite: value = (negative ? -1 : 1) * significand * 2^exponent, significand < 2^p (0 for zeros),
///           exponent = max(biased, 1) - bias - (p - 1), so subnormals share the exponent of the smallest normals.
struct decoded {
    bool negative = false;
    bool is_nan = false;
    bool is_inf = false;
    std::uint64_t significand = 0;
    int exponent = 0;
};

/// Decodes the raw bits of a value of format f (low storage_bits of `bits`).
constexpr decoded decode_bits(const format_info& f, std::uint64_t bits) noexcept {
    const int frac_bits = f.precision - 1;
    const std::uint64_t frac_mask = (std::uint64_t{1} << frac_bits) - 1;
    const std::uint32_t field = static_cast<std::uint32_t>((bits >> frac_bits) & f.special_exponent_field());
    decoded d;
    d.negative = ((bits >> (f.storage_bits - 1)) & 1u) != 0;
    const std::uint64_t frac = bits & frac_mask;
    if (field == f.special_exponent_field()) {
        d.is_nan = frac != 0;
        d.is_inf = frac == 0;
        return d;
    }
    d.significand = field == 0 ? frac : (frac | (std::uint64_t{1} << frac_bits));
    const int bias = f.emax;
    d.exponent = (field == 0 ? 1 : static_cast<int>(field)) - bias - frac_bits;
    return d;
}

template <floating_format T>
decoded decode(T x) noexcept {
    return decode_bits(format_traits<T>::info, format_traits<T>::to_bits(x));
}

/// Flips the sign bit (exact negation; -(NaN) stays NaN).
template <floating_format T>
T negate(T x) noexcept {
    using tr = format_traits<T>;
    constexpr auto sign = static_cast<typename tr::bits_type>(typename tr::bits_type{1} << (tr::info.storage_bits - 1));
    return tr::from_bits(static_cast<typename tr::bits_type>(tr::to_bits(x) ^ sign));
}

/// Converts a value of format `from` (raw bits) to a binary64 whose value is the same, exactly (every value of the
/// four formats is a binary64 value). Integer operations only.
double to_double_exact(const format_info& from, std::uint64_t bits) noexcept;

/// Rounds a finite-or-special binary64 value to format `to` in mode `mode` and returns the raw bits (low storage_bits).
/// Integer operations only, so the result does not depend on the FP environment. Overflow gives ±Inf or ±max as the
/// mode dictates (IEEE 754-2019 §7.4).
std::uint64_t round_double_to(const format_info& to, double value, rounding mode) noexcept;

}  // namespace exactref
