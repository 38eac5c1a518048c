// exactref::dot: exact s, exact T = Σ|x·y|, the special-value state and min_product_exponent, compared bit for bit
// with two independent oracles (GMP rationals and MPFR's mpfr_sum; rounded results also by Boost) on random inputs of
// every kind the oracle generates (all binades, subnormals, cancellation, ties, specials) and on adversarial inputs:
// products that underflow or overflow in the input format, the edges of the binary64 FMA path, signed zeros. The same
// inputs under every rounding mode with FTZ/DAZ on must give identical references.
#include <gtest/gtest.h>

#include <gmpxx.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../src/dot_kernels.h"  // detail::f64_extraction_params, f64_extraction_kept_blocks (Step D6 ran)
#include "exactref/dot.h"
#include "exactref/multiprecision.h"
#include "oracle.h"
#include "test_dot_checks.h"

namespace {
using namespace exactref;
namespace orc = exactref::oracle;
using namespace exactref::testing_support;

template <floating_format T>
reference dot_of_bits(const bits_vector& x, const bits_vector& y) {
    const std::vector<T> xv = orc::from_bits<T>(x);
    const std::vector<T> yv = orc::from_bits<T>(y);
    return dot(std::span<const T>(xv), std::span<const T>(yv));
}

reference dot_any(const format_info& f, const bits_vector& x, const bits_vector& y) {
    switch (f.id) {
        case dtype::float64: return dot_of_bits<double>(x, y);
        case dtype::float32: return dot_of_bits<float>(x, y);
        case dtype::float16: return dot_of_bits<float16>(x, y);
        case dtype::bfloat16: return dot_of_bits<bfloat16>(x, y);
    }
    return {};
}

const format_info* const all_formats[] = {&binary64_info, &binary32_info, &binary16_info, &bfloat16_info};

TEST(Dot, RandomInputsMatchTheOraclesBitForBit) {
    const std::size_t lengths[] = {0, 1, 2, 3, 7, 63, 64, 65, 1023, 1024, 1025, 3000};
    std::uint64_t seed = 20240601;
    for (const format_info* f : all_formats) {
        for (orc::term_mix mx : orc::all_term_mixes) {
            for (orc::term_mix my : {orc::term_mix::full_range, orc::term_mix::clustered, mx}) {
                for (std::size_t n : lengths) {
                    ++seed;
                    SCOPED_TRACE(std::string(f->name) + " x:" + orc::to_string(mx) + " y:" + orc::to_string(my) +
                                 " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
                    std::mt19937_64 rng(seed);
                    const bits_vector x = orc::random_terms(*f, n, mx, rng);
                    const bits_vector y = orc::random_terms(*f, n, my, rng);
                    expect_matches_oracles(dot_any(*f, x, y), x, y, *f);
                    if (::testing::Test::HasFailure()) return;
                }
            }
        }
    }
}

// Products at and beyond the edges of the binary64 FMA path (-918 <= E_x + E_y <= 1021), subnormal operands, products
// that underflow below the smallest subnormal or overflow the format: all must still be exact.
TEST(Dot, Binary64ProductsAtTheEdgesOfTheFmaPath) {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<std::uint64_t> frac(0, (std::uint64_t{1} << 52) - 1);
    for (int sum_exp : {-1100, -1022, -920, -919, -918, -917, 0, 1020, 1021, 1022, 1023, 1100, 2000}) {
        SCOPED_TRACE("E_x + E_y = " + std::to_string(sum_exp));
        bits_vector x, y;
        for (int i = 0; i < 2000; ++i) {
            const int ex = std::clamp(sum_exp / 2 + static_cast<int>(rng() % 40) - 20, -1022, 1023);
            const int ey = std::clamp(sum_exp - ex, -1022, 1023);
            const std::uint64_t sx = (rng() & 1) << 63, sy = (rng() & 1) << 63;
            x.push_back(sx | (static_cast<std::uint64_t>(ex + 1023) << 52) | frac(rng));
            y.push_back(sy | (static_cast<std::uint64_t>(ey + 1023) << 52) | frac(rng));
        }
        // a few subnormal operands and zeros in the mix
        x[5] = frac(rng);
        y[6] = 1;
        x[7] = std::uint64_t{1} << 63;
        expect_matches_oracles(dot_any(binary64_info, x, y), x, y, binary64_info);
    }
}

// A zero operand times a finite value: blocks made only of such pairs (alone, or left after the unsafe pairs are taken
// out) have a low window base, and the error term e = fma(0, y, -0) = 0 of each once landed inside its window with
// the implicit bit of a normal number (s and T off by 2^-1023 per pair, T even negative for -0.0). Every exponent of
// the other operand, both signs of both, with and without a subnormal partner pair and a tiny non-zero product.
TEST(Dot, ZeroOperandsAtEveryExponentOfTheOtherOperand) {
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<std::uint64_t> frac(0, (std::uint64_t{1} << 52) - 1);
    for (int e = -1074; e <= 1023; ++e) {
        const std::uint64_t magnitude = e < -1022 ? std::uint64_t{1} << (e + 1074)
                                                  : (static_cast<std::uint64_t>(e + 1023) << 52) | frac(rng);
        const std::uint64_t zero = (rng() & 1) << 63, sign = (rng() & 1) << 63;
        const std::vector<std::pair<bits_vector, bits_vector>> cases = {
            {{zero}, {sign | magnitude}},
            {{sign | magnitude, zero}, {zero ^ (std::uint64_t{1} << 63), sign | magnitude}},
            {{zero, 1}, {sign | magnitude, 0x3FF0000000000000u}},  // a subnormal pair takes the slow path
            {{zero, 0x0010000000000000u}, {sign | magnitude, 0x3CB0000000000000u}},  // 2^-1022 · 2^-52
        };
        for (const auto& [x, y] : cases) {
            SCOPED_TRACE("zero operand, other operand exponent " + std::to_string(e) + ", " +
                         std::to_string(x.size()) + " pairs");
            expect_matches_oracles(dot_any(binary64_info, x, y), x, y, binary64_info);
            expect_matches_oracles(dot_any(binary64_info, y, x), y, x, binary64_info);
        }
    }
}

TEST(Dot, ProductsThatUnderflowOrOverflowInTheInputFormat) {
    for (const format_info* f : all_formats) {
        SCOPED_TRACE(std::string(f->name));
        const int frac_bits = f->precision - 1;
        auto value = [&](bool neg, int field, std::uint64_t fr) {
            return (std::uint64_t{neg} << (f->storage_bits - 1)) | (static_cast<std::uint64_t>(field) << frac_bits) | fr;
        };
        const int max_field = static_cast<int>(f->special_exponent_field()) - 1;
        const std::uint64_t all_frac = (std::uint64_t{1} << frac_bits) - 1;
        // tiny·tiny (far below the smallest subnormal), huge·huge (far above the largest finite), and their sum with
        // moderate products: the reference keeps every one exactly.
        bits_vector x{value(false, 0, 1), value(true, 1, 3), value(false, max_field, all_frac), value(true, max_field, 1),
                      value(false, 1, 0), value(false, f->emax, 5)};
        bits_vector y{value(false, 0, 1), value(false, 0, all_frac), value(false, max_field, all_frac),
                      value(false, max_field - 3, 7), value(true, 1, 0), value(true, f->emax - 1, 9)};
        const reference r = dot_any(*f, x, y);
        expect_matches_oracles(r, x, y, *f);
        EXPECT_TRUE(r.product_may_underflow);
        EXPECT_LT(r.min_product_exponent, 2 * f->subnormal_lsb_exponent() + 1);
        // no underflow: products of ones
        const bits_vector ones(5, value(false, f->emax, 0));
        const reference r1 = dot_any(*f, ones, ones);
        expect_matches_oracles(r1, ones, ones, *f);
        EXPECT_FALSE(r1.product_may_underflow);
        EXPECT_EQ(r1.min_product_exponent, f->emin);
    }
}

// Pass 1 of the narrow formats bounds a block's top from the largest operand field of each side and the smallest
// product from f_x + f_y, without forming products: blocks whose largest x and largest y sit in different pairs (the
// bound is then above every product), products on either side of the window's edge below that bound, and products of
// normal operands just below and just above 2^emin (where min_product_exponent needs the exact smallest product).
TEST(Dot, NarrowBlocksWithALooseTopAndProductsNearEmin) {
    for (const format_info* f : {&binary32_info, &binary16_info, &bfloat16_info}) {
        SCOPED_TRACE(std::string(f->name));
        const int frac_bits = f->precision - 1;
        const int bias = f->emax;
        auto value = [&](bool neg, int exponent, std::uint64_t fr) {
            return (std::uint64_t{neg} << (f->storage_bits - 1)) |
                   (static_cast<std::uint64_t>(exponent + bias) << frac_bits) | fr;
        };
        const std::uint64_t all_frac = (std::uint64_t{1} << frac_bits) - 1;
        constexpr std::uint64_t seed = 20261202;
        SCOPED_TRACE("seed=" + std::to_string(seed));
        std::mt19937_64 rng(seed);
        for (int below = 20; below <= 28; ++below) {  // products around the window's edge (W = 24)
            for (std::size_t n : {std::size_t{1024}, std::size_t{2049}}) {
                SCOPED_TRACE("below=" + std::to_string(below) + " n=" + std::to_string(n));
                bits_vector x(n), y(n);
                for (std::size_t i = 0; i < n; ++i) {
                    x[i] = value(rng() & 1, static_cast<int>(rng() % 3), rng() & all_frac);
                    y[i] = value(rng() & 1, static_cast<int>(rng() % 3), rng() & all_frac);
                }
                for (std::size_t b = 0; b + 41 <= n; b += 1024) {  // blocks with room for the planted pairs
                    const int hi = std::min(f->emax - 1, 6);
                    x[b + 5] = value(false, hi, all_frac), y[b + 5] = value(true, 0, 1);  // the largest x
                    x[b + 17] = value(false, 0, 3), y[b + 17] = value(false, hi, all_frac);  // the largest y
                    const int e = std::max(hi + 2 - below, f->emin);
                    x[b + 40] = value(true, e, rng() & all_frac), y[b + 40] = value(false, 0, rng() & all_frac);
                }
                expect_matches_oracles(dot_any(*f, x, y), x, y, *f);
                if (::testing::Test::HasFailure()) return;
            }
        }
        // blocks whose scale jumps up (the previous block's bound is then too low a window base for the single pass)
        // and down (the guess lies far above the block: terms fall below its window)
        for (int jump : {1, 2, 5, 12}) {
            const int e_hi = std::min(f->emax - 1, jump);
            bits_vector x(5 * 1024), y(5 * 1024);
            for (std::size_t i = 0; i < x.size(); ++i) {
                const std::size_t b = i / 1024;
                const int e = b == 1 || b == 3 ? e_hi : b == 2 ? -e_hi : 0;
                x[i] = value(rng() & 1, e - static_cast<int>(rng() % 4), rng() & all_frac);
                y[i] = value(rng() & 1, e - static_cast<int>(rng() % 4), rng() & all_frac);
            }
            SCOPED_TRACE("jump=" + std::to_string(jump));
            expect_matches_oracles(dot_any(*f, x, y), x, y, *f);
        }
        // a block of products at the top of the bound, all of one sign: lane sums at their largest (a top below the
        // largest product's field would overflow them)
        for (int e : {0, std::min(f->emax - 1, 6)}) {
            const bits_vector x(2048, value(false, e, all_frac)), y(2048, value(true, e, all_frac));
            expect_matches_oracles(dot_any(*f, x, y), x, y, *f);
        }
        // normal operands whose product lies just below, at or just above 2^emin
        for (int shift = -2; shift <= 1; ++shift) {
            const int ex = f->emin / 2, ey = f->emin - ex + shift;
            bits_vector x(1500, value(false, 0, 0)), y(1500, value(true, 0, 5));
            x[700] = value(false, ex, all_frac), y[700] = value(false, ey, 0);
            x[1300] = value(true, ex, 0), y[1300] = value(false, ey, 1);
            SCOPED_TRACE("shift=" + std::to_string(shift));
            const reference r = dot_any(*f, x, y);
            expect_matches_oracles(r, x, y, *f);
            EXPECT_EQ(r.product_may_underflow, shift < 0);
        }
    }
}

TEST(Dot, SpecialValuesAndSignedZeros) {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    struct case_t {
        std::vector<double> x, y;
    };
    const case_t cases[] = {
        {{-0.0, 0.0, 3.0}, {1.0, -2.0, -0.0}},   // every product -0.0: s rounds to -0.0
        {{-0.0, 0.0}, {-1.0, 2.0}},              // +0.0 and +0.0
        {{-0.0, 0.0}, {1.0, 2.0}},               // -0.0 and +0.0: +0.0
        {{inf, 1.0}, {2.0, 3.0}},                // +Inf
        {{inf, -inf}, {2.0, 3.0}},               // +Inf and -Inf: NaN
        {{inf, 1.0}, {0.0, 3.0}},                // Inf·0: NaN
        {{nan, 1.0}, {0.0, 3.0}},                // NaN
        {{-inf, 1e308}, {1.0, 1e308}},           // -Inf with a finite overflow-size product
        {{}, {}},                                // empty: +0.0
    };
    for (const auto& c : cases) {
        const bits_vector x = orc::to_bits(std::span<const double>(c.x));
        const bits_vector y = orc::to_bits(std::span<const double>(c.y));
        expect_matches_oracles(dot(std::span<const double>(c.x), std::span<const double>(c.y)), x, y, binary64_info);
        // The same in float32 (values converted; the specials and zeros keep their meaning).
        std::vector<float> xf(c.x.begin(), c.x.end()), yf(c.y.begin(), c.y.end());
        for (auto& v : xf) v = std::isfinite(v) && std::abs(v) > 1e30 ? std::copysign(1e30f, v) : v;
        for (auto& v : yf) v = std::isfinite(v) && std::abs(v) > 1e30 ? std::copysign(1e30f, v) : v;
        expect_matches_oracles(dot(std::span<const float>(xf), std::span<const float>(yf)),
                               orc::to_bits(std::span<const float>(xf)), orc::to_bits(std::span<const float>(yf)),
                               binary32_info);
    }
    const std::vector<double> neg{-0.0, 0.0}, pos{1.0, -1.0};
    EXPECT_EQ(std::bit_cast<std::uint64_t>(dot(neg, pos).nearest<double>()), std::bit_cast<std::uint64_t>(-0.0));
}

TEST(Dot, ExistingOutputIsOneMoreTerm) {
    std::mt19937_64 rng(99);
    for (const format_info* f : all_formats) {
        SCOPED_TRACE(std::string(f->name));
        const bits_vector x = orc::random_terms(*f, 300, orc::term_mix::clustered, rng);
        const bits_vector y = orc::random_terms(*f, 300, orc::term_mix::clustered, rng);
        const bits_vector c = orc::random_terms(*f, 1, orc::term_mix::clustered, rng);
        reference r;
        switch (f->id) {
            case dtype::float64: {
                auto xv = orc::from_bits<double>(x), yv = orc::from_bits<double>(y);
                r = dot(std::span<const double>(xv), std::span<const double>(yv), orc::from_bits<double>(c)[0]);
                break;
            }
            case dtype::float32: {
                auto xv = orc::from_bits<float>(x), yv = orc::from_bits<float>(y);
                r = dot(std::span<const float>(xv), std::span<const float>(yv), orc::from_bits<float>(c)[0]);
                break;
            }
            case dtype::float16: {
                auto xv = orc::from_bits<float16>(x), yv = orc::from_bits<float16>(y);
                r = dot(std::span<const float16>(xv), std::span<const float16>(yv), orc::from_bits<float16>(c)[0]);
                break;
            }
            case dtype::bfloat16: {
                auto xv = orc::from_bits<bfloat16>(x), yv = orc::from_bits<bfloat16>(y);
                r = dot(std::span<const bfloat16>(xv), std::span<const bfloat16>(yv), orc::from_bits<bfloat16>(c)[0]);
                break;
            }
        }
        expect_matches_oracles(r, x, y, *f, &c[0]);
    }
}

TEST(Dot, StridedAndNegativeIncrements) {
    std::mt19937_64 rng(5);
    const bits_vector xb = orc::random_terms(binary32_info, 3 * 700, orc::term_mix::clustered, rng);
    const bits_vector yb = orc::random_terms(binary32_info, 2 * 700, orc::term_mix::cancelling, rng);
    const std::vector<float> x = orc::from_bits<float>(xb), y = orc::from_bits<float>(yb);
    bits_vector xs, ys;
    for (std::size_t i = 0; i < 700; ++i) {
        xs.push_back(xb[3 * i]);
        ys.push_back(yb[2 * (699 - i)]);
    }
    const reference r = dot_strided(x.data(), 3, y.data() + 2 * 699, -2, 700);
    expect_matches_oracles(r, xs, ys, binary32_info);
}

TEST(Dot, LengthMismatchIsAClearError) {
    const std::vector<float> a(3), b(4);
    try {
        (void)dot(a, b);
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "exactref::dot: x has 3 elements and y has 4: pass two vectors of the same length");
    }
}

// The reference must not depend on the rounding mode or on FTZ/DAZ (DESIGN §2): every mode, with and without
// FTZ/DAZ, on inputs full of subnormals and binary64 products near the FMA path's edges.
TEST(Dot, IndependentOfTheFloatingPointEnvironment) {
    for (const format_info* f : all_formats) {
        std::mt19937_64 rng(1234);
        const bits_vector x = orc::random_terms(*f, 4000, orc::term_mix::full_range, rng);
        const bits_vector y = orc::random_terms(*f, 4000, orc::term_mix::subnormal, rng);
        const bits_vector z = orc::random_terms(*f, 4000, orc::term_mix::clustered, rng);
        const reference base = dot_any(*f, x, y);
        const reference base2 = dot_any(*f, z, x);
        for (rounding mode : {rounding::to_nearest_even, rounding::toward_zero, rounding::upward, rounding::downward}) {
            for (bool ftz : {false, true}) {
                if (ftz && !orc::ftz_daz_supported()) continue;
                SCOPED_TRACE(std::string(f->name) + " " + std::string(to_string(mode)) + (ftz ? " FTZ/DAZ" : ""));
                reference r, r2;
                {
                    orc::fp_environment_guard guard(mode, ftz);
                    r = dot_any(*f, x, y);
                    r2 = dot_any(*f, z, x);
                }
                EXPECT_EQ(to_mpq(r.sum), to_mpq(base.sum));
                EXPECT_EQ(to_mpq(r.abs_sum), to_mpq(base.abs_sum));
                EXPECT_EQ(to_mpq(r2.sum), to_mpq(base2.sum));
                EXPECT_EQ(to_mpq(r2.abs_sum), to_mpq(base2.abs_sum));
                EXPECT_EQ(r.min_product_exponent, base.min_product_exponent);
            }
        }
        expect_matches_oracles(base, x, y, *f);
        expect_matches_oracles(base2, z, x, *f);
    }
}


// ---- Step D6: binary64 blocks by error-free extraction (src/dot_extract.cpp) ----------------------------------------

using extraction = detail::f64_extraction_params;

// Whether this build and CPU run Step D6 (else the tests below still check exactness, on Steps D1-D4).
bool extraction_runs() {
#ifdef EXACTREF_DOT_EXTRACTION
    return detail::f64_extraction_supported();
#else
    return false;
#endif
}

// A binary64 with unbiased exponent e (normal), random fraction and sign.
std::uint64_t normal_bits(int e, std::mt19937_64& rng, bool random_sign = true) {
    const std::uint64_t sign = random_sign ? (rng() & 1) << 63 : 0;
    return sign | (static_cast<std::uint64_t>(e + 1023) << 52) | (rng() & ((std::uint64_t{1} << 52) - 1));
}

// n pairs in blocks of 1024: pair 0 of each block has E_x + E_y = top_e (the block's largest product, so Step D6's
// guess for the next block is top_e + 2 or top_e + 3), the others E_x + E_y uniform in [low_e, top_e]; both significands
// full, so e = x·y - p has bits down to the product's last one. `same_sign`: every product positive.
void pairs_in_window(std::size_t n, int top_e, int low_e, std::mt19937_64& rng, bits_vector& x, bits_vector& y,
                     bool same_sign = false) {
    x.clear();
    y.clear();
    for (std::size_t i = 0; i < n; ++i) {
        const int sum = i % 1024 == 0 ? top_e : low_e + static_cast<int>(rng() % static_cast<unsigned>(top_e - low_e + 1));
        const int ex = std::clamp(sum / 2 + static_cast<int>(rng() % 21) - 10, -1022, 1023);
        x.push_back(normal_bits(ex, rng, !same_sign));
        y.push_back(normal_bits(sum - ex, rng, !same_sign));
    }
}

// n N(0, 1) pairs of T (double or float) into x, y as raw bits, checked against the oracles; returns the number of
// blocks Step D6 kept.
template <class T>
std::uint64_t gaussian_case(std::size_t n, std::mt19937_64& rng, bits_vector& x, bits_vector& y) {
    using bits = typename format_traits<T>::bits_type;
    const format_info& f = format_traits<T>::info;
    std::normal_distribution<T> gauss(T{0}, T{1});
    x.assign(n, 0);
    y.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = std::bit_cast<bits>(gauss(rng));
        y[i] = std::bit_cast<bits>(gauss(rng));
    }
    const std::uint64_t before = detail::f64_extraction_kept_blocks();
    expect_matches_oracles(dot_any(f, x, y), x, y, f);
    return detail::f64_extraction_kept_blocks() - before;
}

