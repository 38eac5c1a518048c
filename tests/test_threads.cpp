// Parallel exact sums and dot products (sum_options / dot_options threads) give the same bits as one thread, and the
// thread count comes from one resolver (exactref/threads.h) that reads EXACTREF_NUM_THREADS, then OMP_NUM_THREADS, at
// every call and refuses bad values with a message naming the variable.
//
// Inputs are long enough for several chunks (detail::min_chunk_terms each), with NaN, ±Inf and -0.0 planted on and
// around every chunk boundary of 2 .. 8 threads; random data, random bit patterns (subnormals, specials) and all-zero
// spans. Every observable of a reference is compared: exact s and S (decimal), n, the special counts, the signed-zero
// flags, max|x_i|, the dot underflow fields, and s rounded to every format in every mode. Seeds are fixed and printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>  // setenv, unsetenv
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "accumulator_checks.h"
#include "exactref/accumulator.h"
#include "exactref/dot.h"
#include "exactref/reference.h"
#include "exactref/threads.h"

namespace {
using namespace exactref;

constexpr unsigned thread_counts[] = {2, 3, 4, 5, 8};

void expect_same(const superaccumulator& a, const superaccumulator& b) { exactref_test::expect_same_accumulators(a, b); }

void expect_same(const reference& a, const reference& b) {
    expect_same(a.sum, b.sum);
    expect_same(a.abs_sum, b.abs_sum);
    EXPECT_EQ(a.count, b.count);
    EXPECT_EQ(a.term_format, b.term_format);
    EXPECT_EQ(a.is_dot, b.is_dot);
    EXPECT_EQ(a.product_may_underflow, b.product_may_underflow);
    EXPECT_EQ(a.min_product_exponent, b.min_product_exponent);
    EXPECT_EQ(a.has_initial, b.has_initial);
    if (std::isnan(a.largest)) EXPECT_TRUE(std::isnan(b.largest));
    else EXPECT_EQ(a.largest, b.largest);
}

template <class T>
T from_bits(std::uint64_t b) {
    return exactref_test::value_of<T>(b);
}

// Kinds of input: 0 N(0,1)-like values over a few binades, 1 any bit pattern (NaN, Inf, subnormals included),
// 2 wide exponents, 3 only zeros of both signs, 4 only -0.0.
template <class T>
std::vector<T> make_input(std::mt19937_64& rng, std::size_t n, int kind) {
    using tr = format_traits<T>;
    const std::uint64_t sign = std::uint64_t{1} << (tr::info.storage_bits - 1);
    const std::uint64_t frac_mask = (std::uint64_t{1} << (tr::info.precision - 1)) - 1;
    const int bias = tr::info.emax;
    const int exp_span = std::min(40, bias - 1);
    std::vector<T> out(n);
    for (auto& x : out) {
        const std::uint64_t r = rng();
        std::uint64_t b = 0;
        switch (kind) {
            case 0: b = (static_cast<std::uint64_t>(bias + static_cast<int>(r % 4) - 2) << (tr::info.precision - 1)) |
                        ((r >> 8) & frac_mask) | ((r >> 63) ? sign : 0); break;
            case 1: b = r & ((sign << 1) - 1); break;
            case 2: b = (static_cast<std::uint64_t>(bias + static_cast<int>(r % (2 * exp_span + 1)) - exp_span)
                         << (tr::info.precision - 1)) | ((r >> 8) & frac_mask) | ((r >> 63) ? sign : 0); break;
            case 3: b = (r & 1) ? sign : 0; break;
            default: b = sign; break;
        }
        x = from_bits<T>(b);
    }
    return out;
}

// NaN, +Inf, -Inf, -0.0 at and next to the chunk boundaries of every thread count (and at the ends).
template <class T>
void plant_specials(std::vector<T>& xs, std::mt19937_64& rng, int what) {
    using tr = format_traits<T>;
    const std::uint64_t field = std::uint64_t{tr::info.special_exponent_field()} << (tr::info.precision - 1);
    const std::uint64_t sign = std::uint64_t{1} << (tr::info.storage_bits - 1);
    const std::uint64_t nan = field | (std::uint64_t{1} << (tr::info.precision - 2));
    const std::uint64_t choices[] = {nan, field, field | sign, sign};
    const std::size_t n = xs.size();
    for (unsigned w = 2; w <= 8; ++w)
        for (unsigned k = 0; k <= w; ++k) {
            const std::size_t at = std::min(n - 1, n * k / w);
            for (std::size_t i = at > 0 ? at - 1 : 0; i <= std::min(n - 1, at + 1); ++i)
                if (rng() % 3 == 0) xs[i] = from_bits<T>(what < 4 ? choices[what] : choices[rng() % 4]);
        }
}

// Several chunks' worth of terms and a ragged end.
constexpr std::size_t long_n = 5 * detail::min_chunk_terms + 1237;

template <class T>
void check_sum_threads(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int kind = 0; kind <= 4; ++kind)
        for (int specials = -1; specials <= 4; ++specials) {
            if (kind >= 3 && specials >= 0 && specials != 3) continue;
            SCOPED_TRACE("seed " + std::to_string(seed) + " kind " + std::to_string(kind) + " specials " +
                         std::to_string(specials));
            std::vector<T> xs = make_input<T>(rng, long_n, kind);
            if (specials >= 0) plant_specials(xs, rng, specials);
            const std::span<const T> s(xs);
            const reference one = sum(s);
            expect_same(one, sum(s, sum_options{1}));
            for (unsigned t : thread_counts) {
                SCOPED_TRACE("threads " + std::to_string(t));
                expect_same(one, sum(s, sum_options{t}));
            }
            if (::testing::Test::HasFailure()) return;
        }
}

