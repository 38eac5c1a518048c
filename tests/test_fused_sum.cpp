// The fused pass add_sum_and_abs (one read of the data for s and S = Σ|x|) equals add + add_abs bit for bit, and
// exactref::sum() (which uses it) equals term-by-term accumulation, over random and adversarial spans of every format.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "accumulator_checks.h"
#include "exactref/accumulator.h"
#include "exactref/reference.h"

namespace {
using namespace exactref;

template <class T>
std::vector<T> adversarial(std::mt19937_64& rng, std::size_t n) {
    using tr = format_traits<T>;
    using Bits = typename tr::bits_type;
    std::vector<T> out(n);
    std::uniform_int_distribution<std::uint64_t> any;
    const int kind = static_cast<int>(rng() % 4);
    for (auto& x : out) {
        Bits b = static_cast<Bits>(any(rng));
        if (kind == 1) b = static_cast<Bits>(b & ~(Bits{1} << (tr::info.storage_bits - 2)));  // small exponents
        if (kind == 2 && rng() % 64 == 0) b = tr::to_bits(tr::from_bits(0));                // zeros among others
        x = tr::from_bits(b);  // kind 3 and all: any bit pattern, Inf and NaN included
    }
    return out;
}

void expect_same(const superaccumulator& a, const superaccumulator& b) { exactref_test::expect_same_accumulators(a, b); }

template <class T>
void check_format(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 60; ++trial) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " trial " + std::to_string(trial));
        const std::size_t n = trial % 3 == 0 ? rng() % 70 : 1 + rng() % 9000;  // both sides of the fast-path cut
        const std::vector<T> xs = adversarial<T>(rng, n);
        superaccumulator fused_s, fused_a, s, a, slow_s, slow_a;
        add_sum_and_abs(std::span<const T>(xs), fused_s, fused_a);
        s.add(std::span<const T>(xs));
        a.add_abs(std::span<const T>(xs));
        for (const T& x : xs) {
            slow_s.add(x);
            using tr = format_traits<T>;
            const auto sign = static_cast<typename tr::bits_type>(typename tr::bits_type{1} << (tr::info.storage_bits - 1));
            slow_a.add(tr::from_bits(static_cast<typename tr::bits_type>(tr::to_bits(x) & ~sign)));
        }
        expect_same(fused_s, s);
        expect_same(fused_a, a);
        expect_same(fused_s, slow_s);
        expect_same(fused_a, slow_a);
        const reference ref = sum(std::span<const T>(xs));
        expect_same(ref.sum, slow_s);
        expect_same(ref.abs_sum, slow_a);
        EXPECT_EQ(ref.count, xs.size());
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(FusedSum, Float64) { check_format<double>(11); }
TEST(FusedSum, Float32) { check_format<float>(12); }
TEST(FusedSum, Float16) { check_format<float16>(13); }
TEST(FusedSum, Bfloat16) { check_format<bfloat16>(14); }
}  // namespace