// N(0, 1) data (what bench_dot measures) at lengths around the kernel's vector (8, 16), flush (chunk_pairs) and block
// (1024) sizes: bit for bit against the oracles, and Step D6 keeps the blocks after the first (whose guess it makes).
TEST(DotExtraction, GaussianDataIsKeptAndExact) {
    static_assert(extraction::chunk_pairs == 256);
    const std::size_t lengths[] = {1, 7, 8, 9, 15, 16, 17, 255, 256, 257, 1023, 1024, 1025, 1031, 1279, 1280, 1281,
                                   2047, 2048, 2049, 2055, 4096, 10000};
    for (std::size_t n : lengths) {
        const std::uint64_t seed = 77 + n;
        SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed));
        std::mt19937_64 rng(seed);
        bits_vector x, y;
        const std::uint64_t kept = gaussian_case<double>(n, rng, x, y);
        if (extraction_runs()) EXPECT_EQ(kept, (n - 1) / 1024) << "every block after the first";
        // the same data negated (x -> -x) and scaled by 2^±600 (far from the kernel's range limits)
        for (int scale : {0, 600, -600}) {
            bits_vector xs = x;
            for (auto& b : xs) b = std::bit_cast<std::uint64_t>(-std::ldexp(std::bit_cast<double>(b), scale));
            expect_matches_oracles(dot_any(binary64_info, xs, y), xs, y, binary64_info);
        }
    }
}

