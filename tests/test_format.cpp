// format.h against IEEE 754-2019 Table 3.5 and against MPFR/Boost: parameters, decode of edge encodings, the
// float16/bfloat16 <-> float conversions for every one of the 65536 bit patterns both ways, to_double_exact and
// round_double_to in all four rounding modes. Every expected bit pattern comes from two independent oracles
// (MPFR rounding, Boost integer rounding) that must agree first.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>  // std::is_invocable_r_v
#include <vector>

#include "exactref/format.h"
#include "oracle.h"

namespace {

using namespace exactref;
namespace orc = exactref::oracle;

constexpr rounding all_modes[] = {rounding::to_nearest_even, rounding::toward_zero, rounding::upward,
                                  rounding::downward};
const format_info* const all_formats[] = {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info};

// The two oracles' rounding of the exact value of x (bits of `from`) to `to` in `mode`; they must agree.
std::uint64_t oracle_convert(std::uint64_t x, const format_info& from, const format_info& to, rounding mode) {
    const orc::parts p = orc::decode(from, x);
    if (p.nan) return orc::nan_bits(to);
    if (p.inf) return orc::inf_bits(to, p.negative);
    if (p.significand == 0) return orc::zero_bits(to, p.negative);
    const std::uint64_t by_mpfr = orc::mpfr_round_bits(orc::mpfr_value(x, from).get(), to, mode);
    const std::uint64_t by_boost = orc::boost_round_bits(orc::boost_value(x, from), to, mode);
    EXPECT_EQ(by_mpfr, by_boost) << "oracles disagree on " << orc::describe(x, from) << " -> " << to.name << " "
                                 << to_string(mode);
    return by_mpfr;
}

// Compares a conversion result with the oracle's: NaN only needs to be a NaN of the same sign.
void expect_same_value(std::uint64_t got, std::uint64_t expected, const format_info& to, const std::string& what) {
    if (orc::is_nan_bits(to, expected)) {
        EXPECT_TRUE(orc::is_nan_bits(to, got)) << what << ": got " << orc::describe(got, to) << ", expected NaN";
        return;
    }
    EXPECT_EQ(got, expected) << what << ": got " << orc::describe(got, to) << ", expected "
                             << orc::describe(expected, to);
}
// The same, with the description built only on a mismatch (the exhaustive loops compare millions of values).
template <class Describe>
    requires std::is_invocable_r_v<std::string, Describe>
void expect_same_value(std::uint64_t got, std::uint64_t expected, const format_info& to, const Describe& what) {
    const bool same = orc::is_nan_bits(to, expected) ? orc::is_nan_bits(to, got) : got == expected;
    if (!same) expect_same_value(got, expected, to, what());
}

// ---- parameters ---------------------------------------------------------------------------------------------------

TEST(FormatParameters, MatchIeee754Table3_5) {
    // IEEE 754-2019 Table 3.5 (binary64, binary32, binary16) and the bfloat16 definition (binary32's exponent, 8 bits).
    struct row { const format_info* f; dtype id; const char* name; int p, emin, emax, w, k; };
    const row rows[] = {{&binary64_info, dtype::float64, "float64", 53, -1022, 1023, 11, 64},
                        {&binary32_info, dtype::float32, "float32", 24, -126, 127, 8, 32},
                        {&binary16_info, dtype::float16, "float16", 11, -14, 15, 5, 16},
                        {&bfloat16_info, dtype::bfloat16, "bfloat16", 8, -126, 127, 8, 16}};
    for (const row& r : rows) {
        SCOPED_TRACE(r.name);
        EXPECT_EQ(r.f->id, r.id);
        EXPECT_EQ(r.f->name, r.name);
        EXPECT_EQ(r.f->precision, r.p);
        EXPECT_EQ(r.f->emin, r.emin);
        EXPECT_EQ(r.f->emax, r.emax);
        EXPECT_EQ(r.f->exponent_bits, r.w);
        EXPECT_EQ(r.f->storage_bits, r.k);
        // Relations of §3.3/§3.4: k = 1 + w + (p - 1), emax = 2^(w-1) - 1 = bias, emin = 1 - emax.
        EXPECT_EQ(r.f->storage_bits, 1 + r.f->exponent_bits + r.f->precision - 1);
        EXPECT_EQ(r.f->emax, (1 << (r.f->exponent_bits - 1)) - 1);
        EXPECT_EQ(r.f->emin, 1 - r.f->emax);
        EXPECT_EQ(r.f->subnormal_lsb_exponent(), r.emin - r.p + 1);
        EXPECT_EQ(r.f->u_exponent(), -r.p);
        EXPECT_EQ(r.f->special_exponent_field(), (1u << r.w) - 1);
        EXPECT_EQ(&info(r.id), r.f);
    }
    EXPECT_EQ(binary64_info.subnormal_lsb_exponent(), -1074);
    EXPECT_EQ(binary32_info.subnormal_lsb_exponent(), -149);
    EXPECT_EQ(binary16_info.subnormal_lsb_exponent(), -24);
    EXPECT_EQ(bfloat16_info.subnormal_lsb_exponent(), -133);
    // Host types agree with the format parameters.
    EXPECT_EQ(std::numeric_limits<double>::digits, binary64_info.precision);
    EXPECT_EQ(std::numeric_limits<float>::digits, binary32_info.precision);
    EXPECT_EQ(std::numeric_limits<double>::max_exponent - 1, binary64_info.emax);
    EXPECT_EQ(std::numeric_limits<float>::min_exponent - 1, binary32_info.emin);
    EXPECT_EQ(&format_traits<float16>::info, &binary16_info);
    EXPECT_EQ(&format_traits<bfloat16>::info, &bfloat16_info);
    static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2);
}

