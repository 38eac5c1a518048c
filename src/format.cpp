// Format parameters, names, and the integer-only conversions between the four formats.
#include "exactref/format.h"

#include <string>

#include "exactref/accumulator.h"  // detail::encode

namespace exactref {

dtype parse_dtype(std::string_view name) {
    if (name == "float64" || name == "f64" || name == "double" || name == "binary64") return dtype::float64;
    if (name == "float32" || name == "f32" || name == "float" || name == "binary32") return dtype::float32;
    if (name == "float16" || name == "f16" || name == "half" || name == "binary16") return dtype::float16;
    if (name == "bfloat16" || name == "bf16") return dtype::bfloat16;
    throw std::invalid_argument("unknown dtype '" + std::string(name) +
                                "': use float64, float32, float16 or bfloat16");
}

std::string_view to_string(rounding mode) noexcept {
    switch (mode) {
        case rounding::to_nearest_even: return "to_nearest_even";
        case rounding::toward_zero: return "toward_zero";
        case rounding::upward: return "upward";
        case rounding::downward: return "downward";
    }
    return "?";
}

namespace {
// Converts raw bits of `from` to raw bits of `to`, rounding in `mode` (exact when `to` is wider).
std::uint64_t convert_bits(const format_info& from, std::uint64_t bits, const format_info& to, rounding mode) {
    const decoded d = decode_bits(from, bits);
    const std::uint64_t sign = std::uint64_t{d.negative} << (to.storage_bits - 1);
    const int frac_bits = to.precision - 1;
    if (d.is_nan) return sign | (std::uint64_t{to.special_exponent_field()} << frac_bits) |
                         (std::uint64_t{1} << (frac_bits - 1));  // quiet NaN
    if (d.is_inf) return sign | (std::uint64_t{to.special_exponent_field()} << frac_bits);
    return detail::encode(to, d.negative, d.significand, d.exponent, false, mode);
}
}  // namespace

double to_double_exact(const format_info& from, std::uint64_t bits) noexcept {
    return std::bit_cast<double>(convert_bits(from, bits, binary64_info, rounding::to_nearest_even));
}

std::uint64_t round_double_to(const format_info& to, double value, rounding mode) noexcept {
    return convert_bits(binary64_info, std::bit_cast<std::uint64_t>(value), to, mode);
}

float16::float16(float value) noexcept
    : bits(static_cast<std::uint16_t>(
          convert_bits(binary32_info, std::bit_cast<std::uint32_t>(value), binary16_info, rounding::to_nearest_even))) {}

float16::operator float() const noexcept {
    return std::bit_cast<float>(
        static_cast<std::uint32_t>(convert_bits(binary16_info, bits, binary32_info, rounding::to_nearest_even)));
}

bfloat16::bfloat16(float value) noexcept
    : bits(static_cast<std::uint16_t>(
          convert_bits(binary32_info, std::bit_cast<std::uint32_t>(value), bfloat16_info, rounding::to_nearest_even))) {}

bfloat16::operator float() const noexcept {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

}  // namespace exactref
