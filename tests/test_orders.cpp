// The comparison orders of orders.h: bit for bit against literal versions on the oracle's arithmetic (four formats,
// float accumulation of float16/bfloat16), against numpy's own results (values computed with numpy 2.4 outside this
// code and written here), against the left folds of shared/data/gauss10k_orders.txt, and their special values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "exactref/io.h"
#include "exactref/orders.h"
#include "exactref/reference.h"
#include "exactref/ulp.h"
#include "oracle.h"

namespace {
using namespace exactref;

// ---- the literal orders on oracle arithmetic (raw bits of the accumulation format) ---------------------------------

struct spec_arith {
    const format_info& f;
    std::uint64_t add(std::uint64_t a, std::uint64_t b) const { return oracle::add_rounded(a, b, f); }
    std::uint64_t neg(std::uint64_t a) const { return a ^ oracle::zero_bits(f, true); }
    bool finite(std::uint64_t a) const {
        const oracle::parts p = oracle::decode(f, a);
        return !p.nan && !p.inf;
    }
    // |a| >= |b| on exact values (GMP)
    bool magnitude_ge(std::uint64_t a, std::uint64_t b) const {
        return abs(oracle::gmp_value(a, f)) >= abs(oracle::gmp_value(b, f));
    }
};

template <class T>
std::vector<std::uint64_t> widened(const std::vector<T>& xs, const format_info& to) {
    std::vector<std::uint64_t> out;
    for (const T& x : xs) {
        const std::uint64_t b = format_traits<T>::to_bits(x);
        if (to.id == format_traits<T>::info.id) {
            out.push_back(b);
            continue;
        }
        const oracle::parts p = oracle::decode(format_traits<T>::info, b);
        if (p.nan) out.push_back(oracle::nan_bits(to));
        else if (p.inf) out.push_back(oracle::inf_bits(to, p.negative));
        else if (p.significand == 0) out.push_back(oracle::zero_bits(to, p.negative));
        else out.push_back(oracle::mpfr_round_bits(oracle::mpfr_value(b, format_traits<T>::info).get(), to,
                                                   rounding::to_nearest_even));
    }
    return out;
}

std::uint64_t spec_fold(const spec_arith& a, const std::vector<std::uint64_t>& x) {
    if (x.empty()) return oracle::zero_bits(a.f, false);
    std::uint64_t s = x[0];
    for (std::size_t i = 1; i < x.size(); ++i) s = a.add(s, x[i]);
    return s;
}

// Neumaier (1974): t = s + x; c += |s| >= |x| ? (s - t) + x : (x - t) + s; s = t; result s + c.
std::uint64_t spec_neumaier(const spec_arith& a, const std::vector<std::uint64_t>& x) {
    if (x.empty()) return oracle::zero_bits(a.f, false);
    std::uint64_t s = x[0], c = oracle::zero_bits(a.f, true);
    for (std::size_t i = 1; i < x.size(); ++i) {
        const std::uint64_t t = a.add(s, x[i]);
        const bool s_big = !a.finite(s) || !a.finite(x[i]) || a.magnitude_ge(s, x[i]);  // non-finite: s wins anyway
        c = a.add(c, s_big ? a.add(a.add(s, a.neg(t)), x[i]) : a.add(a.add(x[i], a.neg(t)), s));
        s = t;
    }
    if (!a.finite(s)) return s;
    return (c & ~(std::uint64_t{1} << (a.f.storage_bits - 1))) == 0 ? s : a.add(s, c);  // s + 0 is s, -0.0 too
}

// numpy's pairwise_sum (loops_utils.h.src) over x[lo, lo + n).
std::uint64_t spec_pairwise(const spec_arith& a, const std::vector<std::uint64_t>& x, std::size_t lo, std::size_t n) {
    if (n < 8) {
        std::uint64_t res = oracle::zero_bits(a.f, true);
        for (std::size_t i = 0; i < n; ++i) res = a.add(res, x[lo + i]);
        return res;
    }
    if (n <= 128) {
        std::uint64_t r[8];
        for (int j = 0; j < 8; ++j) r[j] = x[lo + j];
        std::size_t i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; ++j) r[j] = a.add(r[j], x[lo + i + j]);
        std::uint64_t res = a.add(a.add(a.add(r[0], r[1]), a.add(r[2], r[3])), a.add(a.add(r[4], r[5]), a.add(r[6], r[7])));
        for (; i < n; ++i) res = a.add(res, x[lo + i]);
        return res;
    }
    std::size_t n2 = n / 2;
    n2 -= n2 % 8;
    return a.add(spec_pairwise(a, x, lo, n2), spec_pairwise(a, x, lo + n2, n - n2));
}

template <class Acc>
std::uint64_t bits_of(Acc v) {
    return static_cast<std::uint64_t>(format_traits<Acc>::to_bits(v));
}