TEST(FormatParameters, ParseDtypeSpellingsAndErrors) {
    EXPECT_EQ(parse_dtype("float64"), dtype::float64);
    EXPECT_EQ(parse_dtype("double"), dtype::float64);
    EXPECT_EQ(parse_dtype("f64"), dtype::float64);
    EXPECT_EQ(parse_dtype("float32"), dtype::float32);
    EXPECT_EQ(parse_dtype("float"), dtype::float32);
    EXPECT_EQ(parse_dtype("f32"), dtype::float32);
    EXPECT_EQ(parse_dtype("float16"), dtype::float16);
    EXPECT_EQ(parse_dtype("half"), dtype::float16);
    EXPECT_EQ(parse_dtype("f16"), dtype::float16);
    EXPECT_EQ(parse_dtype("bfloat16"), dtype::bfloat16);
    EXPECT_EQ(parse_dtype("bf16"), dtype::bfloat16);
    try {
        parse_dtype("float128");
        ADD_FAILURE() << "parse_dtype accepted float128";
    } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), testing::HasSubstr("float128"));
        EXPECT_THAT(e.what(), testing::HasSubstr("float64, float32, float16 or bfloat16"));
    }
    EXPECT_EQ(to_string(rounding::to_nearest_even), "to_nearest_even");
    EXPECT_EQ(to_string(rounding::toward_zero), "toward_zero");
    EXPECT_EQ(to_string(rounding::upward), "upward");
    EXPECT_EQ(to_string(rounding::downward), "downward");
}

// ---- decode -------------------------------------------------------------------------------------------------------

// The library's decode against the oracle's own decode and, for finite values, against MPFR's value of the bits.
void expect_decode_matches(const format_info& f, std::uint64_t bits) {
    const decoded d = decode_bits(f, bits);
    const orc::parts o = orc::decode(f, bits);
    SCOPED_TRACE(orc::describe(bits, f));
    ASSERT_EQ(d.is_nan, o.nan);
    ASSERT_EQ(d.is_inf, o.inf);
    ASSERT_EQ(d.negative, o.negative);
    if (o.nan || o.inf) return;
    ASSERT_EQ(d.significand, o.significand);
    ASSERT_LT(d.significand, std::uint64_t{1} << f.precision);
    if (d.significand != 0) {
        ASSERT_EQ(d.exponent, o.exponent);
        // value = ±significand·2^exponent, checked with MPFR (exact at precision p)
        orc::mpfr_number v(f.precision);
        mpfr_set_ui_2exp(v.get(), d.significand, d.exponent, MPFR_RNDN);
        if (d.negative) mpfr_neg(v.get(), v.get(), MPFR_RNDN);
        const orc::mpfr_number exact = orc::mpfr_value(bits, f);  // named: MPFR's macros may not see temporaries
        ASSERT_EQ(mpfr_cmp(v.get(), exact.get()), 0);
    }
}

