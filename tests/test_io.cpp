// Tests of include/exactref/io.h: correctly rounded parsing into the four formats, text and .npy input, shortest
// and hexadecimal printing.
//
// The oracle here is independent of the code under test: a test-only parser turns a decimal or hex string into an
// exact GMP rational, and rounding to a format is decided by binary search over the format's bit patterns with
// exact rational comparisons against the midpoints (ties to the even pattern, overflow at (2 - 2^-p)·2^emax).
// Nothing in it uses MPFR, the library's decoders, or host floating-point arithmetic. Where useful, glibc's
// strtod/strtof (correctly rounded, a second independent implementation) is compared as well.
#include <gmp.h>
#include <gmpxx.h>
#include <gtest/gtest.h>

#include <bit>          // std::bit_cast
#include <cfenv>        // fesetround
#include <cmath>        // std::isnan
#include <cstdio>
#include <cstdlib>      // std::strtod, std::strtof
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>     // open, O_NONBLOCK: releasing a FIFO writer
#include <sys/stat.h>  // mkfifo
#include <unistd.h>    // pipe, write, close

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>  // _mm_getcsr, _mm_setcsr: FTZ/DAZ
#define EXACTREF_TEST_HAVE_MXCSR 1
#endif

#include "exactref/io.h"

namespace {
using exactref::bfloat16;
using exactref::bfloat16_info;
using exactref::binary16_info;
using exactref::binary32_info;
using exactref::binary64_info;
using exactref::data_array;
using exactref::dtype;
using exactref::float16;
using exactref::format_info;
using exactref::parse_number_bits;

const format_info* const all_formats[] = {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info};

// ---- The independent oracle ----------------------------------------------------------------------------------------

mpq_class pow2(long e) {
    mpq_class q(1);
    if (e >= 0) mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(e));
    else mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(-e));
    return q;
}

mpz_class pow10z(unsigned long e) {
    mpz_class z;
    mpz_ui_pow_ui(z.get_mpz_t(), 10, e);
    return z;
}

std::uint64_t sign_mask(const format_info& f) { return std::uint64_t{1} << (f.storage_bits - 1); }
std::uint64_t inf_bits(const format_info& f) { return std::uint64_t{f.special_exponent_field()} << (f.precision - 1); }
std::uint64_t max_finite_bits(const format_info& f) { return inf_bits(f) - 1; }
bool is_nan_pattern(const format_info& f, std::uint64_t b) { return (b & ~sign_mask(f)) > inf_bits(f); }

/// Exact value of a positive finite bit pattern: field 0 → frac·2^(emin-p+1), else (2^(p-1)+frac)·2^(field-emax-p+1).
mpq_class value_of(const format_info& f, std::uint64_t bits) {
    const int p = f.precision;
    const std::uint64_t field = bits >> (p - 1);
    const std::uint64_t frac = bits & ((std::uint64_t{1} << (p - 1)) - 1);
    const mpz_class frac_z(static_cast<unsigned long>(frac));
    if (field == 0) return mpq_class(frac_z) * pow2(f.emin - p + 1);
    return mpq_class(frac_z + mpz_class(static_cast<unsigned long>(std::uint64_t{1} << (p - 1)))) *
           pow2(static_cast<long>(field) - f.emax - p + 1);
}

mpq_class overflow_threshold(const format_info& f) { return (2 - pow2(-f.precision)) * pow2(f.emax); }

struct exact_number {
    bool negative = false;
    mpq_class magnitude;
};

/// Test-only exact parser: [sign] decimal with optional e-exponent, or 0x hex with optional p-exponent.
exact_number parse_exact(const std::string& text) {
    exact_number out;
    std::size_t i = 0;
    if (text[i] == '+' || text[i] == '-') out.negative = text[i++] == '-';
    const bool hex = text.compare(i, 2, "0x") == 0 || text.compare(i, 2, "0X") == 0;
    if (hex) i += 2;
    const int base = hex ? 16 : 10;
    mpz_class mantissa = 0;
    long fraction_digits = 0;
    bool after_point = false;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '.') {
            after_point = true;
            continue;
        }
        int digit = -1;
        if (c >= '0' && c <= '9') digit = c - '0';
        else if (hex && c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        else if (hex && c >= 'A' && c <= 'F') digit = c - 'A' + 10;
        if (digit < 0) break;
        mantissa = mantissa * base + digit;
        if (after_point) ++fraction_digits;
    }
    long exponent = 0;
    if (i < text.size()) exponent = std::stol(text.substr(i + 1));
    out.magnitude = mpq_class(mantissa);
    if (hex) {
        out.magnitude *= pow2(exponent - 4 * fraction_digits);
    } else {
        const long e10 = exponent - fraction_digits;
        if (e10 >= 0) out.magnitude *= mpq_class(pow10z(static_cast<unsigned long>(e10)));
        else out.magnitude /= mpq_class(pow10z(static_cast<unsigned long>(-e10)));
    }
    out.magnitude.canonicalize();
    return out;
}

/// Round-to-nearest-even of an exact number into f, by binary search over the positive finite patterns.
std::uint64_t oracle_round(const format_info& f, const exact_number& x) {
    const std::uint64_t sign = x.negative ? sign_mask(f) : 0;
    const mpq_class& a = x.magnitude;
    if (a >= overflow_threshold(f)) return sign | inf_bits(f);
    std::uint64_t lo = 0, hi = max_finite_bits(f);  // invariant: value_of(lo) <= a
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo + 1) / 2;
        if (value_of(f, mid) <= a) lo = mid;
        else hi = mid - 1;
    }
    const mpq_class below = value_of(f, lo);
    if (below == a || lo == max_finite_bits(f)) return sign | lo;
    const mpq_class midpoint = (below + value_of(f, lo + 1)) / 2;
    if (a < midpoint) return sign | lo;
    if (a > midpoint) return sign | (lo + 1);
    return sign | ((lo & 1) == 0 ? lo : lo + 1);
}

std::uint64_t oracle_parse(const format_info& f, const std::string& text) {
    return oracle_round(f, parse_exact(text));
}

/// The exact decimal expansion of a rational whose denominator divides a power of ten.
std::string exact_decimal(const mpq_class& q) {
    mpz_class den = q.get_den();
    const unsigned long v2 = mpz_scan1(den.get_mpz_t(), 0);
    mpz_class rest = den >> v2;
    const unsigned long v5 = mpz_remove(rest.get_mpz_t(), rest.get_mpz_t(), mpz_class(5).get_mpz_t());
    if (rest != 1) throw std::logic_error("exact_decimal: not a finite decimal");
    const unsigned long k = std::max(v2, v5);
    const mpz_class scaled = q.get_num() * pow10z(k) / den;
    std::string digits = mpz_class(abs(scaled)).get_str();
    if (k > 0) {
        if (digits.size() <= k) digits.insert(0, k - digits.size() + 1, '0');
        digits.insert(digits.size() - k, ".");
    }
    return (q < 0 ? "-" : "") + digits;
}

std::string hex_bits(std::uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(b));
    return buf;
}

// ---- Parsing: hand-checked values ----------------------------------------------------------------------------------

TEST(ParseNumber, PointOneInEveryFormat) {
    // Constants verified outside the code under test (Python: struct.pack('<d'/'<f'/'<e', 0.1); bfloat16 by hand:
    // 0.1 = 1.1001100110011...b × 2^-4, 7 fraction bits 1001100|11... round up to 1001101 → 0x3dcd).
    EXPECT_EQ(parse_number_bits("0.1", binary64_info), 0x3fb999999999999aull);
    EXPECT_EQ(parse_number_bits("0.1", binary32_info), 0x3dcccccdull);
    EXPECT_EQ(parse_number_bits("0.1", binary16_info), 0x2e66ull);
    EXPECT_EQ(parse_number_bits("0.1", bfloat16_info), 0x3dcdull);
    for (const format_info* f : all_formats) {
        SCOPED_TRACE(std::string(f->name));
        EXPECT_EQ(parse_number_bits("0.1", *f), oracle_parse(*f, "0.1"));
        EXPECT_EQ(parse_number_bits("-0.1", *f), oracle_parse(*f, "-0.1"));
    }
    EXPECT_EQ(exactref::parse_number<double>("0.1"), 0.1);
    EXPECT_EQ(exactref::parse_number<float>("0.1"), 0.1f);
    EXPECT_EQ(exactref::parse_number<float16>("0.1").bits, 0x2e66);
    EXPECT_EQ(exactref::parse_number<bfloat16>("0.1").bits, 0x3dcd);
}