// Products at the spread limit: Step D6 keeps a block whose products with non-zero operands lie at most
// `spread` binades below its window top (their last bit then lies on level 3's grid, Lemma 4) and refuses it below.
// Either way the result must be exact; a spread one too large (planted) loses the last bits of e and fails here.
TEST(DotExtraction, ProductsAtTheSpreadLimitAreExact) {
    std::mt19937_64 rng(2026);
    for (int depth = extraction::spread - 3; depth <= extraction::spread + 3; ++depth) {
        for (int top_e : {0, 500, -900, 1013}) {
            SCOPED_TRACE("products down to 2^(" + std::to_string(top_e) + " - " + std::to_string(depth) + ")");
            bits_vector x, y;
            pairs_in_window(4096, top_e, top_e - depth, rng, x, y);
            const std::uint64_t before = detail::f64_extraction_kept_blocks();
            expect_matches_oracles(dot_any(binary64_info, x, y), x, y, binary64_info);
            // guess M = E(largest) + 2 <= top_e + 4; E_p >= E_x + E_y >= top_e - depth
            if (extraction_runs() && depth + 4 <= extraction::spread)
                EXPECT_EQ(detail::f64_extraction_kept_blocks() - before, 3u) << "blocks 2-4 are kept";
            if (::testing::Test::HasFailure()) return;
        }
    }
}

