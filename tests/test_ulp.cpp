// ulp_distance and abs_ulp_distance (ulp.h) against distances counted by GMP from the values alone: the position of a
// value x >= 0 among the values of a format (p, emin) is x / 2^(emin-p+1) below 2^emin, and
// 2^(p-1)·(k - emin + 1) + (x - 2^k) / 2^(k-p+1) in the binade [2^k, 2^(k+1)); +Inf is one past max. Every pair of
// the extremes (±0, subnormals, ±min normal, ±1, ±max, ±Inf, the binary64 pair whose distance is exactly 2^63 - 1) and
// of random values, in every format: an int64 result equals the GMP distance, a distance beyond int64 throws
// std::overflow_error, and abs_ulp_distance is exact everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>  // std::snprintf
#include <gmpxx.h>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "exactref/format.h"
#include "exactref/ulp.h"
#include "oracle.h"

namespace {
using namespace exactref;
namespace orc = exactref::oracle;

mpz_class from_u64(std::uint64_t v) { return mpz_class(static_cast<unsigned long>(v)); }
mpz_class from_i64(std::int64_t v) { return mpz_class(static_cast<long>(v)); }

mpq_class two_pow(long e) {
    mpq_class q(1);
    if (e >= 0) mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(e));
    else mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(-e));
    return q;
}

// The position of a finite x >= 0 among the values of f, from its value (a canonical dyadic rational) only.
mpz_class position_of_magnitude(const mpq_class& x, const format_info& f) {
    if (x == 0) return 0;
    const long p = f.precision, emin = f.emin;
    const long den_log2 = static_cast<long>(mpz_sizeinbase(x.get_den().get_mpz_t(), 2)) - 1;  // den = 2^den_log2
    const long k = static_cast<long>(mpz_sizeinbase(x.get_num().get_mpz_t(), 2)) - 1 - den_log2;  // 2^k <= x
    mpq_class steps;
    if (k < emin) {
        steps = x / two_pow(emin - p + 1);
    } else {
        steps = mpq_class(mpz_class(1) << static_cast<mp_bitcnt_t>(p - 1)) * (k - emin + 1) +
                (x - two_pow(k)) / two_pow(k - p + 1);
    }
    EXPECT_EQ(steps.get_den(), 1) << "not a value of " << f.name << ": " << x.get_str();
    return steps.get_num();
}

// The signed position of any non-NaN value: -position(|x|) for negative x, +Inf one past max.
mpz_class gmp_position(std::uint64_t bits, const format_info& f) {
    const orc::parts d = orc::decode(f, bits);
    if (d.inf) {
        const mpq_class max = mpq_class((mpz_class(1) << static_cast<mp_bitcnt_t>(f.precision)) - 1) *
                              two_pow(f.emax - f.precision + 1);
        const mpz_class past_max = position_of_magnitude(max, f) + 1;
        return d.negative ? mpz_class(-past_max) : past_max;
    }
    const mpq_class x = orc::gmp_value(bits, f);
    const mpz_class position = position_of_magnitude(abs(x), f);
    return x < 0 ? mpz_class(-position) : position;
}

// ±0, the smallest and largest subnormals, the smallest normal, 1 and its successor, 2, 3, max, Inf (each with both
// signs), and random finite values (seeded).
std::vector<std::uint64_t> test_values(const format_info& f, std::uint64_t seed) {
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    const int fraction_bits = f.precision - 1;
    const std::uint64_t one = std::uint64_t(f.emax) << fraction_bits;  // biased exponent emax = bias: the value 1
    const std::uint64_t two = one + (std::uint64_t{1} << fraction_bits);
    std::vector<std::uint64_t> magnitudes{0, 1, (std::uint64_t{1} << fraction_bits) - 1,
                                          std::uint64_t{1} << fraction_bits, one, one + 1, two,
                                          two + (std::uint64_t{1} << (fraction_bits - 1)),  // 3
                                          orc::max_bits(f, false), orc::inf_bits(f, false)};
    std::mt19937_64 rng(seed);
    const std::uint64_t mask = f.storage_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << f.storage_bits) - 1;
    while (magnitudes.size() < 24) {
        const std::uint64_t b = rng() & mask & (sign - 1);
        if (!orc::is_nan_bits(f, b) && b != orc::inf_bits(f, false)) magnitudes.push_back(b);
    }
    std::vector<std::uint64_t> out;
    for (std::uint64_t m : magnitudes) {
        out.push_back(m);
        out.push_back(m | sign);
    }
    return out;
}

