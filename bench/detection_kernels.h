// bench/detection_kernels.h — the emulated reduction kernels of bench_detection and the faults planted into them
// (docs/detection.md). Host code that performs, addition for addition, what a GPU kernel would, in the data's format.
//
//   kernel A  CUB-like: each thread folds 8 consecutive terms, a block of 256 threads (2048 terms) reduces its
//             thread sums as a shared-memory tree (stride 128, 64, ..., 1), blocks meet in atomicAdds in an
//             arbitrary order.                                                 structure levels:fold:8,tree:256,any
//   kernel B  one term per thread: a block of 256 terms reduced as the same tree, atomics over blocks.
//                                                                             structure levels:tree:256,any
//   kernel C  a pairwise tree of minimal height: each 2048-term block as a full tree (stride 1024, ..., 1), then the
//             block results as a tree (stride halving). Height ceil(log2 n): the structure of tree(ceil(log2 n)).
//
// Arithmetic: every addition is one correctly rounded addition in the data's format (round to nearest even).
// binary64 and binary32 use the hardware; binary16 and bfloat16 values are held in binary32 and each sum is formed
// in binary32 and rounded once to the 16-bit format. That is correctly rounded: the exact sum of two p-bit numbers
// rounded to 24 bits, then to p bits, equals the direct rounding when 24 >= 2p + 2 (Figueroa, "When is double
// rounding innocuous?", SIGNUM 30(3), 1995; p = 11 and 8), and every binary16/bfloat16 value and sum of two lies in
// binary32's range. bench_detection checks it against the oracle's add_rounded before it measures anything.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "exactref/format.h"

