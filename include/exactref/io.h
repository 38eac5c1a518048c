// exactref/io.h — reading and writing arrays of the four formats: text (decimal or C99 hex floats) and .npy.
//
// Text input: numbers separated by white space or commas; '#' starts a comment to the end of the line. Each number
// is decimal ("0.1", "-2.5e-3") or a C99 hex float ("0x1.8p+1"), or inf, -inf, +inf, nan (any case). Each number is
// rounded once, correctly (round-to-nearest-even, with subnormals and overflow to ±Inf), into the dtype: MPFR
// (mpfr_strtofr, mpfr_subnormalize) decides, so parsing "0.1" into float16 never passes through float64.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "exactref/format.h"

namespace exactref {

/// An owned one-dimensional array of one of the four formats.
struct data_array {
    std::variant<std::vector<double>, std::vector<float>, std::vector<float16>, std::vector<bfloat16>> values;
    dtype type() const noexcept { return static_cast<dtype>(values.index()); }
    std::size_t size() const noexcept {
        return std::visit([](const auto& v) { return v.size(); }, values);
    }
};

/// Parses one number (whole string, surrounding blanks allowed) correctly rounded into format f; raw bits.
/// Throws std::invalid_argument("not a number: '...'") for anything else.
std::uint64_t parse_number_bits(std::string_view text, const format_info& f);

template <floating_format T>
T parse_number(std::string_view text) {
    using tr = format_traits<T>;
    return tr::from_bits(static_cast<typename tr::bits_type>(parse_number_bits(text, tr::info)));
}

/// Reads a text array. `source` names the input in error messages ("data.txt:12: not a number: 'abc'").
/// Throws std::invalid_argument on a malformed number (with source:line and the text).
data_array read_text(std::istream& in, dtype type, std::string_view source);

/// Reads a .npy file (format 1.0/2.0/3.0, little-endian float16/float32/float64, C order, any shape: flattened).
/// Throws std::invalid_argument for another dtype, Fortran order, a truncated file or a bad header.
data_array read_npy(const std::string& path);

/// Reads FILE, or standard input for "-": .npy when the file starts with the .npy magic, else text in `type`.
/// For .npy input, a `type` that differs from the file's dtype is an error (std::invalid_argument) unless
/// type_given is false.
data_array load_array(const std::string& path, dtype type, bool type_given);

/// Shortest decimal string that reads back (round-to-nearest) to the same value of format f ("0.1", "1e+30",
/// "-0", "inf", "nan"). For float64/float32 it is std::to_chars' shortest form.
std::string to_shortest_string(const format_info& f, std::uint64_t bits);
template <floating_format T>
std::string to_shortest_string(T x) {
    return to_shortest_string(format_traits<T>::info, format_traits<T>::to_bits(x));
}

/// C99 hex float of the exact value ("0x1.e9ab0ep+4", "-0x0p+0", "inf", "nan"); reads back exactly.
std::string to_hex_string(const format_info& f, std::uint64_t bits);
template <floating_format T>
std::string to_hex_string(T x) {
    return to_hex_string(format_traits<T>::info, format_traits<T>::to_bits(x));
}

/// Writes one number per line as C99 hex floats after a '#' comment line: the CLI's own text format.
template <floating_format T>
void write_text(std::ostream& out, std::span<const T> xs, std::string_view comment);

}  // namespace exactref