TEST(ParseNumber, NoDoubleRoundingThroughBinary64) {
    // 1 + 2^-11 + 2^-70 lies just above the float16 midpoint between 1 and 1 + 2^-10; via binary64 it would become
    // the midpoint itself (1 + 2^-11 + 2^-70 rounds to 1 + 2^-11 in binary64) and then tie to even, 1.0 (0x3c00).
    const std::string above = exact_decimal(1 + pow2(-11) + pow2(-70));
    EXPECT_EQ(parse_number_bits(above, binary16_info), 0x3c01u) << above;
    EXPECT_EQ(parse_number_bits(exact_decimal(1 + pow2(-11) - pow2(-70)), binary16_info), 0x3c00u);
    // The same trap for bfloat16 (midpoint 1 + 2^-8) and for binary32 via binary64 (midpoint 1 + 2^-24).
    EXPECT_EQ(parse_number_bits(exact_decimal(1 + pow2(-8) + pow2(-70)), bfloat16_info), 0x3f81u);
    EXPECT_EQ(parse_number_bits(exact_decimal(1 + pow2(-24) + pow2(-70)), binary32_info), 0x3f800001u);
    EXPECT_EQ(parse_number_bits(exact_decimal(1 + pow2(-24)), binary32_info), 0x3f800000u);  // tie to even
}

TEST(ParseNumber, HexFloats) {
    EXPECT_EQ(parse_number_bits("0x1.8p+1", binary64_info), 0x4008000000000000ull);  // 3
    EXPECT_EQ(parse_number_bits("0X.8P1", binary64_info), 0x3ff0000000000000ull);    // 1
    EXPECT_EQ(parse_number_bits("0x10", binary32_info), 0x41800000ull);              // 16, no exponent
    EXPECT_EQ(parse_number_bits("-0x1.e9ab0ep+4", binary32_info), 0xc1f4d587ull);
    EXPECT_EQ(parse_number_bits("0x1p-1074", binary64_info), 1u);                   // smallest subnormal
    EXPECT_EQ(parse_number_bits("0x1p-1075", binary64_info), 0u);                   // half of it: tie to 0
    EXPECT_EQ(parse_number_bits("0x1.8p-1074", binary64_info), 2u);                 // 1.5 lsb: tie to even 2
    EXPECT_EQ(parse_number_bits("0x1.000001p+0", binary32_info), 0x3f800000u);      // tie to even
    EXPECT_EQ(parse_number_bits("0x1.0000011p+0", binary32_info), 0x3f800001u);     // just above the tie
    EXPECT_EQ(parse_number_bits("0x1.ffcp+15", binary16_info), 0x7bffu);            // 65504 = max
    EXPECT_EQ(parse_number_bits("0x1.ffep+15", binary16_info), 0x7c00u);            // 65520 = threshold → inf
    EXPECT_EQ(parse_number_bits("0x1.ffcp+15", bfloat16_info), 0x4780u);            // 65504 → 65536 in bfloat16
    EXPECT_EQ(parse_number_bits("0x1.8e", binary64_info), 0x3ff8e00000000000ull);   // 'e' is a hex digit
    for (const format_info* f : all_formats)
        for (const char* s : {"0x1.8p+1", "0x1p-149", "0x1.fffffep+127", "0x1.00000000000008p0", "-0x.1p-20"}) {
            SCOPED_TRACE(std::string(f->name) + " " + s);
            EXPECT_EQ(parse_number_bits(s, *f), oracle_parse(*f, s));
        }
}

TEST(ParseNumber, SubnormalsOverflowAndZeros) {
    EXPECT_EQ(parse_number_bits("5.9604644775390625e-8", binary16_info), 1u);    // 2^-24, smallest subnormal
    EXPECT_EQ(parse_number_bits("2.98023223876953125e-8", binary16_info), 0u);   // 2^-25: tie to even zero
    EXPECT_EQ(parse_number_bits("2.98023223876953126e-8", binary16_info), 1u);   // just above the tie
    EXPECT_EQ(parse_number_bits("-2.98023223876953125e-8", binary16_info), 0x8000u);
    EXPECT_EQ(parse_number_bits("6.103515625e-05", binary16_info), 0x0400u);     // 2^-14, smallest normal
    EXPECT_EQ(parse_number_bits("65504", binary16_info), 0x7bffu);
    EXPECT_EQ(parse_number_bits("65519.99", binary16_info), 0x7bffu);
    EXPECT_EQ(parse_number_bits("65520", binary16_info), 0x7c00u);               // threshold → inf
    EXPECT_EQ(parse_number_bits("-65520", binary16_info), 0xfc00u);
    EXPECT_EQ(parse_number_bits("1e309", binary64_info), 0x7ff0000000000000ull);
    EXPECT_EQ(parse_number_bits("-1e309", binary64_info), 0xfff0000000000000ull);
    EXPECT_EQ(parse_number_bits("4.9406564584124654e-324", binary64_info), 1u);
    EXPECT_EQ(parse_number_bits("2.4703282292062327e-324", binary64_info), 0u);  // below half of 2^-1074
    EXPECT_EQ(parse_number_bits("2.4703282292062328e-324", binary64_info), 1u);  // above half
    EXPECT_EQ(parse_number_bits("1e99999999999999999999", binary32_info), 0x7f800000u);
    EXPECT_EQ(parse_number_bits("1e-99999999999999999999", binary32_info), 0u);
    EXPECT_EQ(parse_number_bits("-1e-99999999999999999999", binary32_info), 0x80000000u);
    EXPECT_EQ(parse_number_bits("-0", binary16_info), 0x8000u);
    EXPECT_EQ(parse_number_bits("+0.000e5", bfloat16_info), 0u);
    EXPECT_EQ(parse_number_bits("9.18354961579912115600575419705e-41", bfloat16_info), 1u);  // 2^-133
    EXPECT_EQ(parse_number_bits("3.4e38", bfloat16_info), oracle_parse(bfloat16_info, "3.4e38"));
    EXPECT_EQ(parse_number_bits("3.4e38", bfloat16_info), 0x7f80u);  // above 0x1.ffp+127 + half ulp = 3.396e38
    EXPECT_EQ(parse_number_bits("3.39e38", bfloat16_info), 0x7f7fu);
}

// MPFR's parser wraps exponents past its exponent type: fuzz_number found "-.0012…e-323000000000001244989036" read
// as -Inf. Exponents are clamped to ±(10^7 + length) first, which rounds the same in every format; the text reader
// (fast_float for float64/float32, this path otherwise) agrees.
TEST(ParseNumber, HugeExponentsOverflowOrUnderflowAsWritten) {
    const std::string found = "-.001244989036470328333332e-323000000000001244989036";
    for (const format_info* f : {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info}) {
        const std::uint64_t sign = std::uint64_t{1} << (f->storage_bits - 1);
        const std::uint64_t inf = std::uint64_t{f->special_exponent_field()} << (f->precision - 1);
        EXPECT_EQ(parse_number_bits(found, *f), sign) << f->name;
        EXPECT_EQ(parse_number_bits(found.substr(1), *f), 0u) << f->name;
        EXPECT_EQ(parse_number_bits("1e323000000000001244989036", *f), inf) << f->name;
        EXPECT_EQ(parse_number_bits("-0x1p+323000000000001244989036", *f), sign | inf) << f->name;
        EXPECT_EQ(parse_number_bits("0x1p-18446744073709551617", *f), 0u) << f->name;
        EXPECT_EQ(parse_number_bits("0e999999999999999999999999", *f), 0u) << f->name;
        EXPECT_EQ(parse_number_bits("1e+00000000000000000000000000001", *f), parse_number_bits("10", *f)) << f->name;
        // At the clamp: a mantissa of many zeros still decides by the digits it has.
        EXPECT_EQ(parse_number_bits("0.00000000000000000001e20", *f), parse_number_bits("1", *f)) << f->name;
        std::istringstream in(found + "\n1e323000000000001244989036\n");
        const data_array a = exactref::read_text(in, f->id, "mem");
        ASSERT_EQ(a.size(), 2u);
        std::visit([&](const auto& v) {
            using tr = exactref::format_traits<typename std::decay_t<decltype(v)>::value_type>;
            EXPECT_EQ(static_cast<std::uint64_t>(tr::to_bits(v[0])), sign) << f->name;
            EXPECT_EQ(static_cast<std::uint64_t>(tr::to_bits(v[1])), inf) << f->name;
        }, a.values);
    }
}

