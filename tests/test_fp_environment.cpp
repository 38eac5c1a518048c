// The library decodes with integers only, so nothing may change when another part of the process sets the rounding
// mode or FTZ/DAZ (shared/DESIGN.md §2). Every expected value is computed first in the default environment (and
// checked there against the MPFR and Boost oracles); then each of the four rounding modes, with FTZ/DAZ off and on,
// is set by the test and every result must come out bit for bit the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "exactref/accumulator.h"
#include "exactref/covers.h"
#include "exactref/format.h"
#include "exactref/reference.h"
#include "exactref/standard.h"
#include "oracle.h"

namespace {

using namespace exactref;
namespace orc = exactref::oracle;

constexpr rounding all_modes[] = {rounding::to_nearest_even, rounding::toward_zero, rounding::upward,
                                  rounding::downward};
const format_info* const all_formats[] = {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info};

// Everything the library computes from one input, as bits and strings.
struct results {
    std::vector<std::uint64_t> rounded;  // span path then term path: 4 formats x 4 modes each
    std::vector<std::uint64_t> other;    // to_dyadic words, compare() results, conversions
    std::vector<std::uint64_t> verdicts; // per standard: covered, verdict.bound, verdict.error, bound() (double bits)
    std::vector<std::string> text;       // to_decimal of each path, bound() digits
    friend bool operator==(const results&, const results&) = default;
};

// Where two results differ first, in words.
std::string first_difference(const results& a, const results& b) {
    static const char* const paths[] = {"add(span)", "add(T)", "merge", "add_abs", "add_product", "negate"};
    for (std::size_t i = 0; i < std::min(a.rounded.size(), b.rounded.size()); ++i)
        if (a.rounded[i] != b.rounded[i]) {
            const format_info& f = *all_formats[(i / 4) % 4];
            return std::string(paths[i / 16]) + " round_bits(" + std::string(f.name) + ", " +
                   std::string(to_string(all_modes[i % 4])) + "): " + orc::describe(a.rounded[i], f) + " vs " +
                   orc::describe(b.rounded[i], f);
        }
    for (std::size_t i = 0; i < std::min(a.text.size(), b.text.size()); ++i)
        if (a.text[i] != b.text[i]) return "text " + std::to_string(i) + ": " + a.text[i] + " vs " + b.text[i];
    static const char* const models[] = {"any_order", "tree(3)", "exact", "faithful"};
    static const char* const fields[] = {"covered", "verdict.bound", "verdict.error", "bound()"};
    for (std::size_t i = 0; i < std::min(a.verdicts.size(), b.verdicts.size()); ++i)
        if (a.verdicts[i] != b.verdicts[i])
            return std::string(models[i / 4]) + " " + fields[i % 4] + ": " + orc::describe(a.verdicts[i], binary64_info) +
                   " vs " + orc::describe(b.verdicts[i], binary64_info);
    for (std::size_t i = 0; i < std::min(a.other.size(), b.other.size()); ++i)
        if (a.other[i] != b.other[i])
            return "value " + std::to_string(i) + " (to_dyadic words, compare): " + std::to_string(a.other[i]) +
                   " vs " + std::to_string(b.other[i]);
    return "sizes differ";
}

template <class T>
results compute(const std::vector<std::uint64_t>& bits) {
    const std::vector<T> xs = orc::from_bits<T>(bits);
    const std::span<const T> span(xs);
    results r;
    superaccumulator fast, slow, left, right, abs_sum, products;
    fast.add(span);
    for (const T& x : xs) slow.add(x);
    const std::size_t half = xs.size() / 3;
    left.add(span.subspan(0, half));
    right.add(span.subspan(half));
    left.merge(right);
    abs_sum.add_abs(span);
    for (std::size_t i = 0; i + 1 < xs.size(); i += 2) products.add_product(xs[i], xs[i + 1]);
    superaccumulator negated = fast;
    negated.negate();
    for (const superaccumulator* acc : {&fast, &slow, &left, &abs_sum, &products, &negated}) {
        for (const format_info* f : all_formats)
            for (rounding mode : all_modes) r.rounded.push_back(acc->round_bits(*f, mode));
        r.text.push_back(acc->to_decimal());
        const dyadic d = acc->to_dyadic();
        r.other.push_back(d.negative);
        r.other.push_back(static_cast<std::uint64_t>(d.exponent));
        r.other.insert(r.other.end(), d.magnitude.begin(), d.magnitude.end());
    }
    for (const T& x : xs) r.other.push_back(static_cast<std::uint64_t>(fast.compare(x) + 1));
    // The reference and covers(): the verdict and the bound (doubles for display, rounded upward by the library).
    const reference ref = sum(span);
    const std::uint64_t nearest = format_traits<T>::to_bits(ref.template nearest<T>());
    for (const standard& model : {any_order(), tree(3), exact(), faithful()}) {
        const verdict v = covers_bits(format_traits<T>::info, nearest, ref, model);
        r.verdicts.push_back(v.covered);
        r.verdicts.push_back(std::bit_cast<std::uint64_t>(v.bound));
        r.verdicts.push_back(std::bit_cast<std::uint64_t>(v.error));
        r.verdicts.push_back(std::bit_cast<std::uint64_t>(bound(ref, model, format_traits<T>::info)));
        r.text.push_back(v.exact);
        r.text.push_back(v.result);
    }
    return r;
}

// Format conversions: every 16-bit pattern both ways, and a sample of doubles and floats (subnormals included).
results conversions(const std::vector<std::uint64_t>& doubles) {
    results r;
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const auto h = static_cast<std::uint16_t>(b);
        const float fh = static_cast<float>(float16::from_bits(h));
        const float fb = static_cast<float>(bfloat16::from_bits(h));
        r.other.push_back(std::bit_cast<std::uint32_t>(fh));
        r.other.push_back(std::bit_cast<std::uint32_t>(fb));
        r.other.push_back(float16(std::bit_cast<float>(b << 13)).bits);  // floats of every magnitude class
        r.other.push_back(bfloat16(std::bit_cast<float>(b << 15 | 0x4321)).bits);
        r.other.push_back(std::bit_cast<std::uint64_t>(to_double_exact(binary16_info, b)));
        r.other.push_back(std::bit_cast<std::uint64_t>(to_double_exact(bfloat16_info, b)));
    }
    for (std::uint64_t d : doubles) {
        for (const format_info* f : all_formats)
            for (rounding mode : all_modes) r.other.push_back(round_double_to(*f, std::bit_cast<double>(d), mode));
        const decoded x = decode_bits(binary64_info, d);
        r.other.insert(r.other.end(), {x.negative, x.is_nan, x.is_inf, x.significand,
                                       static_cast<std::uint64_t>(x.exponent)});
    }
    return r;
}

