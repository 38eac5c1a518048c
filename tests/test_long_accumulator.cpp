// Long property runs of the superaccumulator against the MPFR, Boost and GMP oracles (ctest label "long", run by
// `make long`, not by `make test`): ten times the random inputs of test_accumulator.cpp, spans of up to 2·10^5 terms
// (many blocks of 2048, windows moving from block to block), and the big acceptance classes with more scalings.
#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <string>
#include <vector>

#include "accumulator_checks.h"
#include "exactref/accumulator.h"
#include "oracle.h"

namespace {

using namespace exactref_test;

template <class T>
void many_random_inputs(std::uint64_t seed, int count) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < count; ++i) {
        orc::term_mix mix;
        const std::vector<std::uint64_t> bits = random_input<T>(rng, mix);
        if (!check_bits<T>(bits, "seed " + std::to_string(seed) + ", input " + std::to_string(i) + ", " +
                                     orc::to_string(mix), i % 8 == 0))
            return;
    }
}

TEST(LongAccumulatorRandom, Float64) { many_random_inputs<double>(7001, 1000000); }
TEST(LongAccumulatorRandom, Float32) { many_random_inputs<float>(7002, 1000000); }
TEST(LongAccumulatorRandom, Float16) { many_random_inputs<float16>(7003, 1000000); }
TEST(LongAccumulatorRandom, Bfloat16) { many_random_inputs<bfloat16>(7004, 1000000); }

// Long spans: runs of one mix with bursts of another, so the block maximum (and the window below it) changes from
// block to block and many terms fall below the window.
template <class T>
void long_spans(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 200; ++i) {
        const std::size_t n = 2048 * (1 + rng() % 100) + rng() % 2048;
        std::vector<std::uint64_t> bits;
        while (bits.size() < n) {
            const std::size_t run = std::min<std::size_t>(n - bits.size(), 1 + rng() % 5000);
            const auto mix = orc::all_term_mixes[rng() % std::size(orc::all_term_mixes)];
            const auto part = orc::random_terms(f, run, mix, rng);
            bits.insert(bits.end(), part.begin(), part.end());
        }
        if (!check_bits<T>(bits, "long span " + std::to_string(i) + ", seed " + std::to_string(seed), true)) return;
    }
}

TEST(LongAccumulatorSpans, Float64) { long_spans<double>(7101); }
TEST(LongAccumulatorSpans, Float32) { long_spans<float>(7102); }
TEST(LongAccumulatorSpans, Float16) { long_spans<float16>(7103); }
TEST(LongAccumulatorSpans, Bfloat16) { long_spans<bfloat16>(7104); }

TEST(LongAccumulatorClasses, CancellationToExactZeroMoreScales) {
    std::vector<std::uint64_t> bits;
    bits.reserve(4096000);
    for (int i = 0; i < 4096000; ++i) bits.push_back(std::bit_cast<std::uint32_t>(static_cast<float>(i - 2048000) + 0.5f));
    check_variants<float>(bits, "cancellation float32", {-125, -60, 40, 100}, true);
}

TEST(LongAccumulatorClasses, StagnationMoreScales) {
    const std::vector<std::uint64_t> ones(std::size_t{1} << 25, std::bit_cast<std::uint32_t>(1.0f));
    check_variants<float>(ones, "2^25 float32 ones", {-125, -1, 60, 102}, true);
    const std::vector<std::uint64_t> b(std::size_t{1} << 20, bits_from<bfloat16>(1.0));
    check_variants<bfloat16>(b, "2^20 bfloat16 ones", {-126, 50}, true);
}

}  // namespace