TEST(ParseNumber, SpecialValuesAndBlanks) {
    for (const format_info* f : all_formats) {
        SCOPED_TRACE(std::string(f->name));
        const std::uint64_t inf = inf_bits(*f);
        EXPECT_EQ(parse_number_bits("inf", *f), inf);
        EXPECT_EQ(parse_number_bits("+INF", *f), inf);
        EXPECT_EQ(parse_number_bits("Infinity", *f), inf);
        EXPECT_EQ(parse_number_bits("-Inf", *f), inf | sign_mask(*f));
        EXPECT_TRUE(is_nan_pattern(*f, parse_number_bits("nan", *f)));
        EXPECT_TRUE(is_nan_pattern(*f, parse_number_bits("NaN", *f)));
        EXPECT_TRUE(is_nan_pattern(*f, parse_number_bits(" -nan\t", *f)));
        EXPECT_EQ(parse_number_bits(" \t1.5 \n", *f), oracle_parse(*f, "1.5"));
        EXPECT_EQ(parse_number_bits("1.", *f), oracle_parse(*f, "1"));
        EXPECT_EQ(parse_number_bits(".5", *f), oracle_parse(*f, "0.5"));
        EXPECT_EQ(parse_number_bits("2.5E-3", *f), oracle_parse(*f, "2.5e-3"));
    }
}

TEST(ParseNumber, MalformedInputIsRefusedWithItsText) {
    for (const char* bad : {"", "   ", "abc", "1.5x", "1e", "1e+", "0x", "0x1p", "0x1.8q", "1..2", "--1", "+-1", ".",
                            "e5", "0b101", "@inf@", "1,5", "nan(0x1)", "in f", "1 2", "infx", "0x1p1.5", "1e5.0",
                            "١"}) {
        SCOPED_TRACE(std::string("input '") + bad + "'");
        try {
            parse_number_bits(bad, binary32_info);
            ADD_FAILURE() << "accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("not a number: '", 0), 0u) << e.what();
            // The message quotes the text (blanks trimmed).
            std::string trimmed = bad;
            trimmed.erase(0, trimmed.find_first_not_of(" \t"));
            trimmed.erase(trimmed.find_last_not_of(" \t") + 1);
            if (trimmed == "\xD9\xA1") trimmed = "\\xD9\\xA1";  // bytes outside printable ASCII are shown as \xHH
            EXPECT_NE(std::string(e.what()).find("'" + trimmed + "'"), std::string::npos) << e.what();
        }
    }
}

TEST(ParseNumber, InvisibleBytesAreShownEscaped) {
    // A NUL would cut the message short and a UTF-8 byte order mark would be invisible: both are printed as \xHH.
    const std::pair<std::string, std::string> cases[] = {{std::string("1\0", 2), "'1\\x00'"},
                                                         {"\xEF\xBB\xBF" "1", "'\\xEF\\xBB\\xBF1'"},
                                                         {"2\t\x7F", "'2\\x09\\x7F'"}};
    for (const auto& [text, shown] : cases) {
        try {
            parse_number_bits(text, binary64_info);
            ADD_FAILURE() << "accepted " << shown;
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(shown), std::string::npos) << e.what();
        }
    }
}

TEST(ParseNumber, IndependentOfRoundingModeAndFtzDaz) {
    const std::vector<std::string> inputs = {"0.1", "1e-40", "1e-45", "7e-46", "4.9406564584124654e-324", "65519.99",
                                             "1e-7", "3.0000001", "-2.5e-310", "0x1.0000011p+0"};
    std::vector<std::uint64_t> before;
    for (const std::string& s : inputs)
        for (const format_info* f : all_formats) before.push_back(parse_number_bits(s, *f));
    const int old_round = std::fegetround();
    std::fesetround(FE_UPWARD);
#ifdef EXACTREF_TEST_HAVE_MXCSR
    const unsigned old_csr = _mm_getcsr();
    _mm_setcsr(old_csr | 0x8040);  // FTZ (bit 15) and DAZ (bit 6)
#endif
    std::vector<std::uint64_t> after;
    std::vector<std::string> printed_after;
    for (const std::string& s : inputs)
        for (const format_info* f : all_formats) {
            after.push_back(parse_number_bits(s, *f));
            printed_after.push_back(exactref::to_shortest_string(*f, after.back()));
        }
#ifdef EXACTREF_TEST_HAVE_MXCSR
    _mm_setcsr(old_csr);
#endif
    std::fesetround(old_round);
    EXPECT_EQ(before, after);
    std::size_t k = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i)
        for (const format_info* f : all_formats) {
            EXPECT_EQ(printed_after[k], exactref::to_shortest_string(*f, before[k])) << inputs[i] << " " << f->name;
            EXPECT_EQ(before[k], oracle_parse(*f, inputs[i])) << inputs[i] << " " << f->name;
            ++k;
        }
}

// ---- Parsing: every midpoint of the 16-bit formats, sampled midpoints of the wide ones --------------------------

/// For the positive pattern b (finite, below max): the midpoint between b and b+1 must round to the even one, and
/// the midpoint ± a tiny amount to b+1 / b; negated likewise.
void check_midpoints(const format_info& f, std::uint64_t b) {
    SCOPED_TRACE(std::string(f.name) + " pattern " + hex_bits(b));
    const mpq_class lo = value_of(f, b);
    const mpq_class hi = b == max_finite_bits(f) ? overflow_threshold(f) * 2 - lo : value_of(f, b + 1);
    const mpq_class mid = (lo + hi) / 2;
    const std::uint64_t up = b == max_finite_bits(f) ? inf_bits(f) : b + 1;
    const std::uint64_t even = (b & 1) == 0 ? b : up;
    // A perturbation far below the gap, still a finite decimal: 2^-(smallest lsb exponent + 40).
    const mpq_class tiny = pow2(f.subnormal_lsb_exponent() - 40);
    const std::string at = exact_decimal(mid), above = exact_decimal(mid + tiny), below = exact_decimal(mid - tiny);
    EXPECT_EQ(parse_number_bits(at, f), even) << at;
    EXPECT_EQ(parse_number_bits(above, f), up) << above;
    EXPECT_EQ(parse_number_bits(below, f), b) << below;
    EXPECT_EQ(parse_number_bits("-" + at, f), even | sign_mask(f));
    EXPECT_EQ(parse_number_bits("-" + above, f), up | sign_mask(f));
    EXPECT_EQ(parse_number_bits("-" + below, f), b | sign_mask(f));
    EXPECT_EQ(parse_number_bits(exact_decimal(lo), f), b);  // the value itself
}

TEST(ParseNumber, EveryFloat16AndBfloat16MidpointRoundsToEven) {
    for (const format_info* f : {&binary16_info, &bfloat16_info})
        for (std::uint64_t b = 0; b <= max_finite_bits(*f); ++b) check_midpoints(*f, b);
}

TEST(ParseNumber, SampledBinary32AndBinary64MidpointsRoundToEven) {
    constexpr std::uint64_t seed = 20240611;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    for (const format_info* f : {&binary32_info, &binary64_info}) {
        for (int i = 0; i < 1500; ++i) check_midpoints(*f, rng() % (max_finite_bits(*f) + 1));
        for (std::uint64_t b : {std::uint64_t{0}, std::uint64_t{1}, max_finite_bits(*f),
                                std::uint64_t{1} << (f->precision - 1)})
            check_midpoints(*f, b);
    }
}

TEST(ParseNumber, RandomDecimalsAgreeWithOracleAndGlibc) {
    constexpr std::uint64_t seed = 7;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 4000; ++i) {
        // Up to 25 significant digits and exponents spanning every format's range.
        std::string s = (rng() & 1) ? "-" : "";
        const int digits = 1 + static_cast<int>(rng() % 25);
        for (int d = 0; d < digits; ++d) s += static_cast<char>('0' + rng() % 10);
        s += "e" + std::to_string(static_cast<int>(rng() % 700) - 350);
        SCOPED_TRACE(s);
        for (const format_info* f : all_formats) EXPECT_EQ(parse_number_bits(s, *f), oracle_parse(*f, s)) << f->name;
        EXPECT_EQ(parse_number_bits(s, binary64_info), std::bit_cast<std::uint64_t>(std::strtod(s.c_str(), nullptr)));
        EXPECT_EQ(parse_number_bits(s, binary32_info), std::bit_cast<std::uint32_t>(std::strtof(s.c_str(), nullptr)));
    }
}

// ---- Text arrays ---------------------------------------------------------------------------------------------------

template <class T>
std::vector<std::uint64_t> bits_of(const data_array& a) {
    std::vector<std::uint64_t> out;
    for (const T x : std::get<std::vector<T>>(a.values)) out.push_back(exactref::format_traits<T>::to_bits(x));
    return out;
}