TEST(ParallelSum, Float64SameBitsAsOneThread) { check_sum_threads<double>(101); }
TEST(ParallelSum, Float32SameBitsAsOneThread) { check_sum_threads<float>(102); }
TEST(ParallelSum, Float16SameBitsAsOneThread) { check_sum_threads<float16>(103); }
TEST(ParallelSum, Bfloat16SameBitsAsOneThread) { check_sum_threads<bfloat16>(104); }

// The one-thread sum itself against term-by-term adds (so "the same as one thread" means "exact").
TEST(ParallelSum, OneThreadEqualsTermByTerm) {
    std::mt19937_64 rng(105);
    std::vector<double> xs = make_input<double>(rng, long_n, 1);
    plant_specials(xs, rng, 5);
    superaccumulator s, a;
    double largest = 0;
    for (double x : xs) {
        s.add(x);
        a.add(std::fabs(x));
        if (std::isfinite(x)) largest = std::max(largest, std::fabs(x));
    }
    const reference r = sum(std::span<const double>(xs), sum_options{4});
    expect_same(r.sum, s);
    expect_same(r.abs_sum, a);
    EXPECT_EQ(r.largest, largest);
}

// A planted difference must show: the check above is not vacuous.
TEST(ParallelSum, PlantedChangeIsSeen) {
    std::mt19937_64 rng(106);
    std::vector<double> xs = make_input<double>(rng, long_n, 0);
    const reference before = sum(std::span<const double>(xs), sum_options{4});
    xs[xs.size() / 2] = std::nextafter(xs[xs.size() / 2], 10.0);
    const reference after = sum(std::span<const double>(xs), sum_options{4});
    EXPECT_NE(before.sum.to_decimal(), after.sum.to_decimal());
}

TEST(ParallelSum, EmptyAndShort) {
    const std::vector<float> empty;
    const reference r = sum(std::span<const float>(empty), sum_options{8});
    EXPECT_EQ(r.count, 0u);
    EXPECT_EQ(r.sum.round<float>(), 0.0f);
    EXPECT_FALSE(std::signbit(r.sum.round<float>()));
    const std::vector<float> few{-0.0f, -0.0f, -0.0f};
    EXPECT_TRUE(std::signbit(sum(std::span<const float>(few), sum_options{8}).nearest<float>()));
}

template <class T>
void check_dot_threads(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int kind = 0; kind <= 2; ++kind)
        for (int specials = -1; specials <= 4; ++specials) {
            SCOPED_TRACE("seed " + std::to_string(seed) + " kind " + std::to_string(kind) + " specials " +
                         std::to_string(specials));
            std::vector<T> x = make_input<T>(rng, long_n, kind), y = make_input<T>(rng, long_n, kind);
            if (specials >= 0) plant_specials(x, rng, specials);
            const std::span<const T> sx(x), sy(y);
            const reference one = dot(sx, sy);
            for (unsigned t : thread_counts) {
                SCOPED_TRACE("threads " + std::to_string(t));
                expect_same(one, dot(sx, sy, dot_options{t}));
            }
            // Strided (every other element, the second backwards) and with an initial value.
            const std::size_t half = long_n / 2;
            const reference strided = dot_strided(x.data(), 2, y.data() + 2 * (half - 1), -2, half, std::optional<T>(x[1]));
            for (unsigned t : thread_counts)
                expect_same(strided, dot_strided(x.data(), 2, y.data() + 2 * (half - 1), -2, half,
                                                 std::optional<T>(x[1]), dot_options{t}));
            if (::testing::Test::HasFailure()) return;
        }
}

TEST(ParallelDot, Float64SameBitsAsOneThread) { check_dot_threads<double>(201); }
TEST(ParallelDot, Float32SameBitsAsOneThread) { check_dot_threads<float>(202); }
TEST(ParallelDot, Float16SameBitsAsOneThread) { check_dot_threads<float16>(203); }
TEST(ParallelDot, Bfloat16SameBitsAsOneThread) { check_dot_threads<bfloat16>(204); }