// The inputs: random mixes (subnormals, ties, cancellation, specials) of random length, across the fast-path
// threshold and block boundaries.
template <class T>
std::vector<std::vector<std::uint64_t>> inputs(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::vector<std::uint64_t>> out;
    for (int i = 0; i < 240; ++i) {
        const orc::term_mix mix = orc::all_term_mixes[i % std::size(orc::all_term_mixes)];
        const std::size_t n = i % 40 == 0 ? 4100 : (i % 4 == 0 ? 64 + rng() % 200 : rng() % 40);
        out.push_back(orc::random_terms(format_traits<T>::info, n, mix, rng));
    }
    return out;
}

// The environments under test; the default one is checked first.
struct environment {
    rounding mode;
    bool ftz_daz;
};
std::vector<environment> environments() {
    std::vector<environment> out;
    for (bool ftz : {false, true}) {
        if (ftz && !orc::ftz_daz_supported()) continue;
        for (rounding mode : all_modes) out.push_back({mode, ftz});
    }
    return out;
}
std::string name(const environment& e) {
    return std::string(to_string(e.mode)) + (e.ftz_daz ? " with FTZ/DAZ" : "");
}

// The guard really sets what it says: host arithmetic must show the mode and FTZ/DAZ (else the tests below would
// pass vacuously).
void expect_environment_is_active(const environment& e) {
    EXPECT_EQ(orc::current_rounding_mode(), e.mode);
    EXPECT_EQ(orc::ftz_daz_enabled(), e.ftz_daz);
    volatile double one = 1.0, tiny = 0x1p-60;
    const double up = one + tiny, down = -one - tiny;
    const bool away_up = e.mode == rounding::upward, away_down = e.mode == rounding::downward;
    EXPECT_EQ(up, away_up ? 1.0 + 0x1p-52 : 1.0) << name(e);
    EXPECT_EQ(down, away_down ? -1.0 - 0x1p-52 : -1.0) << name(e);
    volatile float subnormal = 0x1p-140f, unit = 1.0f;
    const float product = subnormal * unit;
    EXPECT_EQ(product, e.ftz_daz ? 0.0f : 0x1p-140f) << name(e) << ": DAZ reads subnormals as zero";
}

