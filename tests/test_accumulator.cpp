// The superaccumulator against two independent exact oracles, bit for bit: MPFR (mpfr_sum, MPFR rounding) and
// Boost.Multiprecision (cpp_int sum, integer rounding), plus GMP rationals for the exact value and decimal string.
//
// Every input goes through both of the library's paths: add(T) term by term and add(span), which switches to blocked
// integer SIMD code for spans >= 64 (blocks of 2048, a window below each block's maximum, flagged terms below it).
// Checked per input: round() in all four modes to the term format and to the other three formats, to_decimal(),
// to_dyadic(), sign(), and the special-value state. Then the acceptance classes of issue 2 (cancellation to exact 0,
// huge dynamic range, stagnation, ties to even, subnormals only, overflow of intermediates), each also negated and
// scaled by powers of two; the special-value table; merge, negate, compare, add_product, add_abs.
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>  // ScopedFakeTestPartResultReporter: the checks' own failures are tested
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "accumulator_checks.h"
#include "exactref/accumulator.h"
#include "exactref/format.h"
#include "oracle.h"
#include "test_scale.h"

namespace {

using namespace exactref_test;

// Runs check.template operator()<T>(seed) for the four formats, with seeds first_seed .. first_seed + 3.
template <class Check>
void in_every_format(std::uint64_t first_seed, Check check) {
    check.template operator()<double>(first_seed);
    check.template operator()<float>(first_seed + 1);
    check.template operator()<float16>(first_seed + 2);
    check.template operator()<bfloat16>(first_seed + 3);
}

// The frame of the property tests on random inputs: `count` inputs of format T (random_input, every term mix), as
// bits and values, each handed to check(i, bits, xs, rng) under a trace of the seed and input i; the first failure
// (check returns false) ends the loop.
template <class T, class Check>
void for_random_inputs(std::uint64_t seed, int count, Check check) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < count; ++i) {
        orc::term_mix mix;
        std::vector<std::uint64_t> bits = random_input<T>(rng, mix);
        const std::vector<T> xs = orc::from_bits<T>(bits);
        SCOPED_TRACE("seed " + std::to_string(seed) + ", input " + std::to_string(i) + ", " + orc::to_string(mix));
        if (!check(i, bits, xs, rng)) return;
    }
}

// acc against the three oracles' sums of `bits` (all four target formats when every_format).
inline bool matches_sum_oracles(const superaccumulator& acc, const std::vector<std::uint64_t>& bits,
                                const format_info& f, const char* what, bool every_format) {
    return check_against_oracles(acc, orc::mpfr_sum(bits, f), orc::boost_sum(bits, f), orc::gmp_sum(bits, f), f, what,
                                 every_format);
}

// ---- random inputs, >= 10^5 per format ----------------------------------------------------------------------------

template <class T>
void random_inputs_match_oracles(std::uint64_t seed, int count) {
    count = exactref_test::scaled(count);
    std::mt19937_64 rng(seed);
    for (int i = 0; i < count; ++i) {
        orc::term_mix mix;
        const std::vector<std::uint64_t> bits = random_input<T>(rng, mix);
        // Every input is rounded to its own format in all modes; every 8th to all four formats.
        const std::string label = "seed " + std::to_string(seed) + ", input " + std::to_string(i) + ", " +
                                  orc::to_string(mix);
        if (!check_bits<T>(bits, label, i % 8 == 0)) return;
    }
}

TEST(AccumulatorRandom, Float64MatchesBothOracles) { random_inputs_match_oracles<double>(4001, 100000); }
TEST(AccumulatorRandom, Float32MatchesBothOracles) { random_inputs_match_oracles<float>(4002, 100000); }
TEST(AccumulatorRandom, Float16MatchesBothOracles) { random_inputs_match_oracles<float16>(4003, 100000); }
TEST(AccumulatorRandom, Bfloat16MatchesBothOracles) { random_inputs_match_oracles<bfloat16>(4004, 100000); }

// ---- the acceptance classes of issue 2 ----------------------------------------------------------------------------

