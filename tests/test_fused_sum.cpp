// The fused pass add_sum_and_abs (one read of the data for s and S = Σ|x|) equals add + add_abs bit for bit, and
// exactref::sum() (which uses it) equals term-by-term accumulation, over random and adversarial spans of every format;
// and the one-pass window (Step F0 of docs/algorithms/superaccumulator.md) against the MPFR, Boost and GMP oracles at
// every exit it has.
#include <gtest/gtest.h>

#include <bit>    // std::bit_cast
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
// leaves it; float16 (W = 40 spans every binade) never takes Step F0. On AVX-512 binary64 and binary32 blocks take
// Step F0b first, whose window holds [2^(2-W_b), 8), W_b = 40 (binary64; it contains F0's) and 23 (binary32; a term
// below it but in F0a's window sends the block to F0a): plants 15-18 sit on its edges. F0b keeps a block by the
// processor's flags, not by a test of the terms: plants 19-25 are blocks it must keep or drop by them.
constexpr std::size_t block = 2048;

template <class T>
int window_of() {
    if constexpr (std::is_same_v<T, double>) return 24;
    else if constexpr (std::is_same_v<T, float>) return 27;
    else return 43;  // bfloat16
}

template <class T>
int f0b_window_of() {
    if constexpr (std::is_same_v<T, double>) return 40;
    else if constexpr (std::is_same_v<T, float>) return 23;
    else return 43;  // bfloat16: no F0b, F0's window again
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
        case 15: xs[at] = of<T>(std::ldexp(1.0, 2 - f0b_window_of<T>())); break;  // F0b's smallest in-window value
        case 16: xs[at] = below(of<T>(std::ldexp(1.0, 2 - f0b_window_of<T>()))); break;  // just below it
        case 17:  // binary64: every term a tie of F0b's split, x = (2^46 - 1.5)·u1 with u1 = 2^-43 the grid of its
        case 18:  // high parts (top 2^3, 2^7 terms a lane), so every low part is +u1/2 (-u1/2 negated): the low sums'
                  // bound, c·u1/2 = 2^53 units of 2^(2 - 40 - 52), met exactly
            for (std::size_t i = at; i < end; ++i) {
                const T tie = of<T>(8.0 - 1.5 * std::ldexp(1.0, -43));  // binary32, bfloat16: rounds to 8.0 (above)
                xs[i] = kind == 17 ? tie : negated(tie);
            }
            break;
        // F0b keeps a block when its binary64 additions and conversions raised no flag and every lane integer is
        // within 2^53 units (binary32: unit 2^-44, 2^6 terms a lane; binary64: hi grid 2^-43, 2^7 terms a lane).
        case 19:  // a whole block of 8.0, above the guessed top: lanes of exactly 2^53 units, kept
        case 20:  // ... of 16.0: 2^54 units, exact sums but over the bound
        case 21:  // ... of 2^12: 2^62 units, each conversion exact, but two sets' lanes would wrap int64
            for (std::size_t i = at; i < end; ++i) xs[i] = of<T>(kind == 19 ? 8.0 : kind == 20 ? 16.0 : 4096.0);
            break;
        case 22:  // runs of 32 terms 2^10·(1 + k·2^-13) and of (1 + 2^-23)·2^-20 in turn, so that every lane takes
                  // both: terms of the window or above it whose partial sums need more than 53 bits (inexact)
            for (std::size_t i = at; i < end; ++i)
                xs[i] = of<T>(i / 32 % 2 == 0 ? std::ldexp(1.0 + std::ldexp(double(i % 8191), -13), 10)
                                         : std::ldexp(1.0 + std::ldexp(1.0, -23), -20));
            break;
        case 25:  // plant 17's ties (binary64: every low part +u1/2, low sums up to 127·2^-44 before the last step)
                  // and in the last step 2^-39·(1 + 2^-52), below the window: its addition to a low sum near 2^-37
                  // (ulp 2^-89) is inexact, and only the flag shows it (the rounded sum is a whole number of units,
                  // 2^-90, below 2^53 of them)
            for (std::size_t i = at; i < end; ++i)
                xs[i] = of<T>(i + 8 < end ? 8.0 - 1.5 * std::ldexp(1.0, -43) : std::ldexp(1.0 + std::ldexp(1.0, -52), -39));
            break;
        case 23:  // a whole block of -0.0, then of +0.0: left to Step F2 (signed zeros)
        case 24:
            for (std::size_t i = at; i < end; ++i) xs[i] = kind == 23 ? negated(of<T>(0.0)) : of<T>(0.0);
            break;
        default: break;  // 14: no plant (every block takes Step F0)
    }
}

