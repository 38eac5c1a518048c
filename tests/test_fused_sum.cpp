// The fused pass add_sum_and_abs (one read of the data for s and S = Σ|x|) equals add + add_abs bit for bit, and
// exactref::sum() (which uses it) equals term-by-term accumulation, over random and adversarial spans of every format;
// and the one-pass window (Step F0 of docs/algorithms/superaccumulator.md) against the MPFR, Boost and GMP oracles at
// every exit it has.
#include <gtest/gtest.h>

#include <cmath>  // std::ldexp, std::fabs
#include <random>
#include <string>
#include <vector>

#include "accumulator_checks.h"
#include "exactref/accumulator.h"
#include "exactref/reference.h"

namespace {
using namespace exactref;
namespace orc = exactref::oracle;

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

// ---- Step F0: the one-pass window ----------------------------------------------------------------------------------
// N(0, 1) blocks whose largest term lies in [2, 4) (each block gets one 2.5, and |x| >= 4 is redrawn), so from the
// second block on the guessed top is the binade [4, 8) and its window holds [2^(2-W), 8), W = 24 (binary64), 27
// (binary32), 43 (bfloat16) (the lane invariant of src/sum_kernels.cpp). Each plant sits on an edge of that window or
// leaves it; float16 (W = 40 spans every binade) never takes Step F0.
constexpr std::size_t block = 2048;

template <class T>
int window_of() {
    if constexpr (std::is_same_v<T, double>) return 24;
    else if constexpr (std::is_same_v<T, float>) return 27;
    else return 43;  // bfloat16
}

template <class T>
T of(double v) {
    if constexpr (std::is_same_v<T, double>) return v;
    else if constexpr (std::is_same_v<T, float>) return static_cast<float>(v);
    else return T(static_cast<float>(v));  // exact for every value used below
}

template <class T>
T below(T x) {  // the next value of T toward zero (x > 0)
    using tr = format_traits<T>;
    return tr::from_bits(static_cast<typename tr::bits_type>(tr::to_bits(x) - 1));
}

template <class T>
T negated(T x) {
    using tr = format_traits<T>;
    using Bits = typename tr::bits_type;
    return tr::from_bits(static_cast<Bits>(tr::to_bits(x) ^ static_cast<Bits>(Bits{1} << (tr::info.storage_bits - 1))));
}

template <class T>
std::vector<T> gauss_blocks(std::mt19937_64& rng, std::size_t n) {
    std::normal_distribution<double> gauss(0.0, 1.0);
    std::vector<T> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        double v = gauss(rng);
        while (std::fabs(v) >= 4) v = gauss(rng);
        out[i] = of<T>(i % block == 100 ? 2.5 : v);
    }
    return out;
}

// The plants: a name and what to do to the terms (a whole block of 2048 from `at`, or the one term at `at`).
template <class T>
void plant(std::vector<T>& xs, int kind, std::size_t at) {
    using tr = format_traits<T>;
    const int w = window_of<T>();
    const T floor = of<T>(std::ldexp(1.0, 2 - w));
    const std::size_t end = std::min(xs.size(), at - at % block + block);
    switch (kind) {
        case 0: xs[at] = of<T>(8.0); break;                                    // one binade above the window
        case 1: xs[at] = below(of<T>(8.0)); break;                             // the window's largest value
        case 2: xs[at] = floor; break;                                         // its smallest
        case 3: xs[at] = below(floor); break;                                  // just below it
        case 4: xs[at] = of<T>(0.0); break;
        case 5: xs[at] = negated(of<T>(0.0)); break;
        case 6: xs[at] = tr::from_bits(1); break;                              // the smallest subnormal
        case 7: xs[at] = of<T>(INFINITY); break;
        case 8: xs[at] = of<T>(-INFINITY); break;
        case 9: xs[at] = of<T>(NAN); break;
        case 10: xs[at] = of<T>(std::ldexp(1.0, 60)); break;                  // far above: the next blocks' guess too
        case 11:  // cancellation: the block from `at` on in pairs x, -x
            for (std::size_t i = at; i + 1 < end; i += 2) xs[i + 1] = negated(xs[i]);
            break;
        case 12:  // the lane bound: every term of the block at the top of the window with the largest significand
        case 13:  // ... and negative
            for (std::size_t i = at; i < end; ++i) xs[i] = kind == 12 ? below(of<T>(8.0)) : negated(below(of<T>(8.0)));
            break;
        default: break;  // 14: no plant (every block takes Step F0)
    }
}

template <class T>
void check_one_pass(std::uint64_t seed) {
    using tr = format_traits<T>;
    std::mt19937_64 rng(seed);
    const std::size_t lengths[] = {3 * block - 1, 3 * block, 3 * block + 1, 3 * block + 7, 3 * block + 9,
                                   3 * block + 17, 5 * block + 33};
    for (const std::size_t n : lengths) {
        for (int kind = 0; kind <= 14; ++kind) {
            // positions: the first and last term of the second block, the middle of the third, the span's last term
            for (const std::size_t at : {block, 2 * block - 1, 2 * block + 777, n - 1}) {
                const std::string label = "seed " + std::to_string(seed) + " n " + std::to_string(n) + " plant " +
                                          std::to_string(kind) + " at " + std::to_string(at);
                SCOPED_TRACE(label);
                std::vector<T> xs = gauss_blocks<T>(rng, n);
                plant(xs, kind, at);
                exactref_test::check_variants<T>(orc::to_bits(std::span<const T>(xs)), label, {}, false);
                superaccumulator fused_s, fused_a, slow_s, slow_a;
                add_sum_and_abs(std::span<const T>(xs), fused_s, fused_a);
                for (const T& x : xs) {
                    slow_s.add(x);
                    slow_a.add(tr::to_bits(x) >> (tr::info.storage_bits - 1) ? negated(x) : x);
                }
                expect_same(fused_s, slow_s);
                expect_same(fused_a, slow_a);
                const reference ref = sum(std::span<const T>(xs));
                expect_same(ref.sum, slow_s);
                expect_same(ref.abs_sum, slow_a);
                const double largest = largest_magnitude(std::span<const T>(xs));
                EXPECT_TRUE(ref.largest == largest || (std::isnan(ref.largest) && std::isnan(largest)))
                    << ref.largest << " vs " << largest;
                if (::testing::Test::HasFailure()) return;
            }
        }
    }
}

TEST(FusedSum, OnePassWindowFloat64) { check_one_pass<double>(21); }
TEST(FusedSum, OnePassWindowFloat32) { check_one_pass<float>(22); }
TEST(FusedSum, OnePassWindowBfloat16) { check_one_pass<bfloat16>(23); }

TEST(FusedSum, Float64) { check_format<double>(11); }
TEST(FusedSum, Float32) { check_format<float>(12); }
TEST(FusedSum, Float16) { check_format<float16>(13); }
TEST(FusedSum, Bfloat16) { check_format<bfloat16>(14); }
}  // namespace