TEST(AccumulatorClasses, CancellationToExactZero) {
    // x_i = i - 2,048,000 + 0.5 for i < 4,096,000 in float32: the pairs i and 4,095,999 - i cancel, exact sum 0.
    std::vector<std::uint64_t> bits;
    bits.reserve(4096000);
    for (int i = 0; i < 4096000; ++i) bits.push_back(std::bit_cast<std::uint32_t>(static_cast<float>(i - 2048000) + 0.5f));
    EXPECT_EQ(library_round<float>(bits, binary32_info, rounding::to_nearest_even), orc::zero_bits(binary32_info, false));
    // IEEE 754-2019 §6.3: an exact zero sum of non-zero terms is -0 under RD only.
    EXPECT_EQ(library_round<float>(bits, binary32_info, rounding::downward), orc::zero_bits(binary32_info, true));
    check_variants<float>(bits, "cancellation float32", {-100}, false);  // more scales: test_long_accumulator
    // Smaller cancelling inputs in every format (pairs x, -x with a shuffled order).
    std::mt19937_64 rng(4101);
    for (const format_info* f : all_formats) {
        std::vector<std::uint64_t> t = orc::random_terms(*f, 3000, orc::term_mix::clustered, rng);
        const std::size_t n = t.size();
        for (std::size_t i = 0; i < n; ++i) t.push_back(t[i] ^ orc::zero_bits(*f, true));
        std::shuffle(t.begin(), t.end(), rng);
        const std::string label = std::string("cancelling pairs ") + std::string(f->name) + ", seed 4101";
        switch (f->id) {
            case dtype::float64: check_variants<double>(t, label, {}); break;
            case dtype::float32: check_variants<float>(t, label, {}); break;
            case dtype::float16: check_variants<float16>(t, label, {}); break;
            case dtype::bfloat16: check_variants<bfloat16>(t, label, {}); break;
        }
    }
}

// One big term and many tiny ones of both signs whose total stays below a quarter ulp of the big one: RN gives the
// big term back (verified by hand: |Σ tiny| < ulp/4), the directed modes see the tiny total's sign.
template <class T>
void huge_dynamic_range(double big, int tiny_lo_field, int tiny_hi_field, std::uint64_t seed,
                        std::initializer_list<int> scales) {
    const format_info& f = format_traits<T>::info;
    std::mt19937_64 rng(seed);
    const int frac_bits = f.precision - 1;
    std::vector<std::uint64_t> bits = {bits_from<T>(big)};
    for (int i = 0; i < 20000; ++i) {
        const std::uint64_t field = tiny_lo_field + rng() % (tiny_hi_field - tiny_lo_field + 1);
        bits.push_back(orc::zero_bits(f, rng() & 1) | (field << frac_bits) | (rng() & ((std::uint64_t{1} << frac_bits) - 1)));
    }
    std::shuffle(bits.begin(), bits.end(), rng);
    EXPECT_EQ(library_round<T>(bits, f, rounding::to_nearest_even), bits_from<T>(big)) << f.name << " big " << big;
    // Scaled up only: scaling down would push the tiny terms' low bits below the smallest subnormal.
    check_variants<T>(bits, std::string("huge dynamic range ") + std::string(f.name) + ", seed " + std::to_string(seed),
                      scales);
}

TEST(AccumulatorClasses, HugeDynamicRange) {
    // 20000 tiny terms, each below 2^(field_max + 1 - bias): Σ|tiny| < 2^14.3 · 2^(field_max + 1 - bias) stays
    // below a quarter ulp of the big term (by hand, per line).
    huge_dynamic_range<double>(1.0, 1, 1023 - 80, 4201, {2, 9});     // Σ < 2^-64.7; ulp(1)/4 = 2^-54
    huge_dynamic_range<double>(0x1p50, 0, 1023 - 30, 4202, {2, 9});  // Σ < 2^-14.7; ulp(2^50)/4 = 2^-4; subnormals
    huge_dynamic_range<float>(1.0, 0, 127 - 50, 4203, {2, 9});       // Σ < 2^-34.7; ulp(1)/4 = 2^-25
    huge_dynamic_range<float>(0x1p50, 1, 127 + 5, 4204, {2, 9});     // Σ < 2^20.3;  ulp(2^50)/4 = 2^25
    huge_dynamic_range<float16>(16384.0, 0, 1, 4205, {1});           // Σ < 2^1.3;   ulp(2^14)/4 = 2^2; 2^14 .. 2^-24
    huge_dynamic_range<bfloat16>(1.0, 0, 127 - 27, 4206, {2, 9});    // Σ < 2^-11.7; ulp(1)/4 = 2^-9
}