TEST(Decode, EdgeEncodingsOfEveryFormat) {
    for (const format_info* f : all_formats) {
        SCOPED_TRACE(f->name);
        const int frac_bits = f->precision - 1;
        const std::uint64_t sign = std::uint64_t{1} << (f->storage_bits - 1);
        const std::uint64_t field_one = std::uint64_t{1} << frac_bits;
        const std::uint64_t frac_all = field_one - 1;
        const std::uint64_t inf = std::uint64_t{f->special_exponent_field()} << frac_bits;
        const std::uint64_t one = std::uint64_t(f->emax) << frac_bits;  // 1.0: biased exponent = bias
        // encodings and the exact value each stands for: (negative, significand, exponent)
        struct edge { std::uint64_t bits; bool negative; std::uint64_t m; int e; };
        const edge edges[] = {
            {0, false, 0, 0},
            {sign, true, 0, 0},
            {1, false, 1, f->subnormal_lsb_exponent()},                      // smallest subnormal
            {frac_all, false, frac_all, f->subnormal_lsb_exponent()},        // largest subnormal
            {field_one, false, field_one, f->subnormal_lsb_exponent()},      // smallest normal 2^emin
            {one, false, field_one, -frac_bits},                             // 1.0
            {one | 1, false, field_one | 1, -frac_bits},                     // 1 + 2^(1-p)
            {inf - 1, false, field_one | frac_all, f->emax - frac_bits},     // largest finite
            {sign | (inf - 1), true, field_one | frac_all, f->emax - frac_bits},
        };
        for (const edge& e : edges) {
            expect_decode_matches(*f, e.bits);
            const decoded d = decode_bits(*f, e.bits);
            EXPECT_EQ(d.negative, e.negative) << orc::describe(e.bits, *f);
            EXPECT_EQ(d.significand, e.m) << orc::describe(e.bits, *f);
            if (e.m != 0) EXPECT_EQ(d.exponent, e.e) << orc::describe(e.bits, *f);
            EXPECT_FALSE(d.is_nan || d.is_inf);
        }
        for (std::uint64_t special : {inf, sign | inf, inf | 1, inf | (field_one >> 1), sign | inf | frac_all}) {
            expect_decode_matches(*f, special);
            const decoded d = decode_bits(*f, special);
            EXPECT_EQ(d.is_inf, special == inf || special == (sign | inf)) << orc::describe(special, *f);
            EXPECT_EQ(d.is_nan, !d.is_inf) << orc::describe(special, *f);
        }
    }
}

TEST(Decode, EverySixteenBitPatternAndRandomWidePatterns) {
    for (const format_info* f : {&binary16_info, &bfloat16_info})
        for (std::uint64_t b = 0; b < 65536; ++b) expect_decode_matches(*f, b);
    std::mt19937_64 rng(20240601);
    SCOPED_TRACE("seed 20240601");
    for (int i = 0; i < 100000; ++i) {
        const std::uint64_t b64 = rng();
        expect_decode_matches(binary64_info, b64);
        const auto b32 = static_cast<std::uint32_t>(rng());
        expect_decode_matches(binary32_info, b32);
        // The host's own value of the bits, read exactly by MPFR, is the same number.
        const double x = std::bit_cast<double>(b64);
        const float y = std::bit_cast<float>(b32);
        if (std::isfinite(x)) {
            orc::mpfr_number v(53);
            mpfr_set_d(v.get(), x, MPFR_RNDN);
            const orc::mpfr_number exact = orc::mpfr_value(b64, binary64_info);
            ASSERT_EQ(mpfr_cmp(v.get(), exact.get()), 0) << orc::describe(b64, binary64_info);
        }
        if (std::isfinite(y)) {
            orc::mpfr_number v(24);
            mpfr_set_flt(v.get(), y, MPFR_RNDN);
            const orc::mpfr_number exact = orc::mpfr_value(b32, binary32_info);
            ASSERT_EQ(mpfr_cmp(v.get(), exact.get()), 0) << orc::describe(b32, binary32_info);
        }
    }
}