bool same_bits(const format_info& f, std::uint64_t a, std::uint64_t b) {
    return a == b || (oracle::is_nan_bits(f, a) && oracle::is_nan_bits(f, b));
}

template <class T, class Acc>
void check_orders(std::uint64_t seed) {
    const format_info& f = format_traits<Acc>::info;
    const spec_arith arith{f};
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> lengths{0, 1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 136, 255, 256, 257, 1000, 4099};
    for (int i = 0; i < 4; ++i) lengths.push_back(std::uniform_int_distribution<std::size_t>(1, 6000)(rng));
    for (std::size_t n : lengths) {
        for (oracle::term_mix mix : {oracle::term_mix::clustered, oracle::term_mix::cancelling, oracle::term_mix::ties,
                                     oracle::term_mix::specials, oracle::term_mix::full_range}) {
            const std::uint64_t case_seed = rng();
            std::mt19937_64 case_rng(case_seed);
            const auto xs = oracle::from_bits<T>(oracle::random_terms(format_traits<T>::info, n, mix, case_rng));
            SCOPED_TRACE("n=" + std::to_string(n) + " mix=" + oracle::to_string(mix) + " seed=" +
                         std::to_string(case_seed) + " " + format_traits<T>::info.name.data() + "->" + f.name.data());
            const auto w = widened(xs, f);
            const Acc fold = fold_sum<Acc>(xs), kahan = kahan_sum<Acc>(xs), pairwise = pairwise_sum<Acc>(xs);
            const std::uint64_t want_fold = spec_fold(arith, w);
            const std::uint64_t want_kahan = spec_neumaier(arith, w);
            // np.add.reduce: its output starts at the identity +0.0, and the reduce loop adds the pairwise sum to it.
            const std::uint64_t positive_zero = oracle::zero_bits(f, false);
            const std::uint64_t want_pairwise = n == 0 ? positive_zero : arith.add(positive_zero, spec_pairwise(arith, w, 0, n));
            EXPECT_TRUE(same_bits(f, bits_of(fold), want_fold))
                << "fold " << to_hex_string(fold) << " vs " << to_hex_string(f, want_fold);
            EXPECT_TRUE(same_bits(f, bits_of(kahan), want_kahan))
                << "kahan " << to_hex_string(kahan) << " vs " << to_hex_string(f, want_kahan);
            EXPECT_TRUE(same_bits(f, bits_of(pairwise), want_pairwise))
                << "pairwise " << to_hex_string(pairwise) << " vs " << to_hex_string(f, want_pairwise);
        }
    }
}

TEST(OrdersSpec, Float64) { check_orders<double, double>(0x0d1); }
TEST(OrdersSpec, Float32) { check_orders<float, float>(0x0d2); }
TEST(OrdersSpec, Float16) { check_orders<float16, float16>(0x0d3); }
TEST(OrdersSpec, Bfloat16) { check_orders<bfloat16, bfloat16>(0x0d4); }
TEST(OrdersSpec, Float16WithFloat32Accumulation) { check_orders<float16, float>(0x0d5); }
TEST(OrdersSpec, Bfloat16WithFloat32Accumulation) { check_orders<bfloat16, float>(0x0d6); }

// ---- numpy's own results --------------------------------------------------------------------------------------------
// Computed with numpy 2.4.6 (np.add.reduce on contiguous arrays) from the formulas below, outside this code base.

std::uint64_t hash32(std::uint64_t i) { return (i * 2654435761u) % (std::uint64_t{1} << 32); }