// Pairs whose significands are odd and in [1.5, 2), so their products are odd with 2p bits (p = 53 or 24) and
// E_x + E_y = t; pair 0 of each block is 1.75·1.75. Returns the number of blocks Step D6 kept.
std::uint64_t last_bit_case(const format_info& f, int t, std::mt19937_64& rng) {
    const int frac_bits = f.precision - 1, bias = f.emax;
    const std::uint64_t frac_mask = (std::uint64_t{1} << frac_bits) - 1;
    auto odd_significand = [&](int e) {
        const std::uint64_t frac = (std::uint64_t{1} << (frac_bits - 1)) | (rng() & frac_mask) | 1u;
        return ((rng() & 1) << (f.storage_bits - 1)) | (static_cast<std::uint64_t>(e + bias) << frac_bits) | frac;
    };
    const std::uint64_t one_75 = (static_cast<std::uint64_t>(bias) << frac_bits) | (std::uint64_t{3} << (frac_bits - 2));
    bits_vector x(4096), y(4096);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = i % 1024 == 0 ? one_75 : odd_significand(t / 2);
        y[i] = i % 1024 == 0 ? one_75 : odd_significand(t - t / 2);
    }
    const std::uint64_t before = detail::f64_extraction_kept_blocks();
    expect_matches_oracles(dot_any(f, x, y), x, y, f);
    return detail::f64_extraction_kept_blocks() - before;
}

// Lemmas 4 and 5 are tight: the products' last bit is 2^(E_p - 105) (binary64) or 2^(E_p - 47) (binary32), E_p = t + 1.
// The guess M is 2 for block 2 and 3 after; at the limit t + 1 = 2 - spread the block under M = 2 is kept with that
// bit exactly on the last grid, the blocks under M = 3 are refused and kept when retried under their own M = 2; one
// binade lower every block is refused. A spread one too large (planted) keeps those and loses the bit.
TEST(DotExtraction, LastBitAtTheSpreadLimit) {
    std::mt19937_64 rng(4242);
    const std::pair<const format_info*, int> cases[] = {{&binary64_info, extraction::spread},
                                                        {&binary32_info, detail::f32_extraction_params::spread}};
    for (const auto& [f, spread] : cases) {
        for (int t = 2 - spread - 1 + 2; t >= 2 - spread - 1 - 1; --t) {
            SCOPED_TRACE(std::string(f->name) + ", E_x + E_y = " + std::to_string(t));
            const std::uint64_t kept = last_bit_case(*f, t, rng);
            if (extraction_runs()) EXPECT_EQ(kept, t + 1 >= 2 - spread ? 3u : 0u);
        }
    }
}

