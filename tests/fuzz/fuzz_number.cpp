// fuzz_number: parse_number_bits (io.h) on arbitrary text, in all four formats.
// Properties: it accepts exactly the documented grammar (checked by an independent recognizer below), throws only
// std::invalid_argument ("not a number: ...") otherwise; an accepted number is the correctly rounded value of the
// text (an independent exact parse into a Boost rational, rounded by the oracle's integer-only boost_round_bits;
// float64 and float32 also against strtod/strtof), and reads back bit for bit from to_shortest_string and
// to_hex_string.
#include <cerrno>
#include <cstdint>
#include <cstdlib>  // std::strtod, std::strtof
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "exactref/format.h"
#include "exactref/io.h"
#include "fuzz_check.h"
#include "oracle.h"

namespace {

using exactref::format_info;
using exactref::oracle::boost_integer;
using exactref::oracle::boost_rational;

struct expected_number {
    bool negative = false;
    bool nan = false;
    bool inf = false;
    boost_rational magnitude = 0;
    bool huge = false;  // far beyond every format's overflow threshold
    bool tiny = false;  // far below half of every format's smallest subnormal (but not zero)
};

int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

bool iequal(std::string_view a, const char* b) {
    if (a.size() != std::strlen(b)) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != b[i]) return false;
    }
    return true;
}

// The documented grammar of io.h, recognized and valued exactly; nullopt when the text is not a number.
std::optional<expected_number> reference_parse(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    expected_number out;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        out.negative = s[0] == '-';
        s.remove_prefix(1);
    }
    if (iequal(s, "inf") || iequal(s, "infinity")) return out.inf = true, out;
    if (iequal(s, "nan")) return out.nan = true, out;
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    std::size_t i = hex ? 2 : 0;
    const int base = hex ? 16 : 10;
    auto is_mantissa_digit = [&](char c) {
        return (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
    };
    boost_integer mantissa = 0;
    long fraction_digits = 0, digits = 0, significant = 0;
    long leading_integer_digits = 0;  // significant digits before the point
    bool seen_point = false;
    for (; i < s.size(); ++i) {
        if (is_mantissa_digit(s[i])) {
            ++digits;
            const int d = digit_value(s[i]);
            if (significant > 0 || d != 0) {
                ++significant;
                mantissa = mantissa * base + d;
                if (!seen_point) ++leading_integer_digits;
            }
            if (seen_point) ++fraction_digits;
        } else if (s[i] == '.' && !seen_point) {
            seen_point = true;
        } else {
            break;
        }
    }
    if (digits == 0) return std::nullopt;
    long exponent = 0;
    if (i < s.size()) {
        const char marker = s[i];
        if (hex ? (marker != 'p' && marker != 'P') : (marker != 'e' && marker != 'E')) return std::nullopt;
        ++i;
        bool exponent_negative = false;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) exponent_negative = s[i++] == '-';
        std::size_t exponent_digits = 0;
        for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++exponent_digits)
            if (exponent < 100000000) exponent = exponent * 10 + (s[i] - '0');
        if (exponent_digits == 0 || i != s.size()) return std::nullopt;
        if (exponent_negative) exponent = -exponent;
    }
    if (mantissa == 0) return out;
    // value = mantissa * base^-fraction_digits * (hex ? 2^exponent : 10^exponent); its binary magnitude decides
    // the cut-offs (every format lies within 2^-160 .. 2^1030 after rounding).
    const long scale_bits = hex ? exponent - 4 * fraction_digits : 0;
    const long scale_decimal = hex ? 0 : exponent - fraction_digits;
    const long magnitude_log2 =
        static_cast<long>(boost::multiprecision::msb(mantissa)) + scale_bits + (scale_decimal * 3322) / 1000;
    (void)leading_integer_digits;
    if (magnitude_log2 > 1100) return out.huge = true, out;
    if (magnitude_log2 < -1200) return out.tiny = true, out;
    boost_rational value = mantissa;
    if (scale_bits > 0) value *= boost_rational(boost_integer(1) << scale_bits);
    if (scale_bits < 0) value /= boost_rational(boost_integer(1) << -scale_bits);
    if (scale_decimal > 0) value *= boost_rational(boost::multiprecision::pow(boost_integer(10), scale_decimal));
    if (scale_decimal < 0) value /= boost_rational(boost::multiprecision::pow(boost_integer(10), -scale_decimal));
    out.magnitude = value;
    return out;
}

