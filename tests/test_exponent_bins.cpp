// Step F5 of the superaccumulator's fast path (src/sum_kernels.cpp): blocks whose magnitudes span more than two
// windows go through per-exponent bins. These inputs make every block (or every other block) such a block, and check
// add(span), add_abs(span) and the fused add_sum_and_abs against MPFR, Boost.Multiprecision and GMP (check_input) and
// against the term-by-term path, bit for bit, in all four formats; tests/cmake/simd.cmake does not rerun this file,
// since Step F5 is scalar code that every version shares (its neighbours F1 and F3 are covered there).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "accumulator_checks.h"
#include "exactref/accumulator.h"
#include "exactref/format.h"
#include "oracle.h"

namespace {

using namespace exactref_test;

// A finite term of T with a uniformly random exponent field in [lo_field, hi_field] (0 = subnormal), a random
// significand and sign.
template <class T>
std::uint64_t random_term(std::mt19937_64& rng, int lo_field, int hi_field) {
    const format_info& f = format_traits<T>::info;
    const std::uint64_t field = static_cast<std::uint64_t>(lo_field) + rng() % static_cast<std::uint64_t>(hi_field - lo_field + 1);
    const std::uint64_t frac = rng() & ((std::uint64_t{1} << (f.precision - 1)) - 1);
    const std::uint64_t sign = rng() & 1;
    return (sign << (f.storage_bits - 1)) | (field << (f.precision - 1)) | frac;
}

template <class T>
int max_field() {
    return static_cast<int>(format_traits<T>::info.special_exponent_field()) - 1;
}

// The sum and abs sum of one pass against the separate passes and against term by term.
template <class T>
void expect_fused_matches(const std::vector<T>& xs, const std::string& label) {
    superaccumulator s, a, fused_s, fused_a, slow_a;
    s.add(std::span<const T>(xs));
    a.add_abs(std::span<const T>(xs));
    add_sum_and_abs(std::span<const T>(xs), fused_s, fused_a);
    const format_info& f = format_traits<T>::info;
    for (const T& x : xs) slow_a.add_bits(f, format_traits<T>::to_bits(x) & ~(std::uint64_t{1} << (f.storage_bits - 1)));
    EXPECT_TRUE(s.chunks() == fused_s.chunks()) << label << ": fused sum differs from add(span)";
    EXPECT_TRUE(a.chunks() == fused_a.chunks()) << label << ": fused abs sum differs from add_abs(span)";
    for (rounding mode : all_modes)
        EXPECT_EQ(a.round_bits(f, mode), slow_a.round_bits(f, mode)) << label << ": add_abs(span) vs term by term";
}

template <class T>
void wide_blocks(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int top = max_field<T>();
    const std::size_t sizes[] = {64, 2047, 2048, 2049, 6001, 20000};
    for (int trial = 0; trial < 24; ++trial) {
        const std::size_t n = sizes[static_cast<std::size_t>(trial) % std::size(sizes)];
        // Trial kinds: the whole range (subnormals to the largest), a middle range of ~100 binades, and wide blocks
        // interleaved with narrow ones (one window), and exact cancellation (every term and its negation).
        const int kind = trial / static_cast<int>(std::size(sizes));
        std::vector<std::uint64_t> bits;
        for (std::size_t i = 0; i < n; ++i) {
            const bool narrow_block = kind == 2 && (i / 2048) % 2 == 1;
            int lo = 0, hi = top;
            if (kind == 1) {
                lo = std::max(0, top / 2 - 50);
                hi = std::min(top, top / 2 + 50);
            }
            if (narrow_block) lo = hi = top / 2;
            bits.push_back(random_term<T>(rng, lo, hi));
        }
        if (kind == 3)
            for (std::size_t i = 0; i + 1 < n; i += 2)
                bits[i + 1] = bits[i] ^ (std::uint64_t{1} << (format_traits<T>::info.storage_bits - 1));
        const std::string label = std::string(format_traits<T>::info.name) + " kind " + std::to_string(kind) +
                                  ", n = " + std::to_string(n) + ", seed " + std::to_string(seed);
        const std::vector<T> xs = orc::from_bits<T>(bits);
        if (!check_input<T>(std::span<const T>(xs), label, trial % 4 == 0)) return;
        expect_fused_matches<T>(xs, label);
    }
}

// Zeros of both signs among wide blocks whose smallest non-zero term is far above the subnormals: a zero lands in
// the bin of field 0, which the block's range does not name (it must be cleared and must add nothing), and blocks of
// the largest significands at two exponents only, long enough that the copies are spilled many times.
template <class T>
void zeros_and_spills(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const format_info& f = format_traits<T>::info;
    const int top = max_field<T>();
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    for (const std::size_t n : {std::size_t{100}, std::size_t{2048}, std::size_t{3 * 2048 + 5}, std::size_t{40000}}) {
        std::vector<std::uint64_t> bits;
        for (std::size_t i = 0; i < n; ++i) {
            if (i % 5 == 0) bits.push_back(rng() & 1 ? sign : 0);  // +0.0 or -0.0
            else bits.push_back(random_term<T>(rng, top / 2 - 50, top / 2 + 50));
        }
        const std::string label = std::string(f.name) + " zeros among wide terms, n = " + std::to_string(n);
        std::vector<T> xs = orc::from_bits<T>(bits);
        check_input<T>(std::span<const T>(xs), label, false);
        expect_fused_matches<T>(xs, label);
        const std::uint64_t largest = (static_cast<std::uint64_t>(top / 2 + 50) << (f.precision - 1)) |
                                      ((std::uint64_t{1} << (f.precision - 1)) - 1);
        const std::uint64_t smaller = (static_cast<std::uint64_t>(top / 2 - 50) << (f.precision - 1)) |
                                      ((std::uint64_t{1} << (f.precision - 1)) - 1);
        for (std::size_t i = 0; i < n; ++i) bits[i] = (i % 7 == 3 ? smaller : largest) | (i % 11 == 0 ? sign : 0);
        xs = orc::from_bits<T>(bits);
        check_input<T>(std::span<const T>(xs), std::string(f.name) + " largest significands, n = " +
                                                     std::to_string(n), false);
        expect_fused_matches<T>(xs, label + " (largest significands)");
    }
}

TEST(ExponentBins, ZerosAndSpillsFloat64) { zeros_and_spills<double>(5105); }
TEST(ExponentBins, ZerosAndSpillsFloat32) { zeros_and_spills<float>(5106); }
TEST(ExponentBins, ZerosAndSpillsBfloat16) { zeros_and_spills<bfloat16>(5107); }

TEST(ExponentBins, Float64) { wide_blocks<double>(5101); }
TEST(ExponentBins, Float32) { wide_blocks<float>(5102); }
TEST(ExponentBins, Float16) { wide_blocks<float16>(5103); }  // one window spans every binade: F5 never runs
TEST(ExponentBins, Bfloat16) { wide_blocks<bfloat16>(5104); }

// The largest significands in the same bin, many times: the bins' int64 invariant (file comment of sum_kernels.cpp).
TEST(ExponentBins, LargestSignificandsRepeatedInOneBin) {
    const format_info& f = binary64_info;
    std::vector<std::uint64_t> bits;
    const std::uint64_t big = (std::uint64_t{2046} << 52) | ((std::uint64_t{1} << 52) - 1);  // largest finite
    const std::uint64_t tiny = 1;                                                            // smallest subnormal
    for (int i = 0; i < 300000; ++i) bits.push_back(i % 3 == 2 ? tiny : big);
    const std::vector<double> xs = orc::from_bits<double>(bits);
    check_input<double>(std::span<const double>(xs), "largest and smallest, 300000 terms", false);
    superaccumulator a;
    a.add_abs(std::span<const double>(xs));
    EXPECT_EQ(a.round_bits(f), orc::mpfr_sum(bits, f).round_bits(f));
}

}  // namespace