TEST(AccumulatorClasses, Stagnation) {
    // 2^25 float32 ones: exact 33554432, while the left fold stops at 2^24 = 16777216 (2^24 + 1 is a tie -> 2^24).
    const std::size_t n = std::size_t{1} << 25;
    std::vector<float> ones(n, 1.0f);
    float fold = 0.0f;
    for (float x : ones) fold += x;
    EXPECT_EQ(fold, 16777216.0f);
    superaccumulator acc;
    acc.add(std::span<const float>(ones));
    EXPECT_EQ(acc.round<float>(), 33554432.0f);
    EXPECT_EQ(acc.to_decimal(), "33554432");
    check_variants<float>(orc::to_bits(std::span<const float>(ones)), "2^25 float32 ones", {-125}, false);
    // bfloat16 ones: the left fold stops at 256 (256 + 1 is a tie between 256 and 258 -> 256); 4096 ones sum to 4096.
    const std::uint64_t one = bits_from<bfloat16>(1.0);
    std::vector<std::uint64_t> b(4096, one);
    std::uint64_t bfold = orc::zero_bits(bfloat16_info, false);
    for (std::uint64_t x : b) bfold = orc::add_rounded(bfold, x, bfloat16_info);
    EXPECT_EQ(bfold, bits_from<bfloat16>(256.0));
    EXPECT_EQ(library_round<bfloat16>(b, bfloat16_info, rounding::to_nearest_even), bits_from<bfloat16>(4096.0));
    check_variants<bfloat16>(b, "4096 bfloat16 ones", {-100, 100});
    // float16 ones: the left fold stops at 2048; 3000 ones sum to 3000 (exact in binary16).
    std::vector<std::uint64_t> h(3000, bits_from<float16>(1.0));
    std::uint64_t hfold = orc::zero_bits(binary16_info, false);
    for (std::uint64_t x : h) hfold = orc::add_rounded(hfold, x, binary16_info);
    EXPECT_EQ(hfold, bits_from<float16>(2048.0));
    EXPECT_EQ(library_round<float16>(h, binary16_info, rounding::to_nearest_even), bits_from<float16>(3000.0));
    check_variants<float16>(h, "3000 float16 ones", {-20, 3});
}

// x + half an ulp of x, the half given in 2^k equal pieces: RN goes to the even neighbour (by hand: 1 + 2^-p -> 1,
// 1 + 2^(1-p) + 2^-p -> 1 + 2^(2-p)).
template <class T>
void ties_to_even() {
    const format_info& f = format_traits<T>::info;
    const int p = f.precision;
    for (int pieces_log2 : {0, 1, 4, 9}) {
        for (bool odd : {false, true}) {
            const double x = odd ? 1.0 + std::ldexp(1.0, 1 - p) : 1.0;
            std::vector<std::uint64_t> bits = {bits_from<T>(x)};
            for (int k = 0; k < (1 << pieces_log2); ++k) bits.push_back(bits_from<T>(std::ldexp(1.0, -p - pieces_log2)));
            const double expected = odd ? 1.0 + std::ldexp(1.0, 2 - p) : 1.0;
            const std::string label = std::string("tie ") + std::string(f.name) + (odd ? " odd" : " even") +
                                      ", 2^" + std::to_string(pieces_log2) + " pieces";
            EXPECT_EQ(library_round<T>(bits, f, rounding::to_nearest_even), bits_from<T>(expected)) << label;
            check_variants<T>(bits, label, {-2, 7});  // 2^-2: float16's 2^-20 pieces stay exact subnormals
        }
    }
}