// Window tops at and beyond the kernel's range [min_top, max_top] (level 3's sigma normal, level 1's sums finite),
// products near overflow and near 2^-968 (e's last bit at 2^-1074, remainders subnormal), Inf/NaN, zeros and -0.0 in
// blocks after the first (so they reach Step D6, which must refuse or absorb them): all exact.
TEST(DotExtraction, RangeLimitsSpecialValuesAndZeros) {
    std::mt19937_64 rng(99);
    const int tops[] = {extraction::max_top - 3, extraction::max_top - 2, extraction::max_top - 1, 1019, 1021,
                        extraction::min_top - 2, extraction::min_top - 1, extraction::min_top, extraction::min_top + 1,
                        -969, -1000};
    for (int top_e : tops) {
        for (int depth : {0, 10, extraction::spread - 4}) {
            SCOPED_TRACE("E_x + E_y in [" + std::to_string(top_e - depth) + ", " + std::to_string(top_e) + "]");
            bits_vector x, y;
            pairs_in_window(3000, top_e, top_e - depth, rng, x, y);
            expect_matches_oracles(dot_any(binary64_info, x, y), x, y, binary64_info);
            if (::testing::Test::HasFailure()) return;
        }
    }
    const std::uint64_t inf = 0x7FF0000000000000u, nan = 0x7FF8000000000001u, neg = std::uint64_t{1} << 63;
    for (std::uint64_t special : {inf, inf | neg, nan, std::uint64_t{0}, neg, std::uint64_t{1} /* subnormal */}) {
        for (std::size_t at : {std::size_t{1024}, std::size_t{1500}, std::size_t{2047}, std::size_t{2048}}) {
            SCOPED_TRACE("special " + std::to_string(special) + " at " + std::to_string(at));
            bits_vector x, y;
            pairs_in_window(3000, 0, -20, rng, x, y);
            x[at] = special;
            expect_matches_oracles(dot_any(binary64_info, x, y), x, y, binary64_info);
            y[at + 1] = special;  // special times special, and special times a finite value
            x[at + 1] = special ^ neg;
            expect_matches_oracles(dot_any(binary64_info, x, y), x, y, binary64_info);
        }
    }
    // whole blocks of zeros after a normal block: every sign combination, so s is -0.0 exactly when it must be
    for (std::uint64_t zx : {std::uint64_t{0}, neg}) {
        for (std::uint64_t zy : {std::uint64_t{0}, neg}) {
            bits_vector x(3000, zx), y(3000, zy);
            for (std::size_t i = 0; i < 3000; i += 2) y[i] ^= neg;
            expect_matches_oracles(dot_any(binary64_info, x, y), x, y, binary64_info);
            bits_vector x2 = x, y2 = y;
            for (std::size_t i = 0; i < 1024; ++i) x2[i] = normal_bits(0, rng), y2[i] = normal_bits(0, rng);
            expect_matches_oracles(dot_any(binary64_info, x2, y2), x2, y2, binary64_info);
            for (std::size_t i = 1024; i < 3000; ++i) y2[i] = normal_bits(static_cast<int>(rng() % 2000) - 1000, rng);
            expect_matches_oracles(dot_any(binary64_info, x2, y2), x2, y2, binary64_info);
        }
    }
}

// Same-sign products at the very top of the window in every lane (the running sums grow the most: Lemma 2's bound is
// reached within a factor 2), exact cancellation (x_i·y_i = -x_(i+1)·y_(i+1)) and a scale that drifts from block
// to block (up: the guess is too small and the block is redone under its own top; down: blocks refused for their
// spread, then skipped). A sigma one binade too small or a flush interval one doubling too long (planted) leaves the
// binade: the block is refused and the kept-block count below fails.
TEST(DotExtraction, SameSignCancellingAndDriftingBlocks) {
    std::mt19937_64 rng(5);
    {
        // (2 - 2^-52)^2 rounds to 4 - 2^-50, the largest double below 4 = 2^M (M = 2 for block 2, from block 1's
        // exponents): each lane's 16 terms sum to 64 - 2^-46, just inside Lemma 2's 2^(k_1 - 2) = 64. One binade less
        // of sigma (or 32 terms per lane) puts the sum at a tie that rounds to 2^(k_1 + 1): out of the binade.
        bits_vector x(5000, 0x3FFFFFFFFFFFFFFFu), y(5000, 0x3FFFFFFFFFFFFFFFu);
        const std::uint64_t before = detail::f64_extraction_kept_blocks();
        expect_matches_oracles(dot_any(binary64_info, x, y), x, y, binary64_info);
        if (extraction_runs()) EXPECT_EQ(detail::f64_extraction_kept_blocks() - before, 4u);
    }
    {
        bits_vector x, y;
        pairs_in_window(6000, 3, -25, rng, x, y, true);
        for (std::size_t i = 1; i < x.size(); i += 2) {
            x[i] = x[i - 1] ^ (std::uint64_t{1} << 63);
            y[i] = y[i - 1];
        }
        x.back() = normal_bits(-40, rng);  // a small residue
        expect_matches_oracles(dot_any(binary64_info, x, y), x, y, binary64_info);
    }
    for (int drift : {1, 2, 5, 40, -1, -3, -40}) {
        SCOPED_TRACE("drift " + std::to_string(drift) + " binades per block");
        bits_vector x, y;
        pairs_in_window(20 * 1024, 0, -12, rng, x, y);
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double v = std::ldexp(std::bit_cast<double>(x[i]), drift * static_cast<int>(i / 1024));
            x[i] = std::bit_cast<std::uint64_t>(v);
        }
        expect_matches_oracles(dot_any(binary64_info, x, y), x, y, binary64_info);
    }
}

// Step D6 rounds (that is how it extracts): it must give the same reference under every rounding mode (each
// operation rounds to nearest by its own encoding) and must not run with FTZ or DAZ set (subnormal remainders near
// 2^-968 would be flushed): then Steps D1-D4 take every block. A planted missing MXCSR check fails the count below.
TEST(DotExtraction, EveryRoundingModeAndFtzDazFallBack) {
    std::mt19937_64 rng(31);
    bits_vector x, y, xt, yt;
    pairs_in_window(4096, 0, -25, rng, x, y);
    pairs_in_window(4096, extraction::min_top + 1, extraction::min_top - 25, rng, xt, yt);  // subnormal remainders
    const reference base = dot_any(binary64_info, x, y);
    const reference base_tiny = dot_any(binary64_info, xt, yt);
    expect_matches_oracles(base, x, y, binary64_info);
    expect_matches_oracles(base_tiny, xt, yt, binary64_info);
    for (rounding mode : {rounding::to_nearest_even, rounding::toward_zero, rounding::upward, rounding::downward}) {
        for (bool ftz : {false, true}) {
            if (ftz && !orc::ftz_daz_supported()) continue;
            SCOPED_TRACE(std::string(to_string(mode)) + (ftz ? " FTZ/DAZ" : ""));
            reference r, r_tiny;
            const std::uint64_t before = detail::f64_extraction_kept_blocks();
            {
                orc::fp_environment_guard guard(mode, ftz);
                r = dot_any(binary64_info, x, y);
                r_tiny = dot_any(binary64_info, xt, yt);
            }
            const std::uint64_t kept = detail::f64_extraction_kept_blocks() - before;
            expect_same_reference(r, base);
            expect_same_reference(r_tiny, base_tiny);
            if (extraction_runs()) EXPECT_EQ(kept, ftz ? 0u : 6u);
        }
    }
}