// The fused pass and exactref::sum() against the MPFR, Boost and GMP oracles and the term-by-term path: s, S and
// max|x|.
template <class T>
void check_against_slow(const std::vector<T>& xs, const std::string& label) {
    using tr = format_traits<T>;
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
}

template <class T>
void check_one_pass(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::size_t lengths[] = {3 * block - 1, 3 * block, 3 * block + 1, 3 * block + 7, 3 * block + 9,
                                   3 * block + 17, 5 * block + 33};
    for (const std::size_t n : lengths) {
        for (int kind = 0; kind <= 25; ++kind) {
            // positions: the first and last term of the second block, the middle of the third, the span's last term
            for (const std::size_t at : {block, 2 * block - 1, 2 * block + 777, n - 1}) {
                const std::string label = "seed " + std::to_string(seed) + " n " + std::to_string(n) + " plant " +
                                          std::to_string(kind) + " at " + std::to_string(at);
                SCOPED_TRACE(label);
                std::vector<T> xs = gauss_blocks<T>(rng, n);
                plant(xs, kind, at);
                check_against_slow(xs, label);
                if (::testing::Test::HasFailure()) return;
            }
        }
    }
}

// Step F0a (binary32 on 32-bit lanes): the window's extreme positions. Terms of random sign and significand with
// exponent fields drawn from [lo, hi] and the largest significand at field hi in term 100 of every block, so from the
// second block on the guess is top = hi + 1 and the window holds the fields [hi + 1 - W, hi + 1], W = 27. With
// hi = 28 the guess is the lowest one Step F0 takes (top = W + 2: the floor is the smallest normal binade but one);
// with hi = 253 the highest (top = 254: the floor 227 << 23 is the largest the 32-bit wrap-around must handle, and the
// window's top binade holds the largest finite value). Each plant goes once into the low half of a 64-bit word (an
// even position) and once into the high half (odd), in the second block.
std::vector<float> fields_blocks(std::mt19937_64& rng, std::size_t n, std::uint32_t lo, std::uint32_t hi) {
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto field = i % block == 100 ? hi : lo + static_cast<std::uint32_t>(rng() % (hi - lo + 1));
        const auto frac = i % block == 100 ? 0x7FFFFFu : static_cast<std::uint32_t>(rng() & 0x7FFFFF);
        const auto sign = static_cast<std::uint32_t>(rng() & 1) << 31;
        out[i] = std::bit_cast<float>(sign | field << 23 | frac);
    }
    return out;
}

void check_float32_edges(std::uint32_t lo, std::uint32_t hi, std::uint32_t window, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::uint32_t top = hi + 1, floor_field = top - window;
    const auto make = [](std::uint32_t field, std::uint32_t frac) { return std::bit_cast<float>(field << 23 | frac); };
    const float plants[] = {
        make(top, 0x7FFFFF),                      // the window's largest value: in (the lane bound's largest term)
        make(floor_field, 0),                     // its smallest: in
        make(floor_field - 1, 0x7FFFFF),          // just below it: out
        top + 1 < 255 ? make(top + 1, 0) : INFINITY,  // just above it: out
        make(0, 1),                               // the smallest subnormal: out
        0.0f,                                     // a zero: out (wraps to 2^32 - floor)
        -0.0f,
        INFINITY,
        -NAN,
        1.0f,                                     // far above (hi = 28) or far below (hi = 253): out
    };
    for (std::size_t k = 0; k < std::size(plants); ++k) {
        for (const std::size_t at : {block + 200, block + 201, 2 * block - 2, 2 * block - 1}) {
            for (const bool negative : {false, true}) {
                const std::string label = "seed " + std::to_string(seed) + " fields [" + std::to_string(lo) + ", " +
                                          std::to_string(hi) + "] W " + std::to_string(window) + " plant " +
                                          std::to_string(k) + " at " + std::to_string(at) +
                                          (negative ? " negated" : "");
                SCOPED_TRACE(label);
                std::vector<float> xs = fields_blocks(rng, 3 * block + 5, lo, hi);
                xs[at] = negative ? negated(plants[k]) : plants[k];
                check_against_slow(xs, label);
                if (::testing::Test::HasFailure()) return;
            }
        }
    }
    // The lane bound over whole blocks of one sign: random significands in the top quarter of the window's top binade
    // (a lane's sum near the bound), alone or with one term in 16 at random a full significand at the floor's field
    // (odd units) or at the field below it.
    for (int kind = 0; kind < 6; ++kind) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " W " + std::to_string(window) + " whole blocks " +
                     std::to_string(kind));
        std::vector<float> xs = fields_blocks(rng, 4 * block + 5, lo, hi);
        const std::uint32_t sign = kind % 2 == 1 ? 0x80000000u : 0;
        for (std::size_t i = block; i < 3 * block; ++i) {
            const bool low = kind >= 2 && rng() % 16 == 0;
            const std::uint32_t field = !low ? top : kind >= 4 ? floor_field - 1 : floor_field;
            const auto bits = static_cast<std::uint32_t>(rng());
            const std::uint32_t frac = low ? 0x7FFFFFu - (bits & 0xFF) : (bits & 0x7FFFFF) | 0x600000u;
            xs[i] = std::bit_cast<float>(sign | field << 23 | frac);
        }
        check_against_slow(xs, "whole blocks");
        if (::testing::Test::HasFailure()) return;
    }
}