TEST(AccumulatorClasses, TiesToEven) {
    ties_to_even<double>();
    ties_to_even<float>();
    ties_to_even<float16>();
    ties_to_even<bfloat16>();
}

template <class T>
void subnormals_only(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    std::mt19937_64 rng(seed);
    // By hand: three smallest subnormals sum to 3 of them exactly.
    const std::vector<std::uint64_t> three(3, 1);
    EXPECT_EQ(library_round<T>(three, f, rounding::to_nearest_even), 3u) << f.name;
    check_variants<T>(three, std::string("3 smallest subnormals ") + std::string(f.name), {5});
    for (std::size_t n : {2u, 30u, 100u, 3000u}) {
        const std::vector<std::uint64_t> bits = orc::random_terms(f, n, orc::term_mix::subnormal, rng);
        check_variants<T>(bits, std::string("subnormals ") + std::string(f.name) + ", seed " + std::to_string(seed), {3});
    }
}

TEST(AccumulatorClasses, SubnormalsOnly) {
    in_every_format(4301, []<class T>(std::uint64_t seed) { subnormals_only<T>(seed); });
}

TEST(AccumulatorClasses, OverflowOfIntermediates) {
    // float64 [1e308, 1e308, -1e308] is exactly 1e308; likewise max + max - max = max in every format.
    const std::vector<std::uint64_t> d = {std::bit_cast<std::uint64_t>(1e308), std::bit_cast<std::uint64_t>(1e308),
                                          std::bit_cast<std::uint64_t>(-1e308)};
    EXPECT_EQ(library_round<double>(d, binary64_info, rounding::to_nearest_even), std::bit_cast<std::uint64_t>(1e308));
    check_variants<double>(d, "1e308 + 1e308 - 1e308", {-1000, -1});
    for (const format_info* f : all_formats) {
        const std::uint64_t max = orc::max_bits(*f, false);
        const std::vector<std::uint64_t> m = {max, max, max ^ orc::zero_bits(*f, true)};
        const std::string label = std::string("max + max - max ") + std::string(f->name);
        switch (f->id) {
            case dtype::float64:
                EXPECT_EQ(library_round<double>(m, *f, rounding::to_nearest_even), max);
                check_variants<double>(m, label, {-2000});
                break;
            case dtype::float32:
                EXPECT_EQ(library_round<float>(m, *f, rounding::to_nearest_even), max);
                check_variants<float>(m, label, {-200});
                break;
            case dtype::float16:
                EXPECT_EQ(library_round<float16>(m, *f, rounding::to_nearest_even), max);
                check_variants<float16>(m, label, {-20});
                break;
            case dtype::bfloat16:
                EXPECT_EQ(library_round<bfloat16>(m, *f, rounding::to_nearest_even), max);
                check_variants<bfloat16>(m, label, {-200});
                break;
        }
    }
}

// ---- special values (hand-checked table of issue 2) --------------------------------------------------------------