// Binary32 operands (Lemma 5: exact products, two levels): N(0, 1) data is kept after the first block; products at
// the spread limit (their last bit 2^(E_p - 47) on level 2's grid) and near 2^-126 = 2^emin (kept blocks have none
// below it: min_product_exponent must still be exact), subnormal operands (converted exactly: DAZ is off), Inf/NaN and
// zeros in later blocks, and FTZ/DAZ (every block falls back): all bit for bit against the oracles.
TEST(DotExtraction, Binary32Operands) {
    std::mt19937_64 rng(32);
    auto f32_bits = [&](int e) {
        return ((rng() & 1) << 31) | (static_cast<std::uint64_t>(e + 127) << 23) | (rng() & 0x7FFFFFu) | 1u;
    };
    for (std::size_t n : {std::size_t{1}, std::size_t{17}, std::size_t{1024}, std::size_t{1025}, std::size_t{2049},
                          std::size_t{5000}}) {
        SCOPED_TRACE("N(0, 1), n=" + std::to_string(n));
        bits_vector x, y;
        const std::uint64_t kept = gaussian_case<float>(n, rng, x, y);
        if (extraction_runs()) EXPECT_EQ(kept, (n - 1) / 1024) << "every block after the first";
    }
    constexpr int spread = detail::f32_extraction_params::spread;
    for (int top_e : {0, 100, 250, -60, -78, -90}) {
        for (int depth : {0, spread - 4, spread - 3, spread - 2, spread, spread + 2}) {
            SCOPED_TRACE("binary32, E_x + E_y in [" + std::to_string(top_e - depth) + ", " + std::to_string(top_e) + "]");
            bits_vector x(4096), y(4096);
            for (std::size_t i = 0; i < x.size(); ++i) {
                const int sum = i % 1024 == 0 ? top_e : top_e - static_cast<int>(rng() % static_cast<unsigned>(depth + 1));
                const int ex = std::clamp(sum / 2 + static_cast<int>(rng() % 11) - 5, -126, 127);
                x[i] = f32_bits(ex);
                y[i] = f32_bits(std::clamp(sum - ex, -126, 127));
            }
            const std::uint64_t before = detail::f64_extraction_kept_blocks();
            expect_matches_oracles(dot_any(binary32_info, x, y), x, y, binary32_info);
            // the guess is E_x + E_y + 2 after block 1, then E(largest) + 2 <= top_e + 3
            if (extraction_runs() && depth + 3 <= spread && top_e + 2 >= detail::f32_extraction_params::min_top)
                EXPECT_EQ(detail::f64_extraction_kept_blocks() - before, 3u);
            if (::testing::Test::HasFailure()) return;
        }
    }
    const std::uint64_t inf = 0x7F800000u, nan = 0x7FC00001u, neg = 0x80000000u;
    for (std::uint64_t special : {inf, inf | neg, nan, std::uint64_t{0}, neg, std::uint64_t{1}, std::uint64_t{0x7FFFFFu}}) {
        SCOPED_TRACE("binary32 special or subnormal " + std::to_string(special));
        bits_vector x(3000), y(3000);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = f32_bits(static_cast<int>(rng() % 20)), y[i] = f32_bits(0);
        x[1500] = special;
        y[2100] = special;
        x[2100] = special ^ neg;
        x[2500] = special;
        y[2500] = f32_bits(120);  // a subnormal times 2^120: a normal product, kept
        expect_matches_oracles(dot_any(binary32_info, x, y), x, y, binary32_info);
    }
    bits_vector x(4096), y(4096);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = f32_bits(-40), y[i] = f32_bits(-40 - static_cast<int>(i % 40));
    const reference base = dot_any(binary32_info, x, y);
    expect_matches_oracles(base, x, y, binary32_info);
    if (orc::ftz_daz_supported()) {
        const std::uint64_t before = detail::f64_extraction_kept_blocks();
        reference r;
        {
            orc::fp_environment_guard guard(rounding::upward, true);
            r = dot_any(binary32_info, x, y);
        }
        expect_same_reference(r, base);
        EXPECT_EQ(detail::f64_extraction_kept_blocks() - before, 0u);
    }
}


// ---- Step D6 for binary32 operands at its limits (Lemma 5, f32_extraction_params) -----------------------------------

using extraction32 = detail::f32_extraction_params;

reference dot32(const bits_vector& x, const bits_vector& y, unsigned threads = 1) {
    const std::vector<float> xv = orc::from_bits<float>(x);
    const std::vector<float> yv = orc::from_bits<float>(y);
    return dot(std::span<const float>(xv), std::span<const float>(yv), dot_options{threads});
}

// Checks a binary32 dot against the oracles and returns the number of blocks Step D6 kept.
std::uint64_t kept_dot32(const bits_vector& x, const bits_vector& y) {
    const std::uint64_t before = detail::f64_extraction_kept_blocks();
    expect_matches_oracles(dot32(x, y), x, y, binary32_info);
    return detail::f64_extraction_kept_blocks() - before;
}

// A binary32 with unbiased exponent e (normal), random fraction and sign.
std::uint64_t f32_normal(int e, std::mt19937_64& rng, bool random_sign = true) {
    const std::uint64_t sign = random_sign ? (rng() & 1) << 31 : 0;
    return sign | (static_cast<std::uint64_t>(e + 127) << 23) | (rng() & 0x7FFFFFu);
}