// Step F0b for binary64 at the ends of its range of tops (f0b_layout in src/sum_kernels.cpp): top = 93, the lowest
// (every low part's unit 2^(top - bias - 40 - 52) = 2^-1022, the smallest normal), and 2036, the highest (σ = 1.5·2^M
// with M = top - bias + 7 = 1020, the high sums up to 2^1021); tops 92 and 2037 are the next ones outside, which take
// F0 on the integer lanes (or miss). Terms have random sign and significand and exponent fields in [hi - 38, hi] (all
// in F0b's window, 41 binades), term 100 of every block the largest at field hi, so from the second block on the
// guess is top = hi + 1; the plants sit on the window's edges in the second block.
void check_float64_f0b_edges(std::uint64_t hi, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::uint64_t top = hi + 1, lo = hi - 38, floor_field = top - 40;
    const auto make = [](std::uint64_t field, std::uint64_t frac) { return std::bit_cast<double>(field << 52 | frac); };
    constexpr std::uint64_t all_frac = (std::uint64_t{1} << 52) - 1;
    const double plants[] = {
        make(top, all_frac),                                       // the largest value: its high part rounds up
        make(top, all_frac - 191),  // a tie of the split (grid 2^7 ulps; frac = 64 mod 256: hi rounds down to even)
        make(floor_field, 0),                                      // the window's smallest value: in
        make(floor_field, all_frac),                               // all 53 bits in the low part
        make(floor_field - 1, all_frac),                           // just below it: out
        top + 1 < 2047 ? make(top + 1, 0) : INFINITY,              // just above it: out
        make(0, 1),                                                // the smallest subnormal: out
        0.0,
        -0.0,
        INFINITY,
        NAN,
        1.0,  // far above or far below: out
    };
    std::uniform_int_distribution<std::uint64_t> fields(lo, hi);
    const auto blocks = [&](std::size_t n) {
        std::vector<double> out(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t field = i % block == 100 ? hi : fields(rng);
            const std::uint64_t frac = i % block == 100 ? all_frac : rng() & all_frac;
            out[i] = std::bit_cast<double>((rng() & 1) << 63 | field << 52 | frac);
        }
        return out;
    };
    for (std::size_t k = 0; k < std::size(plants); ++k) {
        for (const std::size_t at : {block + 200, 2 * block - 1}) {
            for (const bool negative : {false, true}) {
                const std::string label = "seed " + std::to_string(seed) + " fields [" + std::to_string(lo) + ", " +
                                          std::to_string(hi) + "] plant " + std::to_string(k) + " at " +
                                          std::to_string(at) + (negative ? " negated" : "");
                SCOPED_TRACE(label);
                std::vector<double> xs = blocks(3 * block + 5);
                xs[at] = negative ? negated(plants[k]) : plants[k];
                check_against_slow(xs, label);
                if (::testing::Test::HasFailure()) return;
            }
        }
    }
    // The lane bounds at these scales, over whole blocks of one sign: (a) one value, the largest or the split's tie;
    // (b) random significands in the window's top binade (high sums near c·2^(E+1) = 2^53 grid units); (c) ties of
    // the split in the top binade (every low part u1/2) mixed at random with full significands at the floor's field,
    // or at the field below it (then the block must leave F0b): low sums near 2^52 units with all 53 bits in use.
    const auto one_sign = [&](std::vector<double>& xs, bool negative) {
        for (std::size_t i = block; i < 3 * block; ++i) xs[i] = negative ? -std::fabs(xs[i]) : std::fabs(xs[i]);
    };
    for (int kind = 0; kind < 10; ++kind) {
        const bool negative = kind % 2 == 1;
        SCOPED_TRACE("seed " + std::to_string(seed) + " top " + std::to_string(top) + " whole blocks " +
                     std::to_string(kind));
        std::vector<double> xs = blocks(4 * block + 5);
        for (std::size_t i = block; i < 3 * block; ++i) {
            const std::uint64_t low_field = kind >= 8 ? floor_field - 1 : floor_field;
            switch (kind / 2) {
                case 0: xs[i] = plants[0]; break;
                case 1: xs[i] = plants[1]; break;
                case 2: xs[i] = make(top, rng() & all_frac); break;
                default: xs[i] = rng() % 2 ? plants[1] : make(low_field, all_frac - (rng() & 0xFFFF)); break;
            }
        }
        one_sign(xs, negative);
        check_against_slow(xs, "whole blocks");
        if (::testing::Test::HasFailure()) return;
    }
}