template <class T>
void special_table() {
    const format_info& f = format_traits<T>::info;
    const std::uint64_t inf = orc::inf_bits(f, false), ninf = orc::inf_bits(f, true);
    const std::uint64_t zero = orc::zero_bits(f, false), nzero = orc::zero_bits(f, true);
    const std::uint64_t four = bits_from<T>(4.0);
    struct row { std::vector<std::uint64_t> in; std::uint64_t rn; const char* what; };
    const row rows[] = {{{inf, zero}, inf, "[inf, 0] -> inf"},
                        {{ninf, ninf}, ninf, "[-inf, -inf] -> -inf"},
                        {{inf, four, ninf}, orc::nan_bits(f), "[inf, 4, -inf] -> nan"},
                        {{ninf, inf}, orc::nan_bits(f), "[-inf, inf] -> nan"},
                        {{nzero, nzero, nzero}, nzero, "[-0, -0, -0] -> -0"},
                        {{}, zero, "[] -> +0"}};
    for (const row& r : rows) {
        for (std::size_t pad : {0u, 100u}) {  // padded with copies of the row's own terms: the fast path
            std::vector<std::uint64_t> in = r.in;
            for (std::size_t k = 0; k < pad && !r.in.empty(); ++k) in.push_back(r.in[k % r.in.size()]);
            const std::string label = std::string(f.name) + " " + r.what + (pad ? " (padded: fast path)" : "");
            const std::vector<T> xs = orc::from_bits<T>(in);
            superaccumulator fast, slow;
            fast.add(std::span<const T>(xs));
            for (const T& x : xs) slow.add(x);
            EXPECT_TRUE(same_result(fast.round_bits(f), r.rn, f)) << label << " add(span)";
            EXPECT_TRUE(same_result(slow.round_bits(f), r.rn, f)) << label << " add(T)";
            // -0 and specials do not depend on the mode; the empty sum is +0.0 in every mode (accumulator.h).
            for (rounding mode : all_modes)
                if (r.rn != zero || r.in.empty())
                    EXPECT_TRUE(same_result(fast.round_bits(f, mode), r.rn, f)) << label << " " << to_string(mode);
            check_bits<T>(in, label);
        }
    }
}

TEST(AccumulatorSpecials, HandCheckedTableInEveryFormat) {
    special_table<double>();
    special_table<float>();
    special_table<float16>();
    special_table<bfloat16>();
}

TEST(AccumulatorSpecials, OverflowToInfOrMaxByMode) {
    // float64 [1e308, 1e308]: 2e308 > max: RN and RU -> +inf, RZ and RD -> max.
    const std::vector<std::uint64_t> d(2, std::bit_cast<std::uint64_t>(1e308));
    EXPECT_EQ(library_round<double>(d, binary64_info, rounding::to_nearest_even), orc::inf_bits(binary64_info, false));
    EXPECT_EQ(library_round<double>(d, binary64_info, rounding::toward_zero), orc::max_bits(binary64_info, false));
    EXPECT_EQ(library_round<double>(d, binary64_info, rounding::upward), orc::inf_bits(binary64_info, false));
    EXPECT_EQ(library_round<double>(d, binary64_info, rounding::downward), orc::max_bits(binary64_info, false));
    check_variants<double>(d, "[1e308, 1e308]", {});
    // float16: 65519 ones -> 65504 (below the threshold 65520), 65520 ones -> +inf (the threshold ties to Inf).
    const std::uint64_t one = bits_from<float16>(1.0);
    const std::vector<std::uint64_t> a(65519, one), b(65520, one);
    EXPECT_EQ(library_round<float16>(a, binary16_info, rounding::to_nearest_even), bits_from<float16>(65504.0));
    EXPECT_EQ(library_round<float16>(b, binary16_info, rounding::to_nearest_even), orc::inf_bits(binary16_info, false));
    EXPECT_EQ(library_round<float16>(b, binary16_info, rounding::toward_zero), bits_from<float16>(65504.0));
    check_variants<float16>(a, "65519 float16 ones", {-10});
    check_variants<float16>(b, "65520 float16 ones", {-10});
}

TEST(AccumulatorSpecials, TenTimesPointOne) {
    // 10 · 0x1.999999999999ap-4 = 1 + 2^-54 exactly = 1.000000000000000055511151231257827021181583404541015625
    // (checked with Python's fractions module); RN gives 1.0, the left fold 0.9999999999999999.
    const std::vector<std::uint64_t> bits(10, std::bit_cast<std::uint64_t>(0.1));
    const std::vector<double> xs = orc::from_bits<double>(bits);
    superaccumulator acc;
    acc.add(std::span<const double>(xs));
    EXPECT_EQ(acc.to_decimal(), "1.000000000000000055511151231257827021181583404541015625");
    EXPECT_EQ(acc.round<double>(), 1.0);
    double fold = 0;
    for (double x : xs) fold += x;
    EXPECT_EQ(fold, 0.9999999999999999);  // the left fold is not the exactly rounded sum
    check_variants<double>(bits, "[0.1]*10", {-5, 5});
}