TEST(ReadText, SeparatorsCommentsAndLineEndings) {
    std::istringstream in("# header comment\n1, 2,3\r\n\n  4 # trailing comment, 5\n0x1p-1,inf,-0\t-nan,\n");
    const data_array a = exactref::read_text(in, dtype::float16, "data.txt");
    ASSERT_EQ(a.type(), dtype::float16);
    ASSERT_EQ(a.size(), 8u);
    const std::vector<std::uint64_t> got = bits_of<float16>(a);
    const std::vector<std::uint64_t> want = {0x3c00, 0x4000, 0x4200, 0x4400, 0x3800, 0x7c00, 0x8000};
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << i;
    EXPECT_TRUE(is_nan_pattern(binary16_info, got[7]));
}

TEST(ReadText, EachDtypeRoundsOnce) {
    for (const format_info* f : all_formats) {
        std::istringstream in("0.1 1e-40 65519.99 3.4e38");
        const data_array a = exactref::read_text(in, f->id, "mem");
        ASSERT_EQ(a.type(), f->id);
        const std::vector<std::uint64_t> got = std::visit(
            [](const auto& v) {
                std::vector<std::uint64_t> out;
                for (const auto x : v) out.push_back(exactref::format_traits<std::decay_t<decltype(x)>>::to_bits(x));
                return out;
            },
            a.values);
        ASSERT_EQ(got.size(), 4u);
        EXPECT_EQ(got[0], oracle_parse(*f, "0.1"));
        EXPECT_EQ(got[1], oracle_parse(*f, "1e-40"));
        EXPECT_EQ(got[2], oracle_parse(*f, "65519.99"));
        EXPECT_EQ(got[3], oracle_parse(*f, "3.4e38"));
    }
}

TEST(ReadText, EmptyInputIsAnEmptyArray) {
    std::istringstream in("# nothing here\n\n   \n");
    EXPECT_EQ(exactref::read_text(in, dtype::float64, "empty.txt").size(), 0u);
}

TEST(ReadText, MalformedNumberNamesSourceLineAndText) {
    std::istringstream in("1.0\n2.0 # fine\n3.0, 4.O, 5\n");
    try {
        exactref::read_text(in, dtype::float32, "data.txt");
        FAIL() << "accepted 4.O";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("data.txt:3: not a number: '4.O'", 0), 0u) << e.what();
    }
}

// ---- .npy ----------------------------------------------------------------------------------------------------------

/// A .npy file built by hand: magic, version, header length (2 bytes for 1.0, 4 for 2.0/3.0), the dict padded with
/// blanks and '\n' to a multiple of 64 bytes, the data.
std::string npy_bytes(int major, const std::string& dict, const std::string& data) {
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    std::string header = dict;
    const std::size_t prefix = 6 + 2 + length_bytes;
    while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < length_bytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
    return out + header + data;
}

std::string le_bytes(const std::vector<std::uint64_t>& bits, std::size_t item_size) {
    std::string out;
    for (const std::uint64_t b : bits)
        for (std::size_t i = 0; i < item_size; ++i) out += static_cast<char>((b >> (8 * i)) & 0xff);
    return out;
}

std::filesystem::path temp_path(const std::string& name) {
    const std::filesystem::path dir = std::filesystem::path(EXACTREF_BINARY_DIR) / "test_io_files";
    std::filesystem::create_directories(dir);
    return dir / name;
}

std::string write_file(const std::string& name, const std::string& bytes) {
    const std::filesystem::path p = temp_path(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
}

std::string error_of(const std::string& path) {
    try {
        exactref::read_npy(path);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(ReadNpy, EveryHeaderVersionAndDtypeRoundTrips) {
    const std::vector<std::uint64_t> f64 = {0x3fb999999999999a, 0x8000000000000000, 0x7ff0000000000000, 1,
                                            0x7fefffffffffffff, 0xc000000000000000};
    const std::vector<std::uint64_t> f32 = {0x3dcccccd, 0x80000000, 0xff800000, 1, 0x7f7fffff, 0x41f4d587};
    const std::vector<std::uint64_t> f16 = {0x2e66, 0x8000, 0x7c00, 1, 0x7bff, 0xc000};
    for (int major : {1, 2, 3}) {
        SCOPED_TRACE("version " + std::to_string(major) + ".0");
        struct kind {
            const char* descr;
            const std::vector<std::uint64_t>* bits;
            std::size_t size;
            dtype type;
        };
        for (const kind k : {kind{"<f8", &f64, 8, dtype::float64}, kind{"<f4", &f32, 4, dtype::float32},
                             kind{"<f2", &f16, 2, dtype::float16}}) {
            SCOPED_TRACE(k.descr);
            const std::string dict =
                std::string("{'descr': '") + k.descr + "', 'fortran_order': False, 'shape': (2, 3), }";
            const std::string path = write_file("rt.npy", npy_bytes(major, dict, le_bytes(*k.bits, k.size)));
            const data_array a = exactref::read_npy(path);
            ASSERT_EQ(a.type(), k.type);
            std::vector<std::uint64_t> got;
            switch (k.type) {
                case dtype::float64: got = bits_of<double>(a); break;
                case dtype::float32: got = bits_of<float>(a); break;
                default: got = bits_of<float16>(a); break;
            }
            EXPECT_EQ(got, *k.bits);
            // load_array finds the magic without being told.
            EXPECT_EQ(exactref::load_array(path, dtype::float64, false).type(), k.type);
        }
    }
}

TEST(ReadNpy, ShapesScalarEmptyAndPython2Longs) {
    EXPECT_EQ(exactref::read_npy(write_file("scalar.npy", npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, "
                                                                         "'shape': (), }",
                                                                   le_bytes({0x3f800000}, 4))))
                  .size(),
              1u);
    EXPECT_EQ(exactref::read_npy(write_file("empty.npy",
                                            npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }",
                                                      "")))
                  .size(),
              0u);
    EXPECT_EQ(exactref::read_npy(write_file("py2.npy", npy_bytes(1, "{'descr': '<f2', 'fortran_order': False, "
                                                                      "'shape': (1L, 2L), }",
                                                                le_bytes({1, 2}, 2))))
                  .size(),
              2u);
    // Keys in another order, double quotes, an extra key: still a valid header.
    EXPECT_EQ(exactref::read_npy(write_file("order.npy", npy_bytes(2, "{\"shape\": (3,), \"fortran_order\": False, "
                                                                        "\"descr\": \"<f8\", 'extra': [1, (2, 3)]}",
                                                                  le_bytes({1, 2, 3}, 8))))
                  .size(),
              3u);
}