// ---- 16-bit formats <-> float, every pattern ----------------------------------------------------------------------

template <class H>
void check_to_float_every_pattern() {
    const format_info& f = format_traits<H>::info;
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const H h = H::from_bits(static_cast<std::uint16_t>(b));
        const auto got = std::bit_cast<std::uint32_t>(static_cast<float>(h));
        const std::uint64_t expected = oracle_convert(b, f, binary32_info, rounding::to_nearest_even);
        const std::string what = "float(" + orc::describe(b, f) + ")";
        expect_same_value(got, expected, binary32_info, what);
        if (orc::is_nan_bits(f, b)) EXPECT_EQ(got >> 31, b >> 15) << what << ": NaN keeps its sign";
        // Every 16-bit value is a float: converting back gives the same bits (NaN: a NaN of the same sign).
        const H back(static_cast<float>(h));
        if (orc::is_nan_bits(f, b)) {
            EXPECT_TRUE(orc::is_nan_bits(f, back.bits)) << what;
            EXPECT_EQ(back.bits >> 15, b >> 15) << what;
        } else {
            EXPECT_EQ(back.bits, b) << what << " does not round-trip";
        }
    }
}

TEST(Float16Conversions, ToFloatIsExactForEveryPattern) { check_to_float_every_pattern<float16>(); }
TEST(Bfloat16Conversions, ToFloatIsExactForEveryPattern) { check_to_float_every_pattern<bfloat16>(); }

// float -> H for the floats around every pattern h: h itself, its neighbours in float, the midpoint between h and
// the next pattern up (a tie, exact in float) and the floats just either side of that midpoint.
template <class H>
void check_from_float_around_every_pattern() {
    const format_info& f = format_traits<H>::info;
    for (std::uint32_t b = 0; b < 65536; ++b) {
        if (orc::decode(f, b).nan) continue;
        const float v = static_cast<float>(H::from_bits(static_cast<std::uint16_t>(b)));
        std::vector<float> probes = {v, std::nextafter(v, 0.0f), std::nextafter(v, v < 0 ? -INFINITY : INFINITY)};
        if (std::isfinite(v)) {
            // the next pattern away from zero (max -> the overflow threshold's neighbourhood)
            const orc::parts p = orc::decode(f, b);
            orc::mpfr_number mid(64);
            orc::mpfr_number step(64);
            mpfr_set_ui_2exp(step.get(), 1, p.exponent - 1, MPFR_RNDN);  // half an ulp of h
            const orc::mpfr_number value = orc::mpfr_value(b, f);  // named: mpfr_set is a macro
            mpfr_set(mid.get(), value.get(), MPFR_RNDN);
            if (p.negative) mpfr_sub(mid.get(), mid.get(), step.get(), MPFR_RNDN);
            else mpfr_add(mid.get(), mid.get(), step.get(), MPFR_RNDN);
            const float m = mpfr_get_flt(mid.get(), MPFR_RNDN);  // exact: p + 1 <= 24 bits
            orc::mpfr_number check(64);
            mpfr_set_flt(check.get(), m, MPFR_RNDN);
            ASSERT_EQ(mpfr_cmp(check.get(), mid.get()), 0) << "midpoint not exact in float";
            probes.insert(probes.end(), {m, std::nextafter(m, 0.0f), std::nextafter(m, m < 0 ? -INFINITY : INFINITY)});
        }
        for (const float x : probes) {
            const auto xb = std::bit_cast<std::uint32_t>(x);
            const std::uint64_t expected = oracle_convert(xb, binary32_info, f, rounding::to_nearest_even);
            expect_same_value(H(x).bits, expected, f, std::string(f.name) + "(" + orc::describe(xb, binary32_info) + ")");
        }
    }
}

TEST(Float16Conversions, FromFloatAroundEveryPattern) { check_from_float_around_every_pattern<float16>(); }
TEST(Bfloat16Conversions, FromFloatAroundEveryPattern) { check_from_float_around_every_pattern<bfloat16>(); }