// ---- merge, negate, compare, add_product, add_abs -----------------------------------------------------------------

template <class T>
void merge_matches(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    for_random_inputs<T>(seed, 3000, [&](int i, const auto& bits, const std::vector<T>& xs, std::mt19937_64& rng) {
        // Random cut points; each part by a random path; merged in a random order, sometimes as a tree.
        std::vector<std::size_t> cuts = {0, xs.size()};
        for (unsigned k = rng() % 6; k > 0; --k) cuts.push_back(xs.empty() ? 0 : rng() % (xs.size() + 1));
        std::sort(cuts.begin(), cuts.end());
        std::vector<superaccumulator> parts;
        for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
            superaccumulator a;
            const std::span<const T> piece(xs.data() + cuts[k], cuts[k + 1] - cuts[k]);
            if (rng() % 2) a.add(piece);
            else for (const T& x : piece) a.add(x);
            parts.push_back(a);
        }
        std::shuffle(parts.begin(), parts.end(), rng);
        while (parts.size() > 1) {
            const std::size_t a = rng() % parts.size();
            std::size_t b = rng() % parts.size();
            if (a == b) continue;
            parts[a].merge(parts[b]);
            parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(b));
        }
        return matches_sum_oracles(parts[0], bits, f, "merged parts", i % 8 == 0);
    });
}

TEST(AccumulatorOperations, MergeOfRandomSplitsEqualsTheWhole) {
    in_every_format(4401, []<class T>(std::uint64_t seed) { merge_matches<T>(seed); });
}

template <class T>
void negate_matches(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    for_random_inputs<T>(seed, 3000, [&](int, auto& bits, const std::vector<T>& xs, std::mt19937_64&) {
        superaccumulator acc;
        acc.add(std::span<const T>(xs));
        acc.negate();
        for (auto& b : bits) b ^= orc::zero_bits(f, true);
        return matches_sum_oracles(acc, bits, f, "negated", false);
    });
}

TEST(AccumulatorOperations, NegateEqualsTheSumOfNegatedTerms) {
    in_every_format(4501, []<class T>(std::uint64_t seed) { negate_matches<T>(seed); });
}

template <class T>
void compare_matches(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    for_random_inputs<T>(seed, 3000, [&](int, const auto& bits, const std::vector<T>& xs, std::mt19937_64& rng) {
        superaccumulator acc;
        acc.add(std::span<const T>(xs));
        const orc::gmp_exact g = orc::gmp_sum(bits, f);
        // Against the nearest values of the exact sum itself (equal when representable) and random values.
        std::vector<std::uint64_t> probes = orc::random_terms(f, 3, orc::term_mix::clustered, rng);
        const orc::boost_exact b = orc::boost_sum(bits, f);
        for (rounding mode : all_modes) probes.push_back(orc::boost_round_bits(b.scaled, b.exponent, f, mode));
        for (std::uint64_t v : probes) {
            if (orc::decode(f, v).nan || orc::decode(f, v).inf) continue;
            const mpq_class diff = g.value - orc::gmp_value(v, f);
            const int expected = diff > 0 ? 1 : (diff < 0 ? -1 : 0);
            EXPECT_EQ(acc.compare(value_of<T>(v)), expected)
                << "compare(" << orc::describe(v, f) << "), exact " << orc::gmp_decimal(g.value);
            if (acc.compare(value_of<T>(v)) != expected) return false;
        }
        return true;
    });
}

TEST(AccumulatorOperations, CompareIsTheSignOfTheExactDifference) {
    in_every_format(4601, []<class T>(std::uint64_t seed) { compare_matches<T>(seed); });
    // Planted: 0.1 + 0.2 is not 0.30000000000000004 (its RN) exactly: compare sees the difference.
    superaccumulator acc;
    acc.add(0.1);
    acc.add(0.2);
    EXPECT_EQ(acc.round<double>(), 0.30000000000000004);
    EXPECT_EQ(acc.compare(0.30000000000000004), -1);
    EXPECT_EQ(acc.compare(0.3), 1);
}