TEST(ReadNpy, RefusesWhatItCannotReadAndSaysWhatToDo) {
    const std::string ok_data = le_bytes({1, 2, 3, 4}, 4);
    const auto with = [&](const std::string& name, const std::string& dict, const std::string& data) {
        return error_of(write_file(name, npy_bytes(1, dict, data)));
    };
    const std::string fortran =
        with("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", ok_data);
    EXPECT_NE(fortran.find("Fortran order"), std::string::npos) << fortran;
    EXPECT_NE(fortran.find("np.ascontiguousarray"), std::string::npos) << fortran;
    EXPECT_NE(fortran.find("fortran.npy"), std::string::npos) << fortran;

    const std::string int32 = with("int.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", ok_data);
    EXPECT_NE(int32.find("unsupported dtype '<i4'"), std::string::npos) << int32;
    EXPECT_NE(int32.find("'<f8'"), std::string::npos) << int32;

    const std::string big = with("big.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", ok_data);
    EXPECT_NE(big.find("big-endian"), std::string::npos) << big;
    EXPECT_NE(big.find("astype('<f4')"), std::string::npos) << big;

    const std::string truncated =
        with("short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", ok_data);
    EXPECT_NE(truncated.find("truncated"), std::string::npos) << truncated;
    EXPECT_NE(truncated.find("5 values of float32 = 20 bytes"), std::string::npos) << truncated;
    EXPECT_NE(truncated.find("holds 16"), std::string::npos) << truncated;

    const std::string trailing =
        with("long.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", ok_data);
    EXPECT_NE(trailing.find("bytes after the data"), std::string::npos) << trailing;

    const std::string structured =
        with("struct.npy", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", ok_data);
    EXPECT_NE(structured.find("structured"), std::string::npos) << structured;

    const std::string no_shape = with("noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", ok_data);
    EXPECT_NE(no_shape.find("lacks"), std::string::npos) << no_shape;

    std::string v4 = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", ok_data);
    v4[6] = 4;
    const std::string version = error_of(write_file("v4.npy", v4));
    EXPECT_NE(version.find("version 4.0"), std::string::npos) << version;

    const std::string full = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", ok_data);
    const std::string cut_header = error_of(write_file("cut.npy", full.substr(0, 30)));
    EXPECT_NE(cut_header.find("truncated"), std::string::npos) << cut_header;

    const std::string missing = error_of(temp_path("does-not-exist.npy").string());
    EXPECT_NE(missing.find("cannot open"), std::string::npos) << missing;
    const std::string directory = error_of(temp_path("").string());
    EXPECT_NE(directory.find("it is a directory"), std::string::npos) << directory;
}

TEST(LoadArray, TextNpyStdinAndDtypeMismatch) {
    const std::string text = write_file("values.txt", "# two values\n0.1\n0x1p-3\n");
    const data_array t = exactref::load_array(text, dtype::bfloat16, true);
    ASSERT_EQ(t.type(), dtype::bfloat16);
    EXPECT_EQ(bits_of<bfloat16>(t), (std::vector<std::uint64_t>{0x3dcd, 0x3e00}));

    const std::string npy = write_file(
        "f4.npy", npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", le_bytes({1, 2}, 4)));
    EXPECT_EQ(exactref::load_array(npy, dtype::float32, true).type(), dtype::float32);
    try {
        exactref::load_array(npy, dtype::float64, true);
        ADD_FAILURE() << "dtype mismatch accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("holds float32 values but dtype float64 was requested"),
                  std::string::npos)
            << e.what();
    }

    // Standard input: text, then .npy.
    for (const bool as_npy : {false, true}) {
        std::istringstream fake(as_npy ? npy_bytes(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                                                   le_bytes({0x3ff0000000000000}, 8))
                                       : std::string("1.0, 2.0\nbad\n"));
        std::streambuf* old = std::cin.rdbuf(fake.rdbuf());
        std::string error;
        std::size_t n = 0;
        try {
            n = exactref::load_array("-", dtype::float64, false).size();
        } catch (const std::invalid_argument& e) {
            error = e.what();
        }
        std::cin.rdbuf(old);
        std::cin.clear();
        if (as_npy) {
            EXPECT_EQ(n, 1u);
            EXPECT_EQ(error, "");
        } else {
            EXPECT_EQ(error.rfind("<stdin>:2: not a number: 'bad'", 0), 0u) << error;
        }
    }

    try {
        exactref::load_array(temp_path("missing.txt").string(), dtype::float64, false);
        ADD_FAILURE() << "missing file accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("missing.txt"), std::string::npos) << e.what();
    }
}

// ---- Streams that cannot seek, read errors, and the text and .npy forms numpy and editors write ------------------

/// A stream buffer over bytes that hands them out one at a time and cannot seek, like a pipe (seekoff and seekpos
/// keep std::streambuf's defaults, which fail). After `fail_after` bytes its underflow throws, as a stream buffer
/// does on a read error (std::basic_filebuf throws std::ios_base::failure); the istream turns that into badbit.
class pipe_like_buffer : public std::streambuf {
public:
    explicit pipe_like_buffer(std::string bytes, std::size_t fail_after = std::string::npos)
        : bytes_(std::move(bytes)), fail_after_(fail_after) {}

protected:
    int_type underflow() override {
        if (pos_ == fail_after_) throw std::ios_base::failure("simulated read error");
        if (pos_ == bytes_.size()) return traits_type::eof();
        char* p = bytes_.data() + pos_++;
        setg(p, p, p + 1);
        return traits_type::to_int_type(*p);
    }

private:
    std::string bytes_;
    std::size_t pos_ = 0;
    std::size_t fail_after_;
};

/// load_array("-") with std::cin reading from `buffer`; returns the array or the error text.
std::pair<data_array, std::string> load_stdin(std::streambuf& buffer, dtype type, bool type_given) {
    std::streambuf* old = std::cin.rdbuf(&buffer);
    std::cin.clear();
    std::pair<data_array, std::string> out;
    try {
        out.first = exactref::load_array("-", type, type_given);
    } catch (const std::invalid_argument& e) {
        out.second = e.what();
    }
    std::cin.rdbuf(old);
    std::cin.clear();
    return out;
}

const std::string three_values_text = "0.1, -2.5e-3\n0x1p-1074\n";
const std::vector<std::uint64_t> three_values_bits = {0x3fb999999999999a, 0xbf647ae147ae147b, 1};

TEST(ReadText, NonSeekableStreamIsReadToItsEnd) {
    EXPECT_EQ(oracle_parse(binary64_info, "0.1"), three_values_bits[0]);
    EXPECT_EQ(oracle_parse(binary64_info, "-2.5e-3"), three_values_bits[1]);
    pipe_like_buffer buffer(three_values_text);
    std::istream in(&buffer);
    EXPECT_EQ(bits_of<double>(exactref::read_text(in, dtype::float64, "pipe")), three_values_bits);
}

TEST(ReadText, FailedStreamIsAnErrorNotAnEmptyArray) {
    // What load_array used to do to a pipe: read the first bytes, then seek back, which fails (failbit). Reading on
    // gave no numbers and n = 0; it must be an error naming the source.
    pipe_like_buffer buffer(three_values_text);
    std::istream in(&buffer);
    char head[6];
    in.read(head, sizeof head);
    in.seekg(0);
    ASSERT_TRUE(in.fail());
    try {
        const data_array a = exactref::read_text(in, dtype::float64, "pipe.txt");
        ADD_FAILURE() << "a failed stream read as " << a.size() << " values";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("pipe.txt: read error before the first line", 0), 0u) << e.what();
    }
}

TEST(ReadText, ReadErrorInTheMiddleIsAnError) {
    pipe_like_buffer buffer(three_values_text, 16);  // fails in the second line
    std::istream in(&buffer);
    try {
        exactref::read_text(in, dtype::float64, "disk.txt");
        ADD_FAILURE() << "a read error passed for the end of the data";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("disk.txt: read error after line 1", 0), 0u) << e.what();
    }
}

TEST(ReadText, ByteOrderMarkAndOldMacLineEnds) {
    {
        std::istringstream in("\xEF\xBB\xBF" "0.1 # a BOM first, as some editors write\n-2.5e-3\n0x1p-1074");
        EXPECT_EQ(bits_of<double>(exactref::read_text(in, dtype::float64, "bom.txt")), three_values_bits);
    }
    {  // a BOM anywhere else is not a blank
        std::istringstream in("1\n\xEF\xBB\xBF" "2\n");
        try {
            exactref::read_text(in, dtype::float64, "bom2.txt");
            ADD_FAILURE() << "a BOM inside the text was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("bom2.txt:2: not a number: '\\xEF\\xBB\\xBF2'", 0), 0u) << e.what();
        }
    }
    {  // CR alone ends a line: comments stop there, and line numbers count it
        std::istringstream in("0.1 # one\r-2.5e-3\r\r0x1p-1074 # three\r");
        EXPECT_EQ(bits_of<double>(exactref::read_text(in, dtype::float64, "mac.txt")), three_values_bits);
    }
    for (const char* text : {"1\r2\rx\r", "1\r\n2\r\nx\r\n", "1\n2\nx\n", "1\r2\r\nx"}) {
        std::istringstream in(text);
        try {
            exactref::read_text(in, dtype::float64, "lines.txt");
            ADD_FAILURE() << "accepted x";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("lines.txt:3: not a number: 'x'", 0), 0u) << e.what();
        }
    }
    std::istringstream blank_lines("\r\r\n\n\rx");  // lines 1 (CR), 2 (CRLF), 3 (LF), 4 (CR), then x on line 5
    try {
        exactref::read_text(blank_lines, dtype::float64, "blank.txt");
        ADD_FAILURE() << "accepted x";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).rfind("blank.txt:5: not a number: 'x'", 0), 0u) << e.what();
    }
}

TEST(LoadArray, StdinThatCannotSeekIsReadWhole) {
    pipe_like_buffer text(three_values_text);
    const auto [t, t_error] = load_stdin(text, dtype::float64, false);
    EXPECT_EQ(t_error, "");
    EXPECT_EQ(bits_of<double>(t), three_values_bits);

    pipe_like_buffer npy(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                                   le_bytes(three_values_bits, 8)));
    const auto [a, a_error] = load_stdin(npy, dtype::float64, false);
    EXPECT_EQ(a_error, "");
    EXPECT_EQ(bits_of<double>(a), three_values_bits);

    pipe_like_buffer broken(three_values_text, 3);
    const auto [b, b_error] = load_stdin(broken, dtype::float64, false);
    EXPECT_EQ(b_error.rfind("<stdin>: read error", 0), 0u) << b_error << " (n = " << b.size() << ")";
}