namespace exactref::detection {

// ---- random numbers: fast, fully specified (the same bits with every standard library) ------------------------------

/// splitmix64 (Steele, Lea, Flood 2014): seeds xoshiro and mixes a data set's coordinates into one seed.
inline std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/// xoshiro256** (Blackman–Vigna 2018).
class xoshiro256 {
public:
    explicit xoshiro256(std::uint64_t seed) {
        for (std::uint64_t& w : s_) w = splitmix64(seed);
    }
    std::uint64_t operator()() {
        const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = std::rotl(s_[3], 45);
        return result;
    }
    /// Uniform in (0, 1): 53 random bits, never 0 (log() takes it).
    double open01() { return (static_cast<double>((*this)() >> 11) + 0.5) * 0x1p-53; }
    /// Uniform in [0, 1): 53 random bits.
    double uniform01() { return static_cast<double>((*this)() >> 11) * 0x1p-53; }
    /// Uniform integer in [0, m), m > 0 (Lemire's multiply-shift; the bias is below 2^-64·m).
    std::uint64_t below(std::uint64_t m) {
        __extension__ using wide = unsigned __int128;
        return static_cast<std::uint64_t>((static_cast<wide>((*this)()) * m) >> 64);
    }

private:
    std::uint64_t s_[4];
};

/// N(0, 1) by Doornik's ZIGNOR ziggurat (128 blocks; "An improved ziggurat method to generate normal random
/// samples", 2005): the block index and the uniform come from different bits, the tail by Marsaglia's method.
class normal_ziggurat {
public:
    normal_ziggurat() {
        constexpr double r = 3.442619855899, v = 9.91256303526217e-3;
        double f = std::exp(-0.5 * r * r);
        x_[0] = v / f;
        x_[1] = r;
        x_[128] = 0;
        for (int i = 2; i < 128; ++i) {
            x_[i] = std::sqrt(-2 * std::log(v / x_[i - 1] + f));
            f = std::exp(-0.5 * x_[i] * x_[i]);
        }
        for (int i = 0; i < 128; ++i) ratio_[i] = x_[i + 1] / x_[i];
    }
    double operator()(xoshiro256& rng) const {
        while (true) {
            const std::uint64_t bits = rng();
            const double u = static_cast<double>(bits >> 11) * 0x1p-52 - 1.0;  // [-1, 1), 53 bits
            const unsigned i = static_cast<unsigned>(bits & 0x7F);              // the block, from other bits
            if (std::fabs(u) < ratio_[i]) return u * x_[i];
            if (i == 0) return tail(rng, u < 0);
            const double x = u * x_[i];
            const double f0 = std::exp(-0.5 * (x_[i] * x_[i] - x * x));
            const double f1 = std::exp(-0.5 * (x_[i + 1] * x_[i + 1] - x * x));
            if (f1 + rng.uniform01() * (f0 - f1) < 1.0) return x;
        }
    }

private:
    static double tail(xoshiro256& rng, bool negative) {
        constexpr double r = 3.442619855899;
        double x, y;
        do {
            x = std::log(rng.open01()) / r;
            y = std::log(rng.open01());
        } while (-2 * y < x * x);
        return negative ? x - r : r - x;
    }
    double x_[129];
    double ratio_[128];
};

// ---- arithmetic in the data's format -------------------------------------------------------------------------------

/// How the emulated kernels add in format T: `value` holds a T exactly, add() is RN_T(a + b), add_truncated() the
/// planted fault "accumulates in bfloat16 with round toward zero": the sum, formed in `value`'s own arithmetic, with
/// its significand cut to bfloat16's 8 bits.
template <class T>
struct arithmetic;

template <>
struct arithmetic<double> {
    using value = double;
    static value add(value a, value b) { return a + b; }
    static value add_truncated(value a, value b) {
        return std::bit_cast<double>(std::bit_cast<std::uint64_t>(a + b) & ~((std::uint64_t{1} << 45) - 1));
    }
    static value of(double x) { return x; }
    static double to_term(value v) { return v; }
    static std::uint64_t bits(value v) { return std::bit_cast<std::uint64_t>(v); }
};

template <>
struct arithmetic<float> {
    using value = float;
    static value add(value a, value b) { return a + b; }
    static value add_truncated(value a, value b) {
        return std::bit_cast<float>(std::bit_cast<std::uint32_t>(a + b) & 0xFFFF0000u);
    }
    static value of(double x) { return static_cast<float>(x); }
    static float to_term(value v) { return v; }
    static std::uint64_t bits(value v) { return std::bit_cast<std::uint32_t>(v); }
};

/// binary16 and bfloat16 held in binary32: one binary32 addition (exact or rounded to 24 bits), then one rounding
/// to the 16-bit format (innocuous double rounding, see the banner).
template <class H>
struct arithmetic_16 {
    using value = float;
    /// RN_H(x) as a binary32, with integer operations on the encoding (the library's H(float) does the same, one
    /// conversion each way; this is the kernels' inner loop). Checked against oracle::add_rounded at start-up.
    static value round(float x) {
        if constexpr (std::is_same_v<H, bfloat16>) {
            // bfloat16 is binary32 cut to 8 significand bits, subnormals included: round the low 16 bits away (ties
            // to even); a carry into the exponent gives the next binade, or Inf past the largest value.
            std::uint32_t u = std::bit_cast<std::uint32_t>(x);
            if ((u & 0x7F800000u) == 0x7F800000u) return x;  // Inf, NaN
            u += 0x7FFFu + ((u >> 16) & 1u);
            return std::bit_cast<float>(u & 0xFFFF0000u);
        } else {
            const float ax = std::fabs(x);
            if (ax >= 65520.0f) return std::copysign(INFINITY, x);  // binary16's round-to-nearest overflow threshold
            if (ax < 0x1p-14f) {
                // Subnormal binary16: multiples of 2^-24. In [0.5, 1) binary32's ulp is 2^-24, so adding 0.75 rounds
                // x to that quantum (ties to even); the sign of a zero result is x's, as RN gives.
                return std::copysign((x + 0.75f) - 0.75f, x);
            }
            std::uint32_t u = std::bit_cast<std::uint32_t>(x);  // normal binary16: keep 10 of the 23 fraction bits
            u += 0xFFFu + ((u >> 13) & 1u);
            return std::bit_cast<float>(u & 0xFFFFE000u);
        }
    }
    static value add(value a, value b) { return round(a + b); }
    static value add_truncated(value a, value b) {
        return round(std::bit_cast<float>(std::bit_cast<std::uint32_t>(a + b) & 0xFFFF0000u));
    }
    static value of(double x) { return round(static_cast<float>(x)); }  // RN_32 then RN_16: the data's own rounding
    static H to_term(value v) { return H(v); }
    static std::uint64_t bits(value v) { return H(v).bits; }
};
template <>
struct arithmetic<float16> : arithmetic_16<float16> {};
template <>
struct arithmetic<bfloat16> : arithmetic_16<bfloat16> {};

// ---- the kernels ---------------------------------------------------------------------------------------------------

enum class kernel_id { cub, tree256, pairwise };

struct kernel_shape {
    std::size_t block;   // terms per block (the unit of one atomic update, or of one first-level subtree)
    bool atomic_top;     // blocks meet in atomics (any order) or in a tree
};
inline kernel_shape shape_of(kernel_id k) {
    switch (k) {
        case kernel_id::cub: return {2048, true};
        case kernel_id::tree256: return {256, true};
        case kernel_id::pairwise: return {2048, false};
    }
    return {};
}

/// A shared-memory tree over v[0..m): stride top, top/2, ..., 1, v[t] += v[t + stride] for t < stride with
/// t + stride < m. Its height is ceil(log2 m) for m <= 2·top (every level where an addition happens halves the
/// live items, rounding up): the minimal height standard.h's `tree` allows.
template <class A, class Add>
typename A::value shared_tree(typename A::value* v, std::size_t m, std::size_t top, Add add) {
    for (std::size_t stride = top; stride > 0; stride /= 2)
        for (std::size_t t = 0; t < stride && t + stride < m; ++t) v[t] = add(v[t], v[t + stride]);
    return v[0];
}

/// One block's result: terms x[0..m), m <= the kernel's block size.
template <class A, bool truncated = false>
typename A::value block_result(kernel_id k, const typename A::value* x, std::size_t m) {
    using V = typename A::value;
    auto add = [](V a, V b) { return truncated ? A::add_truncated(a, b) : A::add(a, b); };
    V part[2048];
    switch (k) {
        case kernel_id::cub: {
            const std::size_t threads = (m + 7) / 8;
            for (std::size_t t = 0; t < threads; ++t) {
                const std::size_t end = std::min(m, 8 * t + 8);
                V acc = x[8 * t];
                for (std::size_t i = 8 * t + 1; i < end; ++i) acc = add(acc, x[i]);
                part[t] = acc;
            }
            return shared_tree<A>(part, threads, 128, add);
        }
        case kernel_id::tree256:
            std::copy(x, x + m, part);
            return shared_tree<A>(part, m, 128, add);
        case kernel_id::pairwise:
            std::copy(x, x + m, part);
            return shared_tree<A>(part, m, 1024, add);
    }
    return V(0);
}

/// Every block's result over xs.
template <class A, bool truncated = false>
std::vector<typename A::value> block_results(kernel_id k, std::span<const typename A::value> xs) {
    const std::size_t b = shape_of(k).block;
    std::vector<typename A::value> out((xs.size() + b - 1) / b);
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = block_result<A, truncated>(k, xs.data() + i * b, std::min(b, xs.size() - i * b));
    return out;
}

/// The atomics: the accumulator starts at `start` (0, or a previous call's result that nobody reset) and takes one
/// update per entry of `order` (block indices; an index twice is a block counted twice, a missing one a lost
/// update), in that order: a left fold, as atomicAdd gives.
template <class A, bool truncated = false>
typename A::value atomic_top(std::span<const typename A::value> blocks, std::span<const std::uint32_t> order,
                             typename A::value start = 0) {
    typename A::value acc = start;
    for (std::uint32_t i : order) acc = truncated ? A::add_truncated(acc, blocks[i]) : A::add(acc, blocks[i]);
    return acc;
}

/// Kernel C's second level: the block results as a stride-halving tree (height ceil(log2 c)).
template <class A, bool truncated = false>
typename A::value tree_top(std::vector<typename A::value> blocks) {
    using V = typename A::value;
    if (blocks.empty()) return V(0);
    const std::size_t top = std::bit_ceil(blocks.size()) / 2;
    auto add = [](V a, V b) { return truncated ? A::add_truncated(a, b) : A::add(a, b); };
    return shared_tree<A>(blocks.data(), blocks.size(), top, add);
}

}  // namespace exactref::detection