// Level 1's sums grow the most when every product is just below 2^M and of one sign: 64 terms per lane of
// (2 - 2^-23)^2 = 4 - 2^-21 + 2^-46 under M = 2 sum to just below 256 = 2^(k_1 - 2) (k_1 = M + g + 2 = 10), inside
// the binade of sigma_1 = 1.5·2^10 (one binade less still holds them: 1024 - 2^-15; two binades less (planted)
// reach 2^(k_1 + 1): the block is refused and the kept count fails). Pairs that cancel exactly (x_(i+1) = -x_i,
// y_(i+1) = y_i) give s = +0 with T > 0; blocks of zeros after a normal block give s = -0 exactly when every product
// is -0. A product far above the window top, cancelled later in its lane, must refuse its block.
TEST(DotExtraction, Binary32SameSignTopAndExactCancellation) {
    {
        const bits_vector x(5000, 0x3FFFFFFFu), y(5000, 0x3FFFFFFFu);
        const std::uint64_t kept = kept_dot32(x, y);
        if (extraction_runs()) EXPECT_EQ(kept, 4u) << "blocks 2-5 (block 1 gives the guess M = 2)";
        bits_vector xn = x;  // every product negative: the same magnitudes below sigma
        for (auto& b : xn) b ^= 0x80000000u;
        const std::uint64_t kept_negative = kept_dot32(xn, y);
        if (extraction_runs()) EXPECT_EQ(kept_negative, 4u);
    }
    std::mt19937_64 rng(320);
    for (int trial = 0; trial < 24; ++trial) {
        // one lane of block 2 gets +P at its 6th pair and -P at its 7th (16 pairs later), P = 1.f·2^e far above the
        // guess (M = 4 or 5 for N(0, 1)): level 1's sum leaves its binade, rounds onto a coarser grid, and comes
        // back. The block test on the largest |p| refuses that block (without it, the remainder of the rounded q is
        // lost whenever the lane's sum still lies in its binade at the flush).
        const int e = 18 + 4 * (trial % 4);
        SCOPED_TRACE("a cancelling pair of 2^" + std::to_string(e) + " in block 2, trial " + std::to_string(trial));
        bits_vector x, y;
        gaussian_case<float>(3000, rng, x, y);
        const std::size_t at = 1024 + 16 * 5 + static_cast<std::size_t>(trial % 16);
        x[at] = f32_normal(e, rng) | 1u;
        y[at] = f32_normal(0, rng) | 1u;
        x[at + 16] = x[at] ^ 0x80000000u;
        y[at + 16] = y[at];
        kept_dot32(x, y);
    }
    for (std::size_t n : {std::size_t{2}, std::size_t{1024}, std::size_t{4096}, std::size_t{5002}}) {
        SCOPED_TRACE("cancelling pairs, n=" + std::to_string(n));
        bits_vector x, y;
        gaussian_case<float>(n, rng, x, y);
        for (std::size_t i = 1; i < n; i += 2) {
            x[i] = x[i - 1] ^ 0x80000000u;
            y[i] = y[i - 1];
        }
        const reference r = dot32(x, y);
        EXPECT_TRUE(r.sum.finite_part_is_zero());
        EXPECT_FALSE(r.sum.all_negative_zero());
        const std::uint64_t kept = kept_dot32(x, y);
        if (extraction_runs()) EXPECT_EQ(kept, (n - 1) / 1024);
    }
    const std::uint64_t neg = 0x80000000u;
    for (std::uint64_t zx : {std::uint64_t{0}, neg}) {
        for (std::uint64_t zy : {std::uint64_t{0}, neg}) {
            SCOPED_TRACE("zeros " + std::to_string(zx) + " " + std::to_string(zy));
            bits_vector x(3000, zx), y(3000, zy);
            kept_dot32(x, y);
            for (std::size_t i = 0; i < 1024; ++i) x[i] = f32_normal(0, rng), y[i] = f32_normal(0, rng);
            kept_dot32(x, y);  // a normal block, then blocks of zeros under its guess
            for (std::size_t i = 0; i < 1024; ++i) x[i] = zx, y[i] = zy;
            x[1500] = f32_normal(3, rng);  // one non-zero product among the zeros
            y[1500] = f32_normal(-2, rng);
            kept_dot32(x, y);
        }
    }
}

// Window tops at the float32 extremes and at the kernel's range [min_top, max_top]: products up to (2^128 - 2^104)^2
// (just below 2^256) and down to the smallest subnormal squared (2^-298), blocks with both (a spread no block keeps),
// Inf/NaN mixes (Inf·0, Inf·(-Inf), NaN) after kept blocks, and N(0, 1) data at the vector (8, 16) and block (1024)
// boundaries and n = 0, 1: all bit for bit against the oracles, the long ones also on two threads.
TEST(DotExtraction, Binary32ExtremesSpecialsAndBoundaries) {
    std::mt19937_64 rng(321);
    for (int top_e : {254, 253, 200, extraction32::min_top - 4, extraction32::min_top - 3, extraction32::min_top - 2,
                      extraction32::min_top - 1, -150, -250}) {
        for (int depth : {0, 8, extraction32::spread - 3}) {
            SCOPED_TRACE("binary32, E_x + E_y in [" + std::to_string(top_e - depth) + ", " + std::to_string(top_e) + "]");
            bits_vector x(4096), y(4096);
            for (std::size_t i = 0; i < x.size(); ++i) {
                const int sum = i % 1024 == 0 ? top_e : top_e - static_cast<int>(rng() % static_cast<unsigned>(depth + 1));
                // E_x + E_y = sum exactly, and max E_x + max E_y = top_e (the fallback's guess bounds the products
                // by the largest exponent of each side)
                const int ex = std::clamp(sum / 2, std::max(-126, sum - 127), std::min(127, sum + 126));
                x[i] = f32_normal(ex, rng);
                y[i] = f32_normal(sum - ex, rng);
            }
            const std::uint64_t kept = kept_dot32(x, y);
            // the guess: E_x + E_y + 2 after block 1 (pair 0 of each block has E_x + E_y = top_e), then at most one more
            if (extraction_runs() && depth + 3 <= extraction32::spread)
                EXPECT_EQ(kept, top_e + 2 >= extraction32::min_top ? 3u : 0u);
            if (::testing::Test::HasFailure()) return;
        }
    }
    {
        // the largest and the smallest products in every block: never kept, exact by Steps D1-D5
        bits_vector x(3000), y(3000);
        for (std::size_t i = 0; i < x.size(); ++i) {
            const bool big = i % 3 == 0;
            x[i] = big ? 0x7F7FFFFFu : 1u + (rng() & 0x7FFFFFu);  // max finite, or a subnormal
            y[i] = (big ? 0x7F7FFFFFu : 1u + (rng() & 0xFFu)) | ((rng() & 1) << 31);
        }
        const std::uint64_t kept = kept_dot32(x, y);
        if (extraction_runs()) EXPECT_EQ(kept, 0u);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1u + (rng() & 0x3Fu), y[i] = 1u + (rng() & 0x3Fu);
        kept_dot32(x, y);  // subnormal times subnormal: products from 2^-298
    }
    const std::uint64_t inf = 0x7F800000u, nan = 0x7FC00001u, neg = 0x80000000u, one = 0x3F800000u;
    const std::pair<std::uint64_t, std::uint64_t> specials[] = {{inf, 0}, {0, inf | neg}, {inf, inf | neg},
                                                                {nan, one}, {inf, one}, {inf | neg, one | neg}};
    for (const auto& [a, b] : specials) {
        for (std::size_t at : {std::size_t{1024}, std::size_t{1031}, std::size_t{2047}, std::size_t{2999}}) {
            SCOPED_TRACE("special pair " + std::to_string(a) + " * " + std::to_string(b) + " at " + std::to_string(at));
            bits_vector x, y;
            gaussian_case<float>(3000, rng, x, y);
            x[at] = a;
            y[at] = b;
            const std::uint64_t kept = kept_dot32(x, y);
            if (extraction_runs()) EXPECT_EQ(kept, at < 2048 ? 0u : 1u) << "the special's block is never kept";
        }
    }
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9}, std::size_t{15},
                          std::size_t{16}, std::size_t{17}, std::size_t{1023}, std::size_t{1024}, std::size_t{1025},
                          std::size_t{1031}, std::size_t{1032}, std::size_t{1040}, std::size_t{2047}, std::size_t{2048},
                          std::size_t{2049}, std::size_t{3071}, std::size_t{3072}, std::size_t{3073}}) {
        SCOPED_TRACE("N(0, 1), n=" + std::to_string(n));
        bits_vector x, y;
        const std::uint64_t kept = gaussian_case<float>(n, rng, x, y);
        if (extraction_runs()) EXPECT_EQ(kept, n == 0 ? 0 : (n - 1) / 1024);
    }
    for (std::size_t n : {std::size_t{65536}, std::size_t{100003}}) {
        SCOPED_TRACE("two threads, n=" + std::to_string(n));
        bits_vector x, y;
        gaussian_case<float>(n, rng, x, y);
        x[40000] = f32_normal(-100, rng);  // a block refused for its spread
        x[n - 100] = inf;
        const reference one_thread = dot32(x, y, 1);
        expect_matches_oracles(one_thread, x, y, binary32_info);
        expect_same_reference(dot32(x, y, 2), one_thread);
    }
}