template <class H>
void check_from_random_floats(std::uint64_t seed) {
    const format_info& f = format_traits<H>::info;
    std::mt19937_64 rng(seed);
    SCOPED_TRACE("seed " + std::to_string(seed));
    for (int i = 0; i < 200000; ++i) {
        // Half uniformly random encodings, half within the 16-bit format's range (where rounding is interesting).
        std::uint32_t xb = static_cast<std::uint32_t>(rng());
        if (i % 2 == 0 && f.id == dtype::float16) {
            const std::uint32_t field = 127 - 26 + static_cast<std::uint32_t>(rng() % 44);  // 2^-26 .. 2^17
            xb = (xb & 0x807F'FFFFu) | (field << 23);
        }
        const std::uint64_t expected = oracle_convert(xb, binary32_info, f, rounding::to_nearest_even);
        expect_same_value(H(std::bit_cast<float>(xb)).bits, expected, f,
                          std::string(f.name) + "(" + orc::describe(xb, binary32_info) + ")");
        if (testing::Test::HasFailure()) return;
    }
}

TEST(Float16Conversions, FromRandomFloats) { check_from_random_floats<float16>(1601); }
TEST(Bfloat16Conversions, FromRandomFloats) { check_from_random_floats<bfloat16>(1602); }

TEST(Float16Conversions, HandCheckedCases) {
    // Verified by hand from the binary16 encoding: max 65504 = 0x7bff, overflow threshold 65520 (a tie with 2^16).
    EXPECT_EQ(float16(65504.0f).bits, 0x7bff);
    EXPECT_EQ(float16(65519.0f).bits, 0x7bff);
    EXPECT_EQ(float16(65520.0f).bits, 0x7c00);
    EXPECT_EQ(float16(-65520.0f).bits, 0xfc00);
    EXPECT_EQ(float16(1e10f).bits, 0x7c00);
    EXPECT_EQ(float16(1.0f).bits, 0x3c00);
    EXPECT_EQ(float16(1.0f + 0x1p-11f).bits, 0x3c00);              // tie: 1 is even
    EXPECT_EQ(float16(1.0f + 3 * 0x1p-11f).bits, 0x3c02);          // tie: 1 + 2^-9 is even
    EXPECT_EQ(float16(0x1p-24f).bits, 0x0001);                     // smallest subnormal
    EXPECT_EQ(float16(0x1p-25f).bits, 0x0000);                     // tie with 0: 0 is even
    EXPECT_EQ(float16(std::nextafter(0x1p-25f, 1.0f)).bits, 0x0001);
    EXPECT_EQ(float16(-0x1p-26f).bits, 0x8000);                    // underflow keeps the sign
    EXPECT_EQ(float16(std::numeric_limits<float>::infinity()).bits, 0x7c00);
    EXPECT_EQ(float16(-std::numeric_limits<float>::infinity()).bits, 0xfc00);
    EXPECT_TRUE(orc::is_nan_bits(binary16_info, float16(std::numeric_limits<float>::quiet_NaN()).bits));
    EXPECT_EQ(static_cast<float>(float16::from_bits(0x7bff)), 65504.0f);
    EXPECT_EQ(static_cast<float>(float16::from_bits(0x0001)), 0x1p-24f);
    EXPECT_EQ(static_cast<float>(float16::from_bits(0x3555)), 0x1.554p-2f);
    // bfloat16: max 0x7f7f = (2 - 2^-7)·2^127; 1 + 2^-8 is a tie (-> 1), 1 + 3·2^-8 -> 1 + 2^-6.
    EXPECT_EQ(bfloat16(1.0f + 0x1p-8f).bits, 0x3f80);
    EXPECT_EQ(bfloat16(1.0f + 3 * 0x1p-8f).bits, 0x3f82);
    EXPECT_EQ(bfloat16(std::numeric_limits<float>::max()).bits, 0x7f80);  // above (2 - 2^-8)·2^127: Inf
    EXPECT_EQ(bfloat16(0x1.fep127f).bits, 0x7f7f);
    EXPECT_EQ(static_cast<float>(bfloat16::from_bits(0x0001)), 0x1p-133f);
}

// ---- to_double_exact and round_double_to -------------------------------------------------------------------------

TEST(DoubleConversions, ToDoubleExactForEverySixteenBitPatternAndRandomFloats) {
    for (const format_info* f : {&binary16_info, &bfloat16_info}) {
        for (std::uint64_t b = 0; b < 65536; ++b) {
            const auto got = std::bit_cast<std::uint64_t>(to_double_exact(*f, b));
            expect_same_value(got, oracle_convert(b, *f, binary64_info, rounding::to_nearest_even), binary64_info,
                              "to_double_exact(" + orc::describe(b, *f) + ")");
        }
    }
    std::mt19937_64 rng(1603);
    SCOPED_TRACE("seed 1603");
    for (int i = 0; i < 100000; ++i) {
        const auto b = static_cast<std::uint32_t>(rng());
        const auto got = std::bit_cast<std::uint64_t>(to_double_exact(binary32_info, b));
        expect_same_value(got, oracle_convert(b, binary32_info, binary64_info, rounding::to_nearest_even),
                          binary64_info, "to_double_exact(" + orc::describe(b, binary32_info) + ")");
        const auto d = rng();
        expect_same_value(std::bit_cast<std::uint64_t>(to_double_exact(binary64_info, d)),
                          orc::decode(binary64_info, d).nan ? orc::nan_bits(binary64_info) : d, binary64_info,
                          "to_double_exact(" + orc::describe(d, binary64_info) + ")");
    }
}

// round_double_to in every mode: around every 16-bit pattern (the value, the midpoint to the next, and doubles a
// hair either side of both), and random doubles for all four target formats.
TEST(DoubleConversions, RoundDoubleToEveryFormatAndMode) {
    for (const format_info* f : {&binary16_info, &bfloat16_info}) {
        for (std::uint64_t b = 0; b < 65536; ++b) {
            const orc::parts p = orc::decode(*f, b);
            if (p.nan) continue;
            const double v = to_double_exact(*f, b);
            std::vector<double> probes = {v, std::nextafter(v, 0.0), std::nextafter(v, v < 0 ? -INFINITY : INFINITY)};
            if (std::isfinite(v)) {
                const double half = std::ldexp(1.0, p.exponent - 1);
                const double mid = p.negative ? v - half : v + half;  // exact in binary64
                probes.insert(probes.end(), {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 2 * mid)});
            }
            for (const double x : probes) {
                const auto xb = std::bit_cast<std::uint64_t>(x);
                for (rounding mode : all_modes)
                    expect_same_value(round_double_to(*f, x, mode), oracle_convert(xb, binary64_info, *f, mode), *f,
                                      [&] {
                                          return "round_double_to(" + std::string(f->name) + ", " +
                                                 orc::describe(xb, binary64_info) + ", " +
                                                 std::string(to_string(mode)) + ")";
                                      });
            }
            if (testing::Test::HasFailure()) return;
        }
    }
    std::mt19937_64 rng(1604);
    SCOPED_TRACE("seed 1604");
    for (int i = 0; i < 50000; ++i) {
        std::uint64_t xb = rng();
        if (i % 2 == 0) {  // exponents near the narrow formats' ranges
            const std::uint64_t field = 1023 - 150 + rng() % 300;
            xb = (xb & 0x800F'FFFF'FFFF'FFFFull) | (field << 52);
        }
        const double x = std::bit_cast<double>(xb);
        for (const format_info* f : all_formats)
            for (rounding mode : all_modes)
                expect_same_value(round_double_to(*f, x, mode), oracle_convert(xb, binary64_info, *f, mode), *f, [&] {
                    return "round_double_to(" + std::string(f->name) + ", " + orc::describe(xb, binary64_info) + ", " +
                           std::string(to_string(mode)) + ")";
                });
        if (testing::Test::HasFailure()) return;
    }
}

TEST(DoubleConversions, OverflowPerMode) {
    // IEEE 754-2019 §7.4: RN -> Inf; RZ -> max; RU -> +Inf / -max; RD -> +max / -Inf.
    for (const format_info* f : {&binary32_info, &binary16_info, &bfloat16_info}) {
        SCOPED_TRACE(f->name);
        const double big = 1e300;
        EXPECT_EQ(round_double_to(*f, big, rounding::to_nearest_even), orc::inf_bits(*f, false));
        EXPECT_EQ(round_double_to(*f, big, rounding::toward_zero), orc::max_bits(*f, false));
        EXPECT_EQ(round_double_to(*f, big, rounding::upward), orc::inf_bits(*f, false));
        EXPECT_EQ(round_double_to(*f, big, rounding::downward), orc::max_bits(*f, false));
        EXPECT_EQ(round_double_to(*f, -big, rounding::to_nearest_even), orc::inf_bits(*f, true));
        EXPECT_EQ(round_double_to(*f, -big, rounding::toward_zero), orc::max_bits(*f, true));
        EXPECT_EQ(round_double_to(*f, -big, rounding::upward), orc::max_bits(*f, true));
        EXPECT_EQ(round_double_to(*f, -big, rounding::downward), orc::inf_bits(*f, true));
    }
}

// Boost's rounding of rationals that are not dyadic (its division path) against MPFR's mpfr_set_q, in every format
// and mode, over magnitudes from below the smallest subnormal to beyond the largest finite value.
TEST(Oracles, RoundNonDyadicRationalsAlike) {
    std::mt19937_64 rng(1606);
    SCOPED_TRACE("seed 1606");
    for (int i = 0; i < 20000; ++i) {
        const std::uint64_t num = rng() >> (rng() % 64);
        const std::uint64_t den = (rng() >> (rng() % 64)) | 1;  // odd: not dyadic unless 1
        const int shift = static_cast<int>(rng() % 2400) - 1200;
        orc::boost_integer bn = num;
        orc::boost_integer bd = den;
        mpz_class gn(static_cast<unsigned long>(num)), gd(static_cast<unsigned long>(den));
        if (shift >= 0) {
            bn <<= shift;
            gn <<= shift;
        } else {
            bd <<= -shift;
            gd <<= -shift;
        }
        const bool negative = rng() & 1;
        const orc::boost_rational b(negative ? orc::boost_integer(-bn) : bn, bd);
        mpq_class g(negative ? mpz_class(-gn) : gn, gd);
        g.canonicalize();
        for (const format_info* f : all_formats)
            for (rounding mode : all_modes)
                ASSERT_EQ(orc::boost_round_bits(b, *f, mode), orc::mpfr_round_rational_bits(g, *f, mode))
                    << g.get_str() << " -> " << f->name << " " << to_string(mode);
    }
}

// The oracles themselves: the MPFR and Boost roundings must disagree with a planted wrong answer, and they agree with
// the host's own correctly rounded double -> float conversion in the default environment.
TEST(Oracles, AgreeWithTheHostAndCatchAPlantedError) {
    std::mt19937_64 rng(1605);
    SCOPED_TRACE("seed 1605");
    for (int i = 0; i < 20000; ++i) {
        const std::uint64_t xb = rng();
        const double x = std::bit_cast<double>(xb);
        if (std::isnan(x)) continue;
        const auto host = std::bit_cast<std::uint32_t>(static_cast<float>(x));
        ASSERT_EQ(oracle_convert(xb, binary64_info, binary32_info, rounding::to_nearest_even), host)
            << orc::describe(xb, binary64_info);
    }
    // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: RN gives 1, never the odd neighbour.
    const double tie = 1.0 + 0x1p-24;
    const std::uint64_t rn = oracle_convert(std::bit_cast<std::uint64_t>(tie), binary64_info, binary32_info,
                                            rounding::to_nearest_even);
    EXPECT_EQ(rn, std::bit_cast<std::uint32_t>(1.0f));
    EXPECT_NE(rn, std::bit_cast<std::uint32_t>(1.0f + 0x1p-23f));
    EXPECT_EQ(oracle_convert(std::bit_cast<std::uint64_t>(tie), binary64_info, binary32_info, rounding::upward),
              std::bit_cast<std::uint32_t>(1.0f + 0x1p-23f));
}

}  // namespace