template <class T>
void same_results_in_every_environment(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    const auto data = inputs<T>(seed);
    std::vector<results> expected;
    ASSERT_EQ(orc::current_rounding_mode(), rounding::to_nearest_even);
    ASSERT_FALSE(orc::ftz_daz_enabled());
    for (std::size_t i = 0; i < data.size(); ++i) {
        expected.push_back(compute<T>(data[i]));
        // In the default environment the library agrees with both oracles (test_accumulator checks far more).
        const orc::mpfr_exact m = orc::mpfr_sum(data[i], f);
        const orc::boost_exact b = orc::boost_sum(data[i], f);
        for (rounding mode : all_modes) {
            const std::uint64_t want = m.round_bits(f, mode);
            ASSERT_EQ(b.round_bits(f, mode), want);
            const std::size_t format_index = static_cast<std::size_t>(
                std::find(std::begin(all_formats), std::end(all_formats), &f) - std::begin(all_formats));
            const std::uint64_t got = expected.back().rounded[format_index * 4 + static_cast<std::size_t>(mode)];
            if (orc::is_nan_bits(f, want)) ASSERT_TRUE(orc::is_nan_bits(f, got));
            else ASSERT_EQ(got, want) << "seed " << seed << " input " << i << " " << to_string(mode);
        }
    }
    for (const environment& e : environments()) {
        std::vector<results> got;
        {
            orc::fp_environment_guard guard(e.mode, e.ftz_daz);
            expect_environment_is_active(e);
            for (const auto& bits : data) got.push_back(compute<T>(bits));
        }
        for (std::size_t i = 0; i < data.size(); ++i)
            ASSERT_TRUE(got[i] == expected[i]) << f.name << " input " << i << " (seed " << seed << ", "
                                               << orc::to_string(orc::all_term_mixes[i % 6]) << ", n = "
                                               << data[i].size() << ") differs under " << name(e) << ": "
                                               << first_difference(got[i], expected[i]) << " (then default)";
    }
    EXPECT_EQ(orc::current_rounding_mode(), rounding::to_nearest_even) << "the guard restores the mode";
    EXPECT_FALSE(orc::ftz_daz_enabled()) << "the guard restores FTZ/DAZ";
}

TEST(FpEnvironment, Float64SameResults) { same_results_in_every_environment<double>(5001); }
TEST(FpEnvironment, Float32SameResults) { same_results_in_every_environment<float>(5002); }
TEST(FpEnvironment, Float16SameResults) { same_results_in_every_environment<float16>(5003); }
TEST(FpEnvironment, Bfloat16SameResults) { same_results_in_every_environment<bfloat16>(5004); }

TEST(FpEnvironment, ConversionsSameResults) {
    std::mt19937_64 rng(5005);
    std::vector<std::uint64_t> doubles;
    for (int i = 0; i < 20000; ++i) {
        std::uint64_t d = rng();
        if (i % 2) d &= 0x800F'FFFF'FFFF'FFFFull;  // subnormal doubles
        doubles.push_back(d);
    }
    const results expected = conversions(doubles);
    for (const environment& e : environments()) {
        results got;
        {
            orc::fp_environment_guard guard(e.mode, e.ftz_daz);
            expect_environment_is_active(e);
            got = conversions(doubles);
        }
        ASSERT_EQ(got.other.size(), expected.other.size());
        for (std::size_t i = 0; i < got.other.size(); ++i)
            ASSERT_EQ(got.other[i], expected.other[i]) << "conversion result " << i << " differs under " << name(e);
    }
}

// The guard must notice a planted difference: a host computation that depends on the environment does differ.
TEST(FpEnvironment, HostArithmeticDoesChange) {
    volatile float a = 0x1p-130f, b = 3.0f;
    const float default_result = a * b;
    for (const environment& e : environments()) {
        orc::fp_environment_guard guard(e.mode, e.ftz_daz);
        const float r = a * b;
        if (e.ftz_daz) EXPECT_NE(std::bit_cast<std::uint32_t>(r), std::bit_cast<std::uint32_t>(default_result));
    }
    EXPECT_EQ(std::bit_cast<std::uint32_t>(static_cast<float>(a * b)), std::bit_cast<std::uint32_t>(default_result));
}

}  // namespace