// Exact products: subnormal x subnormal (below every format's range), Inf x 0 = NaN, signed zero products.
template <class T>
void products_match(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 5000; ++i) {
        const std::size_t n = i % 50 == 0 ? 300 : rng() % 20;
        const orc::term_mix mix = orc::all_term_mixes[rng() % std::size(orc::all_term_mixes)];
        const std::vector<std::uint64_t> x = orc::random_terms(f, n, mix, rng);
        std::vector<std::uint64_t> y = orc::random_terms(f, n, rng() % 3 == 0 ? orc::term_mix::subnormal : mix, rng);
        superaccumulator acc;
        for (std::size_t k = 0; k < n; ++k) acc.add_product(value_of<T>(x[k]), value_of<T>(y[k]));
        SCOPED_TRACE("add_product " + std::string(f.name) + ", seed " + std::to_string(seed) + ", input " +
                     std::to_string(i) + ", " + orc::to_string(mix));
        if (!check_against_oracles(acc, orc::mpfr_dot(x, y, f), orc::boost_dot(x, y, f), orc::gmp_dot(x, y, f), f,
                                   "products", true))
            return;
    }
    // By hand: smallest subnormal squared is 2^(2·(emin-p+1)), far below the format; times 2^k pieces it still counts.
    superaccumulator tiny;
    const T s = value_of<T>(1);
    tiny.add_product(s, s);
    const dyadic d = tiny.to_dyadic();
    EXPECT_EQ(to_mpq(d), orc::gmp_value(1, f) * orc::gmp_value(1, f)) << f.name;
    EXPECT_EQ(tiny.round_bits(f, rounding::upward), 1u) << f.name;   // RU of a positive tiny value: the smallest subnormal
    EXPECT_EQ(tiny.round_bits(f, rounding::to_nearest_even), 0u) << f.name;
}

TEST(AccumulatorOperations, AddProductIsExact) {
    in_every_format(4701, []<class T>(std::uint64_t seed) { products_match<T>(seed); });
}

template <class T>
void abs_sum_matches(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    for_random_inputs<T>(seed, 3000, [&](int, auto& bits, const std::vector<T>& xs, std::mt19937_64&) {
        superaccumulator acc;
        acc.add_abs(std::span<const T>(xs));
        for (auto& b : bits) b &= ~orc::zero_bits(f, true);
        return matches_sum_oracles(acc, bits, f, "abs", false);
    });
}

TEST(AccumulatorOperations, AddAbsIsTheSumOfMagnitudes) {
    in_every_format(4801, []<class T>(std::uint64_t seed) { abs_sum_matches<T>(seed); });
}

// The checks above must be able to fail: a planted wrong accumulator (one term dropped, or the left fold's answer)
// is caught by check_against_oracles.
TEST(AccumulatorOracleChecks, CatchPlantedWrongAnswers) {
    const std::vector<std::uint64_t> bits(3000, bits_from<float16>(1.0));
    const format_info& f = binary16_info;
    const auto m = orc::mpfr_sum(bits, f);
    const auto b = orc::boost_sum(bits, f);
    const auto g = orc::gmp_sum(bits, f);
    superaccumulator dropped;
    for (std::size_t k = 1; k < bits.size(); ++k) dropped.add(value_of<float16>(bits[k]));
    superaccumulator folded;
    folded.add(value_of<float16>(bits_from<float16>(2048.0)));
    for (int k = 0; k < 2999; ++k) folded.add(value_of<float16>(orc::zero_bits(f, false)));
    for (const superaccumulator* wrong : {&dropped, &folded}) {
        ::testing::TestPartResultArray failures;
        {
            ::testing::ScopedFakeTestPartResultReporter reporter(
                ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
            EXPECT_FALSE(check_against_oracles(*wrong, m, b, g, f, "planted", true));
        }
        ASSERT_EQ(failures.size(), 1);
        EXPECT_THAT(failures.GetTestPartResult(0).message(), testing::HasSubstr("expected"));
    }
}

}  // namespace