std::uint64_t sign_bit(const format_info& f) { return std::uint64_t{1} << (f.storage_bits - 1); }

std::uint64_t expected_bits(const expected_number& e, const format_info& f) {
    namespace o = exactref::oracle;
    if (e.inf || e.huge) return o::inf_bits(f, e.negative);
    if (e.tiny || e.magnitude == 0) return o::zero_bits(f, e.negative);
    const std::uint64_t bits = o::boost_round_bits(e.magnitude, f, exactref::rounding::to_nearest_even);
    return e.negative ? bits | sign_bit(f) : bits;
}

std::string describe_case(std::string_view text, const format_info& f, std::uint64_t got, std::uint64_t want) {
    return "text '" + std::string(text) + "' as " + std::string(f.name) + ": got " +
           exactref::oracle::describe(got, f) + ", want " + exactref::oracle::describe(want, f);
}

void check_round_trip(const format_info& f, std::uint64_t bits, std::string_view text) {
    namespace o = exactref::oracle;
    for (const std::string& printed : {exactref::to_shortest_string(f, bits), exactref::to_hex_string(f, bits)}) {
        const std::uint64_t back = exactref::parse_number_bits(printed, f);
        if (o::is_nan_bits(f, bits)) {
            EXACTREF_FUZZ_CHECK(o::is_nan_bits(f, back), "NaN printed '" + printed + "' did not read back as NaN");
        } else {
            EXACTREF_FUZZ_CHECK(back == bits, describe_case(text, f, back, bits) + " after printing '" + printed + "'");
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const std::optional<expected_number> want = reference_parse(text);
    for (exactref::dtype d : {exactref::dtype::float64, exactref::dtype::float32, exactref::dtype::float16,
                              exactref::dtype::bfloat16}) {
        const format_info& f = exactref::info(d);
        std::optional<std::uint64_t> got;
        try {
            got = exactref::parse_number_bits(text, f);
        } catch (const std::invalid_argument& e) {
            EXACTREF_FUZZ_CHECK(std::string_view(e.what()).starts_with("not a number: '"), e.what());
        }
        EXACTREF_FUZZ_CHECK(got.has_value() == want.has_value(),
                            "'" + text + "' accepted by " + (got ? "the library" : "the grammar") + " only");
        if (!got) continue;
        if (want->nan) {
            EXACTREF_FUZZ_CHECK(exactref::oracle::is_nan_bits(f, *got) && ((*got & sign_bit(f)) != 0) == want->negative,
                                "'" + text + "': " + exactref::oracle::describe(*got, f));
        } else {
            const std::uint64_t expected = expected_bits(*want, f);
            EXACTREF_FUZZ_CHECK(*got == expected, describe_case(text, f, *got, expected));
        }
        check_round_trip(f, *got, text);
        // The C library's own correctly rounded conversions (glibc strtod/strtof) agree for the wide formats.
        if (text.find('\0') == std::string::npos && !want->nan && (d == exactref::dtype::float64 || d == exactref::dtype::float32)) {
            errno = 0;
            char* end = nullptr;
            if (d == exactref::dtype::float64) {
                const double x = std::strtod(text.c_str(), &end);
                EXACTREF_FUZZ_CHECK(std::bit_cast<std::uint64_t>(x) == *got, describe_case(text, f, *got, std::bit_cast<std::uint64_t>(x)) + " (strtod)");
            } else {
                const float x = std::strtof(text.c_str(), &end);
                EXACTREF_FUZZ_CHECK(std::bit_cast<std::uint32_t>(x) == *got, describe_case(text, f, *got, std::bit_cast<std::uint32_t>(x)) + " (strtof)");
            }
        }
    }
    return 0;
}