std::string hex(std::uint64_t bits) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(bits));
    return text;
}

void check_pair(const format_info& f, std::uint64_t a, std::uint64_t b, int& overflows, int& at_int64_max) {
    const mpz_class want = gmp_position(b, f) - gmp_position(a, f);
    const mpz_class int64_max = from_i64(std::numeric_limits<std::int64_t>::max());
    const std::string what = std::string(f.name) + " from " + hex(a) + " to " + hex(b) + ": GMP distance " +
                             want.get_str();
    EXPECT_EQ(from_u64(abs_ulp_distance_bits(f, a, b)), abs(want)) << what;
    if (abs(want) <= int64_max) {
        EXPECT_EQ(from_i64(ulp_distance_bits(f, a, b)), want) << what;
        if (abs(want) == int64_max) ++at_int64_max;
    } else {
        ++overflows;
        EXPECT_THROW((void)ulp_distance_bits(f, a, b), std::overflow_error) << what;
    }
}

TEST(UlpDistance, EveryPairOfExtremesAndRandomValuesMatchesGmp) {
    const format_info* formats[] = {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info};
    for (std::size_t i = 0; i < 4; ++i) {
        const format_info& f = *formats[i];
        const std::uint64_t seed = 0x01a0 + i;
        SCOPED_TRACE(std::string(f.name) + ", seed " + std::to_string(seed));
        std::vector<std::uint64_t> values = test_values(f, seed);
        if (f.storage_bits == 64) {
            // The largest distance int64 holds: from -(2 - 2^-52), at position -(2^62 - 1), to 2.0, at 2^62.
            values.push_back(0xbfffffffffffffff);  // (2.0 is among the values already)
        }
        int overflows = 0, at_int64_max = 0;
        for (std::uint64_t a : values)
            for (std::uint64_t b : values) check_pair(f, a, b, overflows, at_int64_max);
        if (f.storage_bits == 64) {
            EXPECT_GT(overflows, 100) << "binary64 pairs beyond int64 must have been tried";
            EXPECT_GE(at_int64_max, 2) << "pairs at exactly 2^63 - 1 must have been tried";
        } else {
            EXPECT_EQ(overflows, 0);
        }
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(UlpDistance, DocumentedValues) {
    EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), 1);
    EXPECT_EQ(ulp_distance(-1.0f, 1.0f), 2130706432);
    EXPECT_EQ(ulp_distance(0.0, -0.0), 0);
    EXPECT_EQ(ulp_distance(-1.5, 1.5), INT64_C(0x7ff0000000000000));  // 2 · 0x3ff8000000000000: fits
    EXPECT_EQ(ulp_distance(1.5, -1.5), -INT64_C(0x7ff0000000000000));
    EXPECT_EQ(ulp_distance(float16(-65504.0f), float16(std::numeric_limits<float>::infinity())), 2 * 0x7bff + 1);
    // 2^63 and 2^63 + 2^52 steps: more than int64 holds.
    EXPECT_THROW((void)ulp_distance(-2.0, 2.0), std::overflow_error);
    EXPECT_THROW((void)ulp_distance(2.0, -2.0), std::overflow_error);
    EXPECT_THROW((void)ulp_distance(-3.0, 3.0), std::overflow_error);
    EXPECT_EQ(abs_ulp_distance(2.0, -2.0), UINT64_C(1) << 63);
    EXPECT_EQ(abs_ulp_distance(-3.0, 3.0), (UINT64_C(1) << 63) + (UINT64_C(1) << 52));
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(abs_ulp_distance(-inf, inf), 2 * UINT64_C(0x7ff0000000000000));  // the largest: 2^64 - 2^53
    try {
        (void)ulp_distance(-2.0, 2.0);
    } catch (const std::overflow_error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "ulp_distance: 9223372036854775808 float64 values lie between the two arguments, more than int64 "
                  "holds (2^63 - 1); use abs_ulp_distance for the exact unsigned count");
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_THROW((void)ulp_distance(nan, 1.0), std::invalid_argument);
    EXPECT_THROW((void)abs_ulp_distance(1.0, nan), std::invalid_argument);
}

}  // namespace