TEST(LoadArray, PipeAndFifoPathsAreReadWhole) {
    // A path that names a pipe (/dev/fd/N, as bash's process substitution <(...) gives) and a FIFO: neither can
    // seek, and both used to read as an empty array.
    const std::string npy = npy_bytes(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                                      le_bytes(three_values_bits, 8));
    for (const std::string& bytes : {three_values_text, npy}) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0) << std::strerror(errno);
        ASSERT_EQ(::write(fds[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));  // < PIPE_BUF
        ::close(fds[1]);
        const std::string path = "/dev/fd/" + std::to_string(fds[0]);
        std::string error;
        data_array a;
        try {
            a = exactref::load_array(path, dtype::float64, false);
        } catch (const std::invalid_argument& e) {
            error = e.what();
        }
        ::close(fds[0]);
        EXPECT_EQ(error, "");
        EXPECT_EQ(bits_of<double>(a), three_values_bits) << path;
    }

    const std::filesystem::path fifo = temp_path("values.fifo");
    std::filesystem::remove(fifo);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    for (const std::string& bytes : {three_values_text, npy}) {
        // The writer blocks in open() until the reader opens the FIFO; should the reader never do so, opening the
        // read end here (non-blocking) below releases it, so the test cannot hang.
        std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
        std::string error;
        data_array a;
        try {
            a = exactref::load_array(fifo.string(), dtype::float64, false);
        } catch (const std::invalid_argument& e) {
            error = e.what();
        }
        const int release = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
        writer.join();
        if (release >= 0) ::close(release);
        EXPECT_EQ(error, "");
        EXPECT_EQ(bits_of<double>(a), three_values_bits);
    }
    std::filesystem::remove(fifo);
}

TEST(ReadNpy, HeaderLengthIsCappedAndNeverAllocatedAhead) {
    // 13 bytes claiming a 4 GiB header: refused at once (it used to allocate and zero 4 GiB first).
    const std::string huge = error_of(write_file("huge.npy", std::string("\x93NUMPY\x02\x00\xf0\xff\xff\xff{", 13)));
    EXPECT_NE(huge.find("huge.npy: .npy header too large: the file says 4294967280 header bytes"), std::string::npos)
        << huge;
    // numpy's limit, 10000 bytes: a valid header of exactly that length is read, one byte more is refused.
    const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    const auto with_header_length = [&](std::size_t length) {
        std::string header = dict + std::string(length - dict.size() - 1, ' ') + "\n";
        std::string out("\x93NUMPY\x02\x00", 8);
        for (int i = 0; i < 4; ++i) out += static_cast<char>((length >> (8 * i)) & 0xff);
        return out + header + le_bytes(three_values_bits, 8);
    };
    EXPECT_EQ(bits_of<double>(exactref::read_npy(write_file("h10000.npy", with_header_length(10000)))),
              three_values_bits);
    const std::string over = error_of(write_file("h10001.npy", with_header_length(10001)));
    EXPECT_NE(over.find("header too large"), std::string::npos) << over;
    // Within the cap but past the end of the file: truncated, saying how much there was.
    const std::string cut = error_of(write_file("hcut.npy", with_header_length(10000).substr(0, 500)));
    EXPECT_NE(cut.find("truncated .npy file (the header says 10000 header bytes; the file ends after 488)"),
              std::string::npos)
        << cut;
}

TEST(ReadNpy, NumpySpellingsOfTheFloatDtypes) {
    // np.dtype accepts these for the three float dtypes (numpy.lib.format.descr_to_dtype calls it); '=', '|' and no
    // byte order mean the host's, little-endian here.
    const bool little = std::endian::native == std::endian::little;
    struct spelling {
        const char* descr;
        std::size_t size;
        dtype type;
    };
    for (const spelling s : {spelling{"<d", 8, dtype::float64}, spelling{"=f8", 8, dtype::float64},
                             spelling{"|f8", 8, dtype::float64}, spelling{"f8", 8, dtype::float64},
                             spelling{"float64", 8, dtype::float64}, spelling{"double", 8, dtype::float64},
                             spelling{"<f", 4, dtype::float32}, spelling{"=f4", 4, dtype::float32},
                             spelling{"single", 4, dtype::float32}, spelling{"<e", 2, dtype::float16},
                             spelling{"=e", 2, dtype::float16}, spelling{"half", 2, dtype::float16}}) {
        SCOPED_TRACE(s.descr);
        const std::vector<std::uint64_t> bits = {1, 2, 3};
        const std::string path = write_file(
            "spelling.npy",
            npy_bytes(1, std::string("{'descr': '") + s.descr + "', 'fortran_order': False, 'shape': (3,), }",
                      le_bytes(bits, s.size)));
        if (!little && s.descr[0] != '<') {
            EXPECT_NE(error_of(path).find("big-endian"), std::string::npos);
            continue;
        }
        const data_array a = exactref::read_npy(path);
        ASSERT_EQ(a.type(), s.type);
        EXPECT_EQ(s.type == dtype::float64   ? bits_of<double>(a)
                  : s.type == dtype::float32 ? bits_of<float>(a)
                                             : bits_of<float16>(a),
                  bits);
    }
    const std::string big = error_of(write_file(
        "bigd.npy", npy_bytes(1, "{'descr': '>d', 'fortran_order': False, 'shape': (1,), }", le_bytes({1}, 8))));
    EXPECT_NE(big.find("big-endian dtype '>d'"), std::string::npos) << big;
    EXPECT_NE(big.find("astype('<f8')"), std::string::npos) << big;
}

TEST(ReadNpy, TwoByteVoidIsBfloat16OnlyWhenAskedFor) {
    // ml_dtypes' bfloat16 arrays are saved with descr '<V2' (raw 2-byte items): the file does not say bfloat16.
    const std::vector<std::uint64_t> bits = {0x3f80, 0xc000, 0x7f80, 0x0001};  // 1, -2, inf, smallest subnormal
    const std::string path = write_file(
        "bf16.npy", npy_bytes(1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2, 2), }", le_bytes(bits, 2)));
    const data_array a = exactref::load_array(path, dtype::bfloat16, true);
    ASSERT_EQ(a.type(), dtype::bfloat16);
    EXPECT_EQ(bits_of<bfloat16>(a), bits);
    const std::string plain = error_of(path);
    EXPECT_NE(plain.find("dtype '<V2' is raw 2-byte data"), std::string::npos) << plain;
    EXPECT_NE(plain.find("--dtype bfloat16"), std::string::npos) << plain;
    for (const bool given : {false, true}) {
        try {
            exactref::load_array(path, dtype::float16, given);
            ADD_FAILURE() << "'<V2' read without bfloat16 asked for";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("--dtype bfloat16"), std::string::npos) << e.what();
        }
    }
}

TEST(ReadNpy, HeaderTextAfterTheDictAndControlBytesInTheDescr) {
    const std::string garbage = error_of(write_file(
        "garbage.npy", npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), } garbage",
                                 le_bytes(three_values_bits, 8))));
    EXPECT_NE(garbage.find("text after the closing '}'"), std::string::npos) << garbage;
    const std::string nul = error_of(write_file(
        "nul.npy", npy_bytes(1, std::string("{'descr': '<f8") + '\0' + "x', 'fortran_order': False, 'shape': (3,), }",
                             le_bytes(three_values_bits, 8))));
    EXPECT_NE(nul.find("unsupported dtype '<f8\\x00x'"), std::string::npos) << nul;
    // Truncated right after the magic.
    const std::string magic = error_of(write_file("magic.npy", std::string("\x93NUMPY\x01", 7)));
    EXPECT_NE(magic.find("truncated .npy file"), std::string::npos) << magic;
}

// ---- Printing ------------------------------------------------------------------------------------------------------

/// Significant digits of a decimal string and its exact value.
struct decimal_parts {
    std::size_t significant_digits = 0;
    long last_digit_exponent = 0;  // the power of ten of the last significant digit
};