TEST(ParallelDot, LengthsMustMatch) {
    const std::vector<double> x(10), y(11);
    EXPECT_THROW(dot(std::span<const double>(x), std::span<const double>(y), dot_options{2}), std::invalid_argument);
}

// ---- the resolver ---------------------------------------------------------------------------------------------------

// Sets or clears both variables for one test and restores them afterwards.
class ThreadEnv : public ::testing::Test {
protected:
    void SetUp() override { save("EXACTREF_NUM_THREADS", saved_[0]); save("OMP_NUM_THREADS", saved_[1]); }
    void TearDown() override { restore("EXACTREF_NUM_THREADS", saved_[0]); restore("OMP_NUM_THREADS", saved_[1]); }
    static void set(const char* name, const char* value) {
        if (value == nullptr) unsetenv(name);
        else setenv(name, value, 1);
    }
    static std::string error_of(unsigned requested) {
        try {
            detail::resolve_threads(requested);
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "";
    }

private:
    static void save(const char* name, std::optional<std::string>& slot) {
        const char* v = std::getenv(name);
        if (v != nullptr) slot = v;
    }
    static void restore(const char* name, const std::optional<std::string>& slot) {
        set(name, slot ? slot->c_str() : nullptr);
    }
    std::optional<std::string> saved_[2];
};

TEST_F(ThreadEnv, RequestWinsOverEnvironment) {
    set("EXACTREF_NUM_THREADS", "3");
    set("OMP_NUM_THREADS", "5");
    EXPECT_EQ(detail::resolve_threads(7), 7u);
}

TEST_F(ThreadEnv, ExactrefBeforeOmpBeforeHardware) {
    set("EXACTREF_NUM_THREADS", "3");
    set("OMP_NUM_THREADS", "5");
    EXPECT_EQ(detail::resolve_threads(0), 3u);
    set("EXACTREF_NUM_THREADS", nullptr);  // read again at the next call
    EXPECT_EQ(detail::resolve_threads(0), 5u);
    set("OMP_NUM_THREADS", " 6,2 ");  // OpenMP's nested list: the outer level
    EXPECT_EQ(detail::resolve_threads(0), 6u);
    set("OMP_NUM_THREADS", "");  // empty counts as unset
    const unsigned hw = std::thread::hardware_concurrency();
    EXPECT_EQ(detail::resolve_threads(0), hw == 0 ? 1u : hw);
    set("EXACTREF_NUM_THREADS", " 2 ");
    EXPECT_EQ(detail::resolve_threads(0), 2u);
    set("EXACTREF_NUM_THREADS", "+3");  // as libgomp's strtoul takes OMP_NUM_THREADS
    EXPECT_EQ(detail::resolve_threads(0), 3u);
    set("EXACTREF_NUM_THREADS", nullptr);
    set("OMP_NUM_THREADS", " +4,2");
    EXPECT_EQ(detail::resolve_threads(0), 4u);
}

TEST_F(ThreadEnv, BadValuesAreErrorsNamingTheVariable) {
    set("OMP_NUM_THREADS", nullptr);
    for (const char* bad : {"0", "-1", "four", "4x", "1.5", "99999999", "4,2", "+", "++3", "+-3", "+0"}) {
        set("EXACTREF_NUM_THREADS", bad);
        const std::string e = error_of(0);
        EXPECT_NE(e.find("EXACTREF_NUM_THREADS='" + std::string(bad) + "'"), std::string::npos) << e;
        EXPECT_NE(e.find("positive integer"), std::string::npos) << e;
        EXPECT_EQ(error_of(2), "");  // an explicit count never reads the environment
    }
    set("EXACTREF_NUM_THREADS", nullptr);
    for (const char* bad : {"0", "-2", "x,2", ",4"}) {
        set("OMP_NUM_THREADS", bad);
        EXPECT_NE(error_of(0).find("OMP_NUM_THREADS"), std::string::npos) << bad;
    }
    set("OMP_NUM_THREADS", "junk");
    std::vector<double> xs(10);
    EXPECT_THROW(sum(std::span<const double>(xs), sum_options{}), std::invalid_argument);
    EXPECT_NO_THROW(sum(std::span<const double>(xs)));  // one thread: the environment is not read
}

TEST_F(ThreadEnv, ParallelPathsUseTheEnvironment) {
    // Same bits whatever the variable says; a bad value reaches the caller from every parallel entry point.
    std::mt19937_64 rng(301);
    const std::vector<double> xs = make_input<double>(rng, long_n, 2);
    const reference one = sum(std::span<const double>(xs));
    for (const char* v : {"1", "2", "4"}) {
        set("EXACTREF_NUM_THREADS", v);
        expect_same(one, sum(std::span<const double>(xs), sum_options{}));
    }
    set("EXACTREF_NUM_THREADS", "0");
    EXPECT_THROW(dot(std::span<const double>(xs), std::span<const double>(xs), dot_options{}), std::invalid_argument);
}

}  // namespace