// The lane bound with the two halves apart: every even position of a block the window's largest value, every odd
// one its negation (T at its largest, N half of it), then the halves swapped, and all of one sign in one half only.
void check_float32_halves(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const float largest = std::bit_cast<float>(std::uint32_t{129} << 23 | 0x7FFFFF);  // the window's largest: below 8
    for (int kind = 0; kind < 4; ++kind) {
        const std::string label = "seed " + std::to_string(seed) + " halves " + std::to_string(kind);
        SCOPED_TRACE(label);
        std::vector<float> xs = gauss_blocks<float>(rng, 4 * block + 3);
        for (std::size_t i = block; i < 3 * block; ++i) {
            const bool odd = i % 2 == 1;
            switch (kind) {
                case 0: xs[i] = odd ? negated(largest) : largest; break;
                case 1: xs[i] = odd ? largest : negated(largest); break;
                case 2: if (odd) xs[i] = negated(largest); break;
                default: if (!odd) xs[i] = negated(largest); break;
            }
        }
        check_against_slow(xs, label);
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(FusedSum, OnePassFloat32LowestWindow) { check_float32_edges(2, 28, 27, 31); }
TEST(FusedSum, OnePassFloat32HighestWindow) { check_float32_edges(227, 253, 27, 32); }
// Step F0b's window for binary32 (W_b = 23): fields in [top - 23, hi], so the unplanted blocks take F0b.
TEST(FusedSum, OnePassF0bFloat32LowestWindow) { check_float32_edges(6, 28, 23, 34); }
TEST(FusedSum, OnePassF0bFloat32HighestWindow) { check_float32_edges(231, 253, 23, 35); }
TEST(FusedSum, OnePassF0bFloat64LowestTop) { check_float64_f0b_edges(92, 36); }
TEST(FusedSum, OnePassF0bFloat64BelowTheLowestTop) { check_float64_f0b_edges(91, 37); }
TEST(FusedSum, OnePassF0bFloat64HighestTop) { check_float64_f0b_edges(2035, 38); }
TEST(FusedSum, OnePassF0bFloat64AboveTheHighestTop) { check_float64_f0b_edges(2036, 39); }
TEST(FusedSum, OnePassF0bFloat64WhereHighSumsWouldOverflow) { check_float64_f0b_edges(2038, 41); }  // M would be 1023
TEST(FusedSum, OnePassF0bFloat64LargestGuess) { check_float64_f0b_edges(2045, 40); }  // top 2046: the largest guess
TEST(FusedSum, OnePassFloat32Halves) { check_float32_halves(33); }

TEST(FusedSum, OnePassWindowFloat64) { check_one_pass<double>(21); }
TEST(FusedSum, OnePassWindowFloat32) { check_one_pass<float>(22); }
TEST(FusedSum, OnePassWindowBfloat16) { check_one_pass<bfloat16>(23); }

TEST(FusedSum, Float64) { check_format<double>(11); }
TEST(FusedSum, Float32) { check_format<float>(12); }
TEST(FusedSum, Float16) { check_format<float16>(13); }
TEST(FusedSum, Bfloat16) { check_format<bfloat16>(14); }
}  // namespace
