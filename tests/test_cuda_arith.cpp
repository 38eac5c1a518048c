// The device arithmetic (include/exactref/cuda/arith.cuh) against the host trees' steps (detail/tree_arith.h) and
// the library's integer conversions (format.h): the device trees can only give the host's bits if every single step
// does. Runs on the host compiler, like the block emulator; the GPU tests check the same steps on the device.
//
// What is checked, bit for bit:
//   - widening: every float16 and bfloat16 encoding to binary64 and to binary32 (exhaustive), against
//     to_double_exact / static_cast<float>; NaN inputs give NaNs of the same sign;
//   - rounding binary64 -> float16 / bfloat16: every 16-bit value, the midpoints between neighbours, one binary64
//     ulp either side of each midpoint, and random binary64 values of every binade, against round_double_to;
//   - every op's combine / identity / finish, for the four float formats and the integer types, on random pairs and
//     on all pairs of a table of special operands, against tree_step (NaN results of sum/product: any NaN matches);
//   - a planted wrong rounding (ties away from zero) is caught by the same comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "exactref/cuda/arith.cuh"
#include "exactref/detail/tree_arith.h"
#include "exactref/format.h"
#include "test_cuda_checks.h"

namespace {

using namespace exactref;
namespace cd = exactref::cuda::detail;
using test_cuda::raw;
using test_cuda::show;

template <class H>
using layout_of = std::conditional_t<std::is_same_v<H, float16>, cd::binary16_layout, cd::bfloat16_layout>;

std::uint64_t bits64(double v) { return format_traits<double>::to_bits(v); }
bool is_nan64(std::uint64_t b) { return (b & ~(std::uint64_t{1} << 63)) > (std::uint64_t{0x7FF} << 52); }

template <class H>
void check_widening() {
    const format_info& f = format_traits<H>::info;
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        SCOPED_TRACE(::testing::Message() << f.name << " bits 0x" << std::hex << b);
        const double host = to_double_exact(f, b);
        const double dev = cd::narrow_to_double<layout_of<H>>(b);
        EXPECT_EQ(bits64(dev), bits64(host));
        const H h = format_traits<H>::from_bits(static_cast<std::uint16_t>(b));
        const float host_f = detail::widen<float>(h);
        const float dev_f = cd::widen<float>(h);
        EXPECT_EQ(format_traits<float>::to_bits(dev_f), format_traits<float>::to_bits(host_f));
        if constexpr (std::is_same_v<H, bfloat16>) {
            // The host tree's bfloat16 -> binary64 goes through a hardware float conversion, which keeps a NaN's
            // payload; the device's drops it. Both give the same value, and NaN for NaN.
            const double tree_host = detail::exact_double(h);
            EXPECT_TRUE(bits64(tree_host) == bits64(dev) || (is_nan64(bits64(tree_host)) && is_nan64(bits64(dev))));
        }
    }
}

TEST(CudaArith, WideningIsExactForEveryFloat16) { check_widening<float16>(); }
TEST(CudaArith, WideningIsExactForEveryBfloat16) { check_widening<bfloat16>(); }

template <class H>
void check_rounding(std::uint64_t seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const format_info& f = format_traits<H>::info;
    std::vector<double> probes;
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const double v = to_double_exact(f, b);
        probes.push_back(v);
        if (std::isnan(v) || std::isinf(v)) continue;
        const double next = to_double_exact(f, b + 1 < 0x10000 ? b + 1 : b);  // the neighbour above in magnitude
        if (std::isnan(next) || next == v) continue;
        const double mid = v / 2 + next / 2;  // exact: both halves and their sum fit in binary64
        probes.push_back(mid);
        probes.push_back(std::nextafter(mid, 0.0));
        probes.push_back(std::nextafter(mid, std::copysign(std::numeric_limits<double>::infinity(), mid)));
    }
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 200000; ++i) probes.push_back(format_traits<double>::from_bits(rng()));
    for (int i = 0; i < 200000; ++i) {  // values near the format's range, every sign
        const double v = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 200) - 200);
        probes.push_back(rng() % 2 ? v : -v);
    }
    probes.push_back(std::numeric_limits<double>::denorm_min());
    probes.push_back(-std::numeric_limits<double>::max());
    probes.push_back(-0.0);
    for (double v : probes) {
        const std::uint64_t host = round_double_to(f, v, rounding::to_nearest_even);
        const std::uint32_t dev = cd::round_binary64_to<layout_of<H>>(v);
        ASSERT_EQ(dev, host) << f.name << " of binary64 0x" << std::hex << bits64(v) << " (" << v << ")";
    }
}

TEST(CudaArith, RoundingToFloat16MatchesTheLibrary) { check_rounding<float16>(20240611); }
TEST(CudaArith, RoundingToBfloat16MatchesTheLibrary) { check_rounding<bfloat16>(20240612); }

// ---- the steps of each op --------------------------------------------------------------------------------------------

template <class A, reduce_op Op>
void check_op_on(const std::vector<A>& values, std::mt19937_64& rng, int random_pairs) {
    using host = detail::tree_step<A, Op, false>;
    using dev = cd::device_step<A, Op>;
    EXPECT_EQ(raw(dev::identity()), raw(host::identity())) << to_string(Op);
    const auto check = [&](A a, A b) {
        const A h = host::combine(a, b);
        const A d = dev::combine(a, b);
        if (!test_cuda::same_tree_bits(d, h, Op)) {
            ADD_FAILURE() << to_string(Op) << "(" << show(a) << ", " << show(b) << "): device " << show(d) << ", host "
                          << show(h);
            return false;
        }
        if (raw(dev::finish(d)) != raw(host::finish(h)) && !test_cuda::same_tree_bits(dev::finish(d), host::finish(h), Op)) {
            ADD_FAILURE() << to_string(Op) << " finish(" << show(d) << ")";
            return false;
        }
        return true;
    };
    for (A a : values)
        for (A b : values)
            if (!check(a, b)) return;
    std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
    for (int i = 0; i < random_pairs; ++i)
        if (!check(values[pick(rng)], values[pick(rng)])) return;
}