TEST(OrdersNumpy, PairwiseSumIsNumpysSum) {
    {  // 1.0 / np.arange(1, 10**7 + 1)
        std::vector<double> x(10000000);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 / static_cast<double>(i + 1);
        EXPECT_EQ(to_hex_string(pairwise_sum(x)), "0x1.0b1ffecf8e7b9p+4");
    }
    {  // k / 2**32 - 0.5, k = i * 2654435761 mod 2**32, i < 1000003
        std::vector<double> x(1000003);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(hash32(i)) / 4294967296.0 - 0.5;
        EXPECT_EQ(pairwise_sum(x), -0x1.e0f1ce9ap-1);
    }
    {  // np.float32(1) / np.arange(1, 10**6 + 1, dtype=np.float32)
        std::vector<float> x(1000000);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0f / static_cast<float>(i + 1);
        EXPECT_EQ(pairwise_sum(x), 0x1.cc9134p+3f);
    }
    {  // ((k >> 8) / 2**24 - 0.5).astype(np.float32), i < 123457
        std::vector<float> x(123457);
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = static_cast<float>(static_cast<double>(hash32(i) >> 8) / 16777216.0 - 0.5);
        EXPECT_EQ(pairwise_sum(x), -0x1.1f6f7cp-1f);
    }
    {  // ((k >> 22) / 2**10 - 0.5).astype(np.float16), i < 100003: numpy sums float16 pairwise in float, rounds once
        std::vector<float16> x(100003);
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = float16(static_cast<float>(static_cast<double>(hash32(i) >> 22) / 1024.0 - 0.5));
        EXPECT_EQ(float16(pairwise_sum<float>(x)).bits, 53796);  // -0x1.89p+5 = -49.125
    }
    // k / 2**32 - 0.5 + 1e-3 * (i % 7) for lengths around numpy's block boundaries
    const std::pair<std::size_t, double> small[] = {
        {5, -0x1.3d178bb428f5cp-2},  {8, -0x1.591cde3591687p-1},  {9, -0x1.d488c2dbe76c8p-3},
        {127, -0x1.db487b48e5610p-3}, {128, -0x1.ed113b16872bcp-3}, {129, -0x1.42c478e872afep-1},
        {1000, 0x1.7c981ee30e55cp+1}, {1001, 0x1.41b6683cf1a9cp+1}};
    for (const auto& [n, want] : small) {
        std::vector<double> x(n);
        for (std::size_t i = 0; i < n; ++i) {
            const double base = static_cast<double>(hash32(i)) / 4294967296.0 - 0.5;
            const double bump = 1e-3 * static_cast<double>(i % 7);
            x[i] = base + bump;
        }
        EXPECT_EQ(pairwise_sum(x), want) << "n=" << n;
    }
}

// Signed zeros as numpy gives them: np.add.reduce starts its output at the add ufunc's identity +0.0 and adds the
// pairwise sum to it, so an all -0.0 array sums to +0.0 for every length, where the pairwise sum alone (short runs
// folded from -0.0) would keep -0.0. Expected values checked against numpy 2.4's np.add.reduce (numpy 2.4.6, float64,
// float32 and float16, each length below, the odd element at the front, the middle and the end).
template <class Acc, class T>
Acc in_acc(T x) {  // exact: the same format, or float16 to float
    if constexpr (std::is_same_v<Acc, T>) return x;
    else return static_cast<Acc>(x);
}

template <class T, class Acc>
void expect_numpy_signed_zeros(T minus_zero, T plus_zero, T minus_tiny, T minus_one_and_a_half) {
    for (std::size_t n : {1, 2, 5, 7, 8, 9, 16, 20, 127, 128, 129, 200, 300, 1000, 4099}) {
        SCOPED_TRACE(std::string(format_traits<T>::info.name) + " n=" + std::to_string(n));
        std::vector<T> x(n, minus_zero);
        EXPECT_EQ(bits_of(pairwise_sum<Acc>(x)), bits_of(Acc{}));  // numpy: 0.0 (the sign bit clear)
        EXPECT_EQ(bits_of(fold_sum<Acc>(x)), bits_of(negate(Acc{})));  // the left fold keeps -0.0 (IEEE: -0 + -0)
        for (std::size_t pos : {std::size_t{0}, n / 2, n - 1}) {
            std::vector<T> y = x;
            y[pos] = plus_zero;
            EXPECT_EQ(bits_of(pairwise_sum<Acc>(y)), bits_of(Acc{})) << "+0.0 at " << pos;
            y[pos] = minus_tiny;  // numpy: -smallest_subnormal, sign kept
            EXPECT_EQ(bits_of(pairwise_sum<Acc>(y)), bits_of(in_acc<Acc>(minus_tiny))) << "-tiny at " << pos;
            y[pos] = minus_one_and_a_half;
            EXPECT_EQ(bits_of(pairwise_sum<Acc>(y)), bits_of(in_acc<Acc>(minus_one_and_a_half))) << "-1.5 at " << pos;
        }
    }
}

TEST(OrdersNumpy, SignedZeros) {
    expect_numpy_signed_zeros<double, double>(-0.0, 0.0, -std::numeric_limits<double>::denorm_min(), -1.5);
    expect_numpy_signed_zeros<float, float>(-0.0f, 0.0f, -std::numeric_limits<float>::denorm_min(), -1.5f);
    // numpy sums float16 pairwise in float (HALF_add), then rounds the float to float16
    expect_numpy_signed_zeros<float16, float>(float16::from_bits(0x8000), float16::from_bits(0x0000),
                                              float16::from_bits(0x8001), float16::from_bits(0xBE00));
}