decimal_parts parts_of(const std::string& s) {
    std::string mantissa = s.substr(0, s.find_first_of("eE"));
    const long exp10 = mantissa.size() < s.size() ? std::stol(s.substr(mantissa.size() + 1)) : 0;
    if (!mantissa.empty() && mantissa[0] == '-') mantissa.erase(0, 1);
    const std::size_t point = mantissa.find('.');
    const long integer_digits = static_cast<long>(point == std::string::npos ? mantissa.size() : point);
    std::string digits = mantissa;
    if (point != std::string::npos) digits.erase(point, 1);
    // digits[i] has exponent integer_digits - 1 - i + exp10.
    std::size_t first = digits.find_first_not_of('0');
    std::size_t last = digits.find_last_not_of('0');
    decimal_parts p;
    p.significant_digits = last - first + 1;
    p.last_digit_exponent = integer_digits - 1 - static_cast<long>(last) + exp10;
    return p;
}

mpq_class pow10q(long e) {
    const mpq_class power(pow10z(static_cast<unsigned long>(e >= 0 ? e : -e)));
    return e >= 0 ? power : 1 / power;
}

/// Is there a decimal with at most j significant digits in the interval between lo and hi (endpoints included
/// when `closed`)? Grids 10^q with 10^(q+j) > lo; coarser grids are subsets of the finest one that reaches hi.
bool has_short_decimal(const mpq_class& lo, const mpq_class& hi, bool closed, std::size_t j) {
    // Start just below the right grid (a double estimate only; the loop below settles it exactly).
    long q = static_cast<long>(std::floor(std::log10(lo.get_d()))) - static_cast<long>(j) - 2;
    while (pow10q(q + static_cast<long>(j)) <= lo) ++q;
    for (;; ++q) {
        const mpq_class unit = pow10q(q);
        const mpq_class scaled = lo / unit;
        mpz_class d = scaled.get_num() / scaled.get_den();  // floor for positive
        if (mpq_class(d) < scaled || (!closed && mpq_class(d) == scaled)) d += 1;
        const mpq_class candidate = mpq_class(d) * unit;
        if ((closed ? candidate <= hi : candidate < hi) && d < pow10z(j)) return true;
        if (pow10q(q + static_cast<long>(j)) > hi) return false;
    }
}

void check_shortest(const format_info& f, std::uint64_t b) {
    SCOPED_TRACE(std::string(f.name) + " pattern " + hex_bits(b));
    const std::string s = exactref::to_shortest_string(f, b);
    const std::uint64_t magnitude = b & ~sign_mask(f);
    if (is_nan_pattern(f, b)) {
        EXPECT_EQ(s, "nan");
        return;
    }
    const bool negative = (b & sign_mask(f)) != 0;
    if (magnitude == inf_bits(f)) {
        EXPECT_EQ(s, negative ? "-inf" : "inf");
        return;
    }
    if (magnitude == 0) {
        EXPECT_EQ(s, negative ? "-0" : "0");
        return;
    }
    // Reads back: by the independent oracle and by the library's parser.
    ASSERT_EQ(oracle_parse(f, s), b) << s;
    ASSERT_EQ(parse_number_bits(s, f), b) << s;
    // No shorter decimal reads back: none with fewer digits lies in the rounding interval.
    const decimal_parts p = parts_of(s);
    const mpq_class x = value_of(f, magnitude);
    const mpq_class below = magnitude == 0 ? mpq_class(0) : value_of(f, magnitude - 1);
    const mpq_class above =
        magnitude == max_finite_bits(f) ? overflow_threshold(f) * 2 - x : value_of(f, magnitude + 1);
    const mpq_class lo = (x + below) / 2, hi = (x + above) / 2;
    const bool closed = (magnitude & 1) == 0;  // ties go to the even pattern
    if (p.significant_digits > 1) EXPECT_FALSE(has_short_decimal(lo, hi, closed, p.significant_digits - 1)) << s;
    // Among decimals of that length it is the nearest to x that reads back: a grid neighbour that is closer (it
    // happens at powers of two, where the gap below is half the gap above) must not read back.
    const mpq_class value = parse_exact(negative ? s.substr(1) : s).magnitude;
    const mpq_class unit = pow10q(p.last_digit_exponent);
    for (const mpq_class& neighbour : {mpq_class(value - unit), mpq_class(value + unit)}) {
        if (abs(neighbour - x) >= abs(value - x)) continue;
        EXPECT_NE(oracle_round(f, exact_number{false, neighbour}), magnitude)
            << s << " has a closer neighbour " << exact_decimal(neighbour) << " that reads back";
    }
}

TEST(ToShortestString, AllFloat16AndBfloat16PatternsAreShortestAndReadBack) {
    for (const format_info* f : {&binary16_info, &bfloat16_info})
        for (std::uint64_t b = 0; b < 0x10000; ++b) check_shortest(*f, b);
}

TEST(ToShortestString, KnownValues) {
    EXPECT_EQ(exactref::to_shortest_string(binary16_info, 0x2e66), "0.1");
    EXPECT_EQ(exactref::to_shortest_string(binary16_info, 0x7bff), "65500");     // 65504: (65488, 65520)
    EXPECT_EQ(exactref::to_shortest_string(binary16_info, 0x0001), "6e-08");     // 2^-24
    EXPECT_EQ(exactref::to_shortest_string(binary16_info, 0x3c01), "1.001");     // 1 + 2^-10 = 1.0009765625
    EXPECT_EQ(exactref::to_shortest_string(binary16_info, 0xc500), "-5");
    EXPECT_EQ(exactref::to_shortest_string(bfloat16_info, 0x3dcd), "0.1");       // 0.10009765625, gap 2^-11
    EXPECT_EQ(exactref::to_shortest_string(bfloat16_info, 0x3dce), "0.1006");    // 0.1005859375
    EXPECT_EQ(exactref::to_shortest_string(bfloat16_info, 0x7f7f), "3.39e+38");
    EXPECT_EQ(exactref::to_shortest_string(binary32_info, 0x41f4d587), "30.604261");
    EXPECT_EQ(exactref::to_shortest_string(binary64_info, 0x3fb999999999999a), "0.1");
    EXPECT_EQ(exactref::to_shortest_string(binary64_info, 0x7ff8000000000001), "nan");
    EXPECT_EQ(exactref::to_shortest_string(binary64_info, 0xfff8000000000000), "nan");
    EXPECT_EQ(exactref::to_shortest_string(1e30), "1e+30");
    EXPECT_EQ(exactref::to_shortest_string(-0.0f), "-0");
    EXPECT_EQ(exactref::to_shortest_string(float16::from_bits(0xfc00)), "-inf");
}

TEST(ToShortestString, SampledBinary32AndBinary64ReadBack) {
    constexpr std::uint64_t seed = 99;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 3000; ++i) {
        const std::uint64_t b64 = rng(), b32 = rng() & 0xffffffff;
        for (const auto& [f, b] : {std::pair{&binary64_info, b64}, std::pair{&binary32_info, b32}}) {
            const std::string s = exactref::to_shortest_string(*f, b);
            SCOPED_TRACE(s + " " + hex_bits(b));
            if (is_nan_pattern(*f, b)) {
                EXPECT_EQ(s, "nan");
            } else if ((b & ~sign_mask(*f)) != inf_bits(*f)) {
                EXPECT_EQ(oracle_parse(*f, s), b);
            }
        }
    }
}

TEST(ToHexString, KnownValuesAndExhaustiveReadBack) {
    EXPECT_EQ(exactref::to_hex_string(binary32_info, 0x41f4d587), "0x1.e9ab0ep+4");  // shared/data/README.md
    EXPECT_EQ(exactref::to_hex_string(1.0), "0x1p+0");
    EXPECT_EQ(exactref::to_hex_string(0.1), "0x1.999999999999ap-4");
    EXPECT_EQ(exactref::to_hex_string(binary64_info, 1), "0x1p-1074");
    EXPECT_EQ(exactref::to_hex_string(binary64_info, 0x000fffffffffffff), "0x1.ffffffffffffep-1023");
    EXPECT_EQ(exactref::to_hex_string(-0.0), "-0x0p+0");
    EXPECT_EQ(exactref::to_hex_string(0.0f), "0x0p+0");
    EXPECT_EQ(exactref::to_hex_string(binary16_info, 0x3c01), "0x1.004p+0");
    EXPECT_EQ(exactref::to_hex_string(binary16_info, 0x7bff), "0x1.ffcp+15");
    EXPECT_EQ(exactref::to_hex_string(binary16_info, 0x0001), "0x1p-24");
    EXPECT_EQ(exactref::to_hex_string(bfloat16_info, 0x3dcd), "0x1.9ap-4");
    EXPECT_EQ(exactref::to_hex_string(bfloat16_info, 0xff80), "-inf");
    EXPECT_EQ(exactref::to_hex_string(bfloat16_info, 0x7fc1), "nan");
    for (const format_info* f : {&binary16_info, &bfloat16_info})
        for (std::uint64_t b = 0; b < 0x10000; ++b) {
            if (is_nan_pattern(*f, b)) continue;
            const std::string s = exactref::to_hex_string(*f, b);
            ASSERT_EQ(parse_number_bits(s, *f), b) << f->name << " " << s;
            if ((b & ~sign_mask(*f)) != inf_bits(*f)) ASSERT_EQ(oracle_parse(*f, s), b) << f->name << " " << s;
        }
    std::mt19937_64 rng(5);
    for (int i = 0; i < 3000; ++i) {
        const std::uint64_t b = rng();
        if (is_nan_pattern(binary64_info, b)) continue;
        const std::string s = exactref::to_hex_string(binary64_info, b);
        // glibc's strtod reads hex floats exactly: a second, independent reader.
        EXPECT_EQ(std::bit_cast<std::uint64_t>(std::strtod(s.c_str(), nullptr)), b) << s;
        const std::uint32_t b32 = static_cast<std::uint32_t>(b);
        if (is_nan_pattern(binary32_info, b32)) continue;
        const std::string s32 = exactref::to_hex_string(binary32_info, b32);
        EXPECT_EQ(std::bit_cast<std::uint32_t>(std::strtof(s32.c_str(), nullptr)), b32) << s32;
    }
}