// bfloat16 operands take the binary32 kernel (Lemma 5 on the binary32 of each bfloat16's bits shifted up by 16): N(0, 1)
// data is kept after the first block at the vector and block boundaries, the same-sign top of level 1 (64 terms of
// (2 - 2^-7)^2 per lane), exact cancellation, -0 blocks, the largest finite squared (just below 2^256), subnormals,
// Inf/NaN mixes and two threads: all bit for bit against the oracles. A wrong widening (planted: a shift by 15) fails
// the N(0, 1) cases.
TEST(DotExtraction, Bfloat16OnTheBinary32Kernel) {
    std::mt19937_64 rng(1616);
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    const auto bf16_gauss = [&](std::size_t n, bits_vector& x, bits_vector& y) {
        x.resize(n);
        y.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = std::bit_cast<std::uint32_t>(gauss(rng)) >> 16;
            y[i] = std::bit_cast<std::uint32_t>(gauss(rng)) >> 16;
        }
    };
    const auto kept_bf16 = [](const bits_vector& x, const bits_vector& y, unsigned threads = 1) {
        const std::uint64_t before = detail::f64_extraction_kept_blocks();
        const std::vector<bfloat16> xv = orc::from_bits<bfloat16>(x), yv = orc::from_bits<bfloat16>(y);
        const reference r = dot(std::span<const bfloat16>(xv), std::span<const bfloat16>(yv), dot_options{threads});
        const std::uint64_t kept = detail::f64_extraction_kept_blocks() - before;
        expect_matches_oracles(r, x, y, bfloat16_info);
        return kept;
    };
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9}, std::size_t{15},
                          std::size_t{16}, std::size_t{17}, std::size_t{1023}, std::size_t{1024}, std::size_t{1025},
                          std::size_t{2047}, std::size_t{2048}, std::size_t{2049}, std::size_t{3073}, std::size_t{5000}}) {
        SCOPED_TRACE("bfloat16 N(0, 1), n=" + std::to_string(n));
        bits_vector x, y;
        bf16_gauss(n, x, y);
        const std::uint64_t kept = kept_bf16(x, y);
        if (extraction_runs()) EXPECT_EQ(kept, n == 0 ? 0 : (n - 1) / 1024);
        if (n == 5000) {  // the same pairs cancelling exactly: s = +0
            for (std::size_t i = 1; i < n; i += 2) x[i] = x[i - 1] ^ 0x8000u, y[i] = y[i - 1];
            kept_bf16(x, y);
        }
    }
    {
        const bits_vector x(5000, 0x3FFFu), y(5000, 0x3FFFu);  // (2 - 2^-7)^2 just below 4 = 2^M
        const std::uint64_t kept = kept_bf16(x, y);
        if (extraction_runs()) EXPECT_EQ(kept, 4u);
        const bits_vector big(3000, 0x7F7Fu);  // the largest finite bfloat16, squared: just below 2^256
        kept_bf16(big, big);
    }
    const std::uint64_t inf = 0x7F80u, nan = 0x7FC1u, neg = 0x8000u, one = 0x3F80u;
    const std::pair<std::uint64_t, std::uint64_t> specials[] = {
        {inf, 0}, {inf, inf | neg}, {nan, one}, {inf | neg, one}, {0x0001u, 0x7F00u} /* subnormal times 2^127 */,
        {0x007Fu, 0x0003u} /* subnormal squared: below 2^-126 */, {neg, 0}};
    for (const auto& [a, b] : specials) {
        for (std::size_t at : {std::size_t{1024}, std::size_t{2047}, std::size_t{2999}}) {
            SCOPED_TRACE("bfloat16 pair " + std::to_string(a) + " * " + std::to_string(b) + " at " + std::to_string(at));
            bits_vector x, y;
            bf16_gauss(3000, x, y);
            x[at] = a;
            y[at] = b;
            kept_bf16(x, y);
        }
    }
    for (std::uint64_t zx : {std::uint64_t{0}, neg}) {
        for (std::uint64_t zy : {std::uint64_t{0}, neg}) {
            bits_vector x, y;
            bf16_gauss(3000, x, y);
            for (std::size_t i = 1024; i < 3000; ++i) x[i] = zx, y[i] = zy;  // a normal block, then zeros
            kept_bf16(x, y);
        }
    }
    bits_vector x, y;
    bf16_gauss(100003, x, y);
    x[50001] = 0x0001u;  // a block refused for its spread
    const std::vector<bfloat16> xv = orc::from_bits<bfloat16>(x), yv = orc::from_bits<bfloat16>(y);
    const reference one_thread = dot(std::span<const bfloat16>(xv), std::span<const bfloat16>(yv), dot_options{1});
    expect_matches_oracles(one_thread, x, y, bfloat16_info);
    expect_same_reference(dot(std::span<const bfloat16>(xv), std::span<const bfloat16>(yv), dot_options{2}), one_thread);
}

}  // namespace