// The left-fold value for the harmonic series, and the gauss10k left folds of shared/data/README.md.
TEST(OrdersKnownValues, HarmonicLeftFold) {
    std::vector<double> x(10000000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 / static_cast<double>(i + 1);
    EXPECT_EQ(to_shortest_string(fold_sum(x)), "16.695311365857272");
}

TEST(OrdersKnownValues, Gauss10kLeftFoldsInFivePermutedOrders) {
    std::ifstream values_file(std::string(EXACTREF_SHARED_DATA) + "/gauss10k_f32.txt");
    ASSERT_TRUE(values_file) << "missing " << EXACTREF_SHARED_DATA << "/gauss10k_f32.txt";
    const data_array data = read_text(values_file, dtype::float32, "gauss10k_f32.txt");
    const auto& xs = std::get<std::vector<float>>(data.values);
    ASSERT_EQ(xs.size(), 10000u);
    std::ifstream orders_file(std::string(EXACTREF_SHARED_DATA) + "/gauss10k_orders.txt");
    ASSERT_TRUE(orders_file);
    const char* expected[] = {"0x1.e9ab46p+4", "0x1.e9ab26p+4", "0x1.e9ab46p+4", "0x1.e9aae2p+4", "0x1.e9abb4p+4"};
    std::string line;
    int k = 0;
    while (std::getline(orders_file, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream in(line);
        std::vector<float> permuted;
        std::size_t idx;
        while (in >> idx) permuted.push_back(xs.at(idx));
        ASSERT_EQ(permuted.size(), 10000u);
        ASSERT_LT(k, 5);
        EXPECT_EQ(to_hex_string(fold_sum(permuted)), expected[k]) << "order " << k;
        ++k;
    }
    EXPECT_EQ(k, 5);
    // Neumaier on the original order lands on the correctly rounded sum 0x1.e9ab0ep+4 (README), where every plain
    // left fold above missed it by 9 to 79 ulps.
    EXPECT_EQ(to_hex_string(kahan_sum(xs)), "0x1.e9ab0ep+4");
}

TEST(OrdersKnownValues, NeumaierRecoversWhatKahanLoses) {
    const std::vector<double> x{1.0, 1e100, 1.0, -1e100};
    EXPECT_EQ(kahan_sum(x), 2.0);
    EXPECT_EQ(fold_sum(x), 0.0);
    EXPECT_EQ(pairwise_sum(x), 0.0);
    const std::vector<float16> h{float16(2048.0f), float16(1.0f), float16(1.0f)};
    EXPECT_EQ(static_cast<float>(fold_sum(h)), 2048.0f);   // 2049 rounds to even twice
    EXPECT_EQ(static_cast<float>(kahan_sum(h)), 2050.0f);  // the lost halves are recovered
    EXPECT_EQ(fold_sum<float>(h), 2050.0f);                // float accumulation has room
}

TEST(OrdersSpecialValues, EmptyZerosInfNaN) {
    const std::vector<double> none;
    EXPECT_FALSE(std::signbit(fold_sum(none)));
    EXPECT_FALSE(std::signbit(kahan_sum(none)));
    EXPECT_FALSE(std::signbit(pairwise_sum(none)));
    const std::vector<double> neg_zero{-0.0};
    EXPECT_TRUE(std::signbit(fold_sum(neg_zero)));
    EXPECT_TRUE(std::signbit(kahan_sum(neg_zero)));
    for (std::size_t n : {2u, 3u, 17u}) {  // the compensation becomes +0.0 from the second term on
        const std::vector<double> zeros(n, -0.0);
        EXPECT_TRUE(std::signbit(kahan_sum(zeros))) << n << " times -0.0";
        EXPECT_TRUE(std::signbit(fold_sum(zeros))) << n << " times -0.0";
    }
    EXPECT_FALSE(std::signbit(pairwise_sum(neg_zero)));  // numpy's identity +0.0 (OrdersNumpy.SignedZeros)
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> with_inf{1.0, inf, 2.0};
    EXPECT_EQ(kahan_sum(with_inf), inf);  // the compensation's Inf - Inf is dropped
    EXPECT_EQ(fold_sum(with_inf), inf);
    EXPECT_EQ(pairwise_sum(with_inf), inf);
    const std::vector<double> both{inf, -inf};
    EXPECT_TRUE(std::isnan(kahan_sum(both)));
    const std::vector<float> with_nan{1.0f, std::nanf(""), 2.0f};
    EXPECT_TRUE(std::isnan(kahan_sum(with_nan)));
    EXPECT_TRUE(std::isnan(pairwise_sum(with_nan)));
}

// Neumaier's bound u·|s| + O(n·u²)·Σ|x|: on well-conditioned data the result is within one ulp of the exact sum, where
// a left fold of the same data is hundreds of ulps away (planted contrast: the check would catch a plain fold).
TEST(OrdersAccuracy, CompensatedSumIsWithinAnUlp) {
    std::mt19937_64 rng(0xacc);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> x(200000);
    for (auto& v : x) v = u(rng);
    const reference ref = sum(x);
    EXPECT_LE(std::abs(ulp_error(kahan_sum(x), ref)), 1.0);
    EXPECT_GT(std::abs(ulp_error(fold_sum(x), ref)), 10.0);
}

}  // namespace