template <class T>
void check_write_read(const std::vector<std::uint64_t>& patterns) {
    using tr = exactref::format_traits<T>;
    std::vector<T> xs;
    for (const std::uint64_t b : patterns) xs.push_back(tr::from_bits(static_cast<typename tr::bits_type>(b)));
    std::ostringstream out;
    exactref::write_text<T>(out, xs, "written by test_io\nsecond comment line");
    std::istringstream in(out.str());
    const data_array a = exactref::read_text(in, tr::info.id, "written");
    const std::vector<std::uint64_t> back = bits_of<T>(a);
    ASSERT_EQ(back.size(), patterns.size()) << out.str();
    for (std::size_t i = 0; i < patterns.size(); ++i) {
        if (is_nan_pattern(tr::info, patterns[i])) EXPECT_TRUE(is_nan_pattern(tr::info, back[i]));
        else EXPECT_EQ(back[i], patterns[i]) << i << "\n" << out.str();
    }
    EXPECT_EQ(out.str().rfind("# written by test_io\n# second comment line\n", 0), 0u) << out.str();
}

TEST(WriteText, ReadsBackBitForBit) {
    check_write_read<double>({0x3fb999999999999a, 1, 0x8000000000000000, 0x7ff0000000000000, 0x7ff8000000000000,
                              0xffefffffffffffff});
    check_write_read<float>({0x41f4d587, 1, 0x80000000, 0xff800000, 0x7fc00000, 0x7f7fffff});
    check_write_read<float16>({0x2e66, 1, 0x8000, 0x7c00, 0x7e00, 0x7bff, 0x3c01});
    check_write_read<bfloat16>({0x3dcd, 1, 0x8000, 0xff80, 0x7fc0, 0x7f7f});
}

}  // namespace

// The streaming text parser takes float64/float32 decimals from fast_float and everything else from MPFR: every
// token it reads must give parse_number_bits' bits (MPFR alone), also for near-halfway decimals, subnormals,
// overflow and underflow, with tokens and "\r\n" split across its 1 MiB reads (the text is over 3 MiB).
TEST(ReadText, StreamedFastPathGivesTheBitsOfTheExactParser) {
    std::mt19937_64 rng(20261202);  // seed printed by the assertion's message below
    std::vector<std::string> tokens;
    std::string text;
    for (int i = 0; i < 200000; ++i) {
        std::string t;
        switch (i % 5) {
            case 0: t = std::to_string(static_cast<double>(rng() >> 11) * 0x1p-30); break;
            case 1: {  // 17-25 significant digits near a binary64 value: near-halfway decimals
                char buf[64];
                std::snprintf(buf, sizeof buf, "%.*e", 16 + static_cast<int>(rng() % 9),
                              std::bit_cast<double>(rng() & 0x7fefffffffffffffULL) * ((rng() & 1) ? 1 : -1));
                t = buf;
                break;
            }
            case 2: t = "1e" + std::to_string(static_cast<int>(rng() % 700) - 350); break;
            case 3: t = "-0.000" + std::to_string(rng() % 100000) + "e-" + std::to_string(rng() % 330); break;
            default: t = (rng() & 1) ? "0x1.8p+" + std::to_string(rng() % 200) : "+3.25E+2"; break;
        }
        tokens.push_back(t);
        text += t;
        text += (i % 7 == 0) ? "\r\n" : (i % 3 == 0 ? ", " : " ");
    }
    for (const exactref::dtype type : {exactref::dtype::float64, exactref::dtype::float32}) {
        std::istringstream in(text);
        const exactref::data_array a = exactref::read_text(in, type, "stream");
        ASSERT_EQ(a.size(), tokens.size());
        const exactref::format_info& f = exactref::info(type);
        std::visit(
            [&](const auto& v) {
                for (std::size_t i = 0; i < v.size(); ++i)
                    ASSERT_EQ(exactref::format_traits<std::decay_t<decltype(v[i])>>::to_bits(v[i]),
                              exactref::parse_number_bits(tokens[i], f))
                        << "token " << i << " '" << tokens[i] << "' in " << f.name << " (seed 20261202)";
            },
            a.values);
    }
}

// array_reader: chunks of at most chunk_values, the same values as load_array, skip_rows, and the parse report.
TEST(ArrayReader, ChunksSkipRowsAndRangeReport) {
    const std::filesystem::path path = std::filesystem::temp_directory_path() / "exactref_test_array_reader.txt";
    {
        std::ofstream out(path);
        out << "x,y\n1e400\n1e-400 0 0e9\n";
        for (std::size_t i = 0; i < 2 * exactref::array_reader::chunk_values + 10; ++i) out << "0.5\n";
    }
    exactref::array_reader reader(path.string(), exactref::dtype::float64, false, {1});
    exactref::data_array chunk;
    std::size_t total = 0, chunks = 0;
    while (reader.next(chunk)) {
        // Text: the values of the last 1 MiB read as well, at most 2^19 (two bytes a number, one of them a separator).
        EXPECT_LE(chunk.size(), exactref::array_reader::chunk_values + (std::size_t{1} << 19));
        total += chunk.size();
        ++chunks;
    }
    EXPECT_EQ(total, 2 * exactref::array_reader::chunk_values + 14);
    EXPECT_GE(chunks, 2u);
    EXPECT_EQ(reader.report().overflowed, 1u);
    EXPECT_EQ(reader.report().first_overflow_line, 2u);
    EXPECT_EQ(reader.report().underflowed, 1u);  // 1e-400; "0" and "0e9" are zeros, not underflows
    EXPECT_EQ(reader.report().first_underflow_line, 3u);
    EXPECT_EQ(reader.report().lines, 3 + 2 * exactref::array_reader::chunk_values + 10);
    try {
        exactref::array_reader header(path.string(), exactref::dtype::float64, false);
        while (header.next(chunk)) {
        }
        ADD_FAILURE() << "the header line was read as a number";
    } catch (const exactref::text_parse_error& e) {
        EXPECT_EQ(e.line, 1u);
        EXPECT_EQ(e.values_read, 0u);
        EXPECT_NE(std::string(e.what()).find(":1: not a number: 'x'"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
}

// parse_report::lines counts every line, a last one without its line end and "\r\n" as one line included, so that
// skip_rows >= lines says the skipped rows were the whole input (the CLI's warning).
TEST(ArrayReader, ReportCountsLines) {
    const std::filesystem::path path = std::filesystem::temp_directory_path() / "exactref_test_lines.txt";
    for (const auto& [text, lines] : std::vector<std::pair<std::string, std::uint64_t>>{
             {"", 0}, {"\n", 1}, {"1", 1}, {"1\n2\n3\n", 3}, {"1\r\n2\r3", 3}, {"# c\n\n4", 3}}) {
        SCOPED_TRACE(text);
        {
            std::ofstream out(path, std::ios::binary);
            out << text;
        }
        exactref::array_reader reader(path.string(), exactref::dtype::float64, false, {5});
        exactref::data_array chunk;
        while (reader.next(chunk)) {
        }
        EXPECT_EQ(reader.report().lines, lines);
        EXPECT_EQ(reader.values_read(), 0u) << "every line skipped";
    }
    std::filesystem::remove(path);
}