template <class A>
void check_all_ops(const std::vector<A>& values, std::uint64_t seed, int random_pairs) {
    SCOPED_TRACE(::testing::Message() << test_cuda::type_name<A>() << ", seed " << seed);
    std::mt19937_64 rng(seed);
    check_op_on<A, reduce_op::sum>(values, rng, random_pairs);
    check_op_on<A, reduce_op::product>(values, rng, random_pairs);
    check_op_on<A, reduce_op::min>(values, rng, random_pairs);
    check_op_on<A, reduce_op::max>(values, rng, random_pairs);
    check_op_on<A, reduce_op::any>(values, rng, random_pairs);
    check_op_on<A, reduce_op::all>(values, rng, random_pairs);
}

/// Special operands of format A (zeros, ±1, the extremes, NaNs with payloads) followed by random encodings.
template <class A>
std::vector<A> float_operands(std::size_t random_count, std::uint64_t seed) {
    const format_info& f = format_traits<A>::info;
    const int frac_bits = f.precision - 1;
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    const std::uint64_t inf = std::uint64_t{f.special_exponent_field()} << frac_bits;
    const std::uint64_t one = std::uint64_t{static_cast<unsigned>(f.emax)} << frac_bits;
    std::vector<std::uint64_t> bits{0, 1, 2, (std::uint64_t{1} << frac_bits) - 1, std::uint64_t{1} << frac_bits,
                                    one, one + 1, one - 1, inf - 1, inf, inf | 1, inf | (std::uint64_t{1} << (frac_bits - 1))};
    const std::size_t specials = bits.size();
    for (std::size_t i = 0; i < specials; ++i) bits.push_back(bits[i] | sign);
    std::mt19937_64 rng(seed);
    for (oracle::term_mix mix : {oracle::term_mix::full_range, oracle::term_mix::clustered, oracle::term_mix::ties}) {
        const auto more = oracle::random_terms(f, random_count / 3, mix, rng);
        bits.insert(bits.end(), more.begin(), more.end());
    }
    return oracle::from_bits<A>(bits);
}

TEST(CudaArith, Float64StepsMatchTheHost) { check_all_ops(float_operands<double>(300, 11), 11, 200000); }
TEST(CudaArith, Float32StepsMatchTheHost) { check_all_ops(float_operands<float>(300, 12), 12, 200000); }
TEST(CudaArith, Float16StepsMatchTheHost) { check_all_ops(float_operands<float16>(600, 13), 13, 400000); }
TEST(CudaArith, Bfloat16StepsMatchTheHost) { check_all_ops(float_operands<bfloat16>(600, 14), 14, 400000); }

template <class I>
std::vector<I> integer_operands(std::uint64_t seed) {
    std::vector<I> v{0, 1, 2, static_cast<I>(-1), std::numeric_limits<I>::max(), std::numeric_limits<I>::min(),
                     static_cast<I>(std::numeric_limits<I>::max() - 1), static_cast<I>(std::numeric_limits<I>::min() + 1)};
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 200; ++i) v.push_back(static_cast<I>(rng()));
    return v;
}

TEST(CudaArith, IntegerStepsMatchTheHost) {
    check_all_ops(integer_operands<int>(21), 21, 50000);
    check_all_ops(integer_operands<unsigned>(22), 22, 50000);
    check_all_ops(integer_operands<long>(23), 23, 50000);
    check_all_ops(integer_operands<unsigned long>(24), 24, 50000);
    check_all_ops(integer_operands<long long>(25), 25, 50000);
    check_all_ops(integer_operands<unsigned long long>(26), 26, 50000);
}

TEST(CudaArith, FloatAccumulationOfNarrowElementsWidensExactly) {
    // (float16, float) and (bfloat16, float): the device widens with integer operations, the host through float.
    for (std::uint32_t b = 0; b < 0x10000; ++b) {
        const float16 h = float16::from_bits(static_cast<std::uint16_t>(b));
        const bfloat16 g = bfloat16::from_bits(static_cast<std::uint16_t>(b));
        ASSERT_EQ(raw(cd::widen<float>(h)), raw(detail::widen<float>(h))) << show(h);
        ASSERT_EQ(raw(cd::widen<float>(g)), raw(detail::widen<float>(g))) << show(g);
    }
}

TEST(CudaArith, APlantedWrongRoundingIsCaught) {
    // Ties away from zero instead of to even: the comparison used above must see the difference. 2049 is a tie
    // between 2048 and 2050 in float16.
    const auto ties_away = [](double v) {
        const std::uint32_t even = cd::round_binary64_to<cd::binary16_layout>(v);
        const std::uint32_t down = cd::round_binary64_to<cd::binary16_layout>(std::nextafter(v, 0.0));
        const std::uint32_t up = cd::round_binary64_to<cd::binary16_layout>(std::nextafter(v, 2 * v));
        return even == down ? up : even;  // a tie rounded to the neighbour away from zero
    };
    const double tie = 2049.0;
    EXPECT_EQ(round_double_to(binary16_info, tie, rounding::to_nearest_even), cd::round_binary64_to<cd::binary16_layout>(tie));
    EXPECT_NE(round_double_to(binary16_info, tie, rounding::to_nearest_even), ties_away(tie));
    const float16 a = float16(2048.0f), b = float16(1.0f);
    EXPECT_EQ(raw(cd::device_step<float16, reduce_op::sum>::combine(a, b)), raw(float16(2048.0f)));
}

}  // namespace
