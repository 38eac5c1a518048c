// exactref/detail/decimal.h — exact decimal strings of dyadic numbers (shared by the accumulator and covers()).
#pragma once

#include <cstddef>
#include <string>

namespace exactref::detail {

/// "-123.45" from digits "12345", 2 fraction digits and a sign: inserts the point (padding with zeros), then drops
/// trailing fraction zeros and a bare point. `digits` is a non-negative integer in decimal.
std::string place_decimal_point(const std::string& digits, std::size_t fraction_digits, bool negative);

}  // namespace exactref::detail
