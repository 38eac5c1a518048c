// The library decodes with integers only, and its floating-point kernels carry their own rounding and see only normal
// numbers (D6 of the dots) or run under an MXCSR of their own and put the caller's back (Step F0b of the sums), so
// nothing may change when another part of the process sets the rounding mode or FTZ/DAZ (shared/DESIGN.md §2). Every expected value is computed first in the default environment
// (and checked there against the MPFR and Boost oracles); then each of the four rounding modes, with FTZ/DAZ off and
// on, is set by the test and every result must come out bit for bit the same.
//
// The trees and comparison orders (tree.h, orders.h) do use native float arithmetic, and promise round-to-nearest-even
// bits on every thread count (DESIGN §4): they run in the default environment whatever the caller's
// (detail/fp_environment.h). The environment is per thread, so the tests below set it on every thread of the OpenMP
// pool, run the parallel path, and check each thread's environment afterwards.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__SSE2__)
#include <xmmintrin.h>  // _mm_getcsr: every thread's MXCSR control bits, before and after a call
#endif

#include "exactref/accumulator.h"
#include "exactref/covers.h"
#include "exactref/format.h"
#include "exactref/orders.h"
#include "exactref/reference.h"
#include "exactref/standard.h"
#include "exactref/tree.h"
#include "oracle.h"
#include "test_tree_oracle.h"

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
    static const char* const models[] = {"any_order", "tree(h)", "exact", "faithful"};
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
    // tree(h) for the halving(256) tree's height (at least 3): a tree of height h holds at most 2^h terms.
    const std::uint64_t height = std::max<std::uint64_t>(3, tree_height(halving(), xs.size()));
    for (const standard& model : {any_order(), tree(height), exact(), faithful()}) {
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

// Step F0b (src/sum_kernels.cpp; AVX-512) adds binary64 and binary32 blocks on the floating-point units under an MXCSR
// of its own (round to nearest, every exception masked, FTZ/DAZ off), reads the flags it raised and puts the
// caller's MXCSR back: the results may not depend on the thread's rounding mode or FTZ/DAZ, no status flag may be
// left raised (not even by the blocks it drops: Inf, NaN, signalling NaN, subnormals, Inf - Inf), flags raised before
// stay raised, the control bits come back as they were, and with every exception unmasked nothing may trap. The inputs reach F0b: N(0, 1) blocks,
// with specials planted in some; blocks at the lowest top F0b takes (whose low parts' unit is the smallest normal
// binary64, flushed under FTZ if F0b went lower) and at the highest; whole blocks of the split's ties.
template <class T>
std::vector<std::vector<std::uint64_t>> one_pass_inputs(std::uint64_t seed) {
    using tr = format_traits<T>;
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> gauss(0.0, 1.0);
    std::vector<std::vector<std::uint64_t>> out;
    constexpr std::size_t n = 6 * 2048 + 5;
    const auto gauss_set = [&] {
        std::vector<std::uint64_t> bits(n);
        for (auto& b : bits) b = tr::to_bits(static_cast<T>(gauss(rng)));
        return bits;
    };
    out.push_back(gauss_set());
    const std::uint64_t specials[] = {tr::to_bits(std::numeric_limits<T>::infinity()),
                                      tr::to_bits(-std::numeric_limits<T>::infinity()),
                                      tr::to_bits(std::numeric_limits<T>::quiet_NaN()),
                                      tr::to_bits(std::numeric_limits<T>::signaling_NaN()),
                                      tr::to_bits(std::numeric_limits<T>::denorm_min()),
                                      tr::to_bits(static_cast<T>(0.0))};
    for (const std::uint64_t special : specials) {
        std::vector<std::uint64_t> bits = gauss_set();
        bits[3 * 2048 + 17] = special;
        if (special == specials[0]) bits[3 * 2048 + 18] = specials[1];  // Inf - Inf inside one block
        out.push_back(bits);
    }
    constexpr int frac_bits = tr::info.precision - 1;
    const std::uint64_t frac_mask = (std::uint64_t{1} << frac_bits) - 1;
    // Exponent fields in [hi - spread, hi], the largest at field hi in term 100 of every block.
    const auto fields_set = [&](std::uint64_t hi, std::uint64_t spread) {
        std::vector<std::uint64_t> bits(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t field = i % 2048 == 100 ? hi : hi - rng() % (spread + 1);
            const std::uint64_t frac = i % 2048 == 100 ? frac_mask : rng() & frac_mask;
            bits[i] = (rng() & 1) << (tr::info.storage_bits - 1) | field << frac_bits | frac;
        }
        return bits;
    };
    if constexpr (std::is_same_v<T, double>) {
        out.push_back(fields_set(92, 38));    // top 93, the lowest F0b takes
        out.push_back(fields_set(60, 38));    // top 61: low parts' unit 2^-1054 would be subnormal (F0 instead)
        out.push_back(fields_set(2035, 38));  // top 2036, the highest
        std::vector<std::uint64_t> ties = gauss_set();  // whole blocks of (2^46 - 1.5)·2^-43: every low part 2^-44
        for (std::size_t i = 2048; i < 4 * 2048; ++i) ties[i] = tr::to_bits(8.0 - 1.5 * std::ldexp(1.0, -43));
        out.push_back(ties);
    } else {
        out.push_back(fields_set(28, 22));   // top 29, the lowest guess
        out.push_back(fields_set(253, 22));  // top 254, the highest
    }
    return out;
}

#if defined(__x86_64__) || defined(__SSE2__)
constexpr unsigned mxcsr_flags = 0x3F;        // IE, DE, ZE, OE, UE, PE
constexpr unsigned mxcsr_masks = 0x3F << 7;   // their masks
#endif

template <class T>
void one_pass_in_every_environment(std::uint64_t seed) {
    const auto data = one_pass_inputs<T>(seed);
    std::vector<results> expected;
    for (const auto& bits : data) expected.push_back(compute<T>(bits));
    // The kernels alone (compute<T> also runs host arithmetic that may raise flags): add, add_abs, the fused pass.
    const auto kernels = [](const std::vector<T>& xs) {
        superaccumulator s, a, fs, fa;
        s.add(std::span<const T>(xs));
        a.add_abs(std::span<const T>(xs));
        add_sum_and_abs(std::span<const T>(xs), fs, fa);
        return std::vector<std::uint64_t>{s.round_bits(binary64_info, rounding::to_nearest_even),
                                          fs.round_bits(binary64_info, rounding::to_nearest_even),
                                          a.round_bits(binary64_info, rounding::to_nearest_even),
                                          fa.round_bits(binary64_info, rounding::to_nearest_even)};
    };
    for (const environment& e : environments()) {
        orc::fp_environment_guard guard(e.mode, e.ftz_daz);
        for (std::size_t i = 0; i < data.size(); ++i) {
            ASSERT_TRUE(compute<T>(data[i]) == expected[i]) << "input " << i << " (seed " << seed << ") differs under "
                                                            << name(e);
#if defined(__x86_64__) || defined(__SSE2__)
            const std::vector<T> xs = orc::from_bits<T>(data[i]);
            const unsigned before = _mm_getcsr();
            _mm_setcsr(before & ~mxcsr_flags);
            const auto quiet = kernels(xs);
            const unsigned after = _mm_getcsr();
            _mm_setcsr(before);
            ASSERT_EQ(after & mxcsr_flags, 0u) << "input " << i << " (seed " << seed << ") raised MXCSR flags "
                                               << (after & mxcsr_flags) << " under " << name(e);
            ASSERT_EQ(after, before & ~mxcsr_flags) << "the control bits are the caller's again";
            // Flags the caller had raised stay raised.
            _mm_setcsr(before | mxcsr_flags);
            const auto flagged = kernels(xs);
            const unsigned after_flagged = _mm_getcsr();
            _mm_setcsr(before);
            EXPECT_EQ(after_flagged, before | mxcsr_flags);
            EXPECT_EQ(quiet, flagged);
            // Every exception unmasked: a flag would trap (SIGFPE would end the test; none was raised above).
            _mm_setcsr((before & ~mxcsr_flags) & ~mxcsr_masks);
            const auto unmasked = kernels(xs);
            const unsigned after_unmasked = _mm_getcsr();
            _mm_setcsr(before);
            EXPECT_EQ(quiet, unmasked);
            EXPECT_EQ(after_unmasked, (before & ~mxcsr_flags) & ~mxcsr_masks);
#endif
        }
    }
}

TEST(FpEnvironment, OnePassOnFloatingPointUnitsFloat64) { one_pass_in_every_environment<double>(5006); }
TEST(FpEnvironment, OnePassOnFloatingPointUnitsFloat32) { one_pass_in_every_environment<float>(5007); }

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

// ---- the trees and comparison orders: native arithmetic, run in the default environment ----------------------------

// What one thread's environment looks like: its rounding mode, its MXCSR control bits (rounding, masks, FTZ, DAZ),
// and what its arithmetic does with a tie-free inexact sum and a subnormal operand.
struct thread_probe {
    int round = 0;
    unsigned control = 0;
    std::uint64_t up = 0, down = 0;  // 1 + 2^-60, -1 - 2^-60
    std::uint32_t subnormal = 0;     // 2^-140 * 1
    friend bool operator==(const thread_probe&, const thread_probe&) = default;
    friend std::ostream& operator<<(std::ostream& out, const thread_probe& p) {
        return out << "{fegetround " << p.round << ", MXCSR control 0x" << std::hex << p.control << ", 1 + 2^-60 = 0x"
                   << p.up << ", -1 - 2^-60 = 0x" << p.down << ", 2^-140 * 1 = 0x" << p.subnormal << std::dec << "}";
    }
};

thread_probe probe_this_thread() {
    thread_probe p;
    p.round = std::fegetround();
#if defined(__x86_64__) || defined(__SSE2__)
    p.control = _mm_getcsr() & 0xFFC0u;  // bits 0-5 are status flags
#endif
    volatile double one = 1.0, tiny = 0x1p-60;
    p.up = std::bit_cast<std::uint64_t>(static_cast<double>(one + tiny));
    p.down = std::bit_cast<std::uint64_t>(static_cast<double>(-one - tiny));
    volatile float sub = 0x1p-140f, unit = 1.0f;
    p.subnormal = std::bit_cast<std::uint32_t>(static_cast<float>(sub * unit));
    return p;
}

// Every thread of a team of `threads` (the calling thread is thread 0), probed in one parallel region; empty when
// OpenMP gave the region fewer threads.
std::vector<thread_probe> probe_team(int threads) {
    std::vector<thread_probe> out(static_cast<std::size_t>(threads));
    bool full = true;
#pragma omp parallel num_threads(threads)
    {
        if (omp_get_num_threads() != threads) full = false;
        out[static_cast<std::size_t>(omp_get_thread_num())] = probe_this_thread();
    }
    return full ? out : std::vector<thread_probe>{};
}

// Sets environment e on every thread of the OpenMP pool for a team of `threads` (and the OpenMP team size), and the
// default back on every one of them at the end. OpenMP's pool threads keep their environment from one parallel region
// to the next, so the library's own parallel regions then run on threads in environment e, as they would for a
// caller whose threads have it.
class team_environment {
public:
    team_environment(const environment& e, int threads) : threads_(threads), saved_threads_(omp_get_max_threads()) {
        omp_set_num_threads(threads);
        set(e);
    }
    ~team_environment() {
        set({rounding::to_nearest_even, false});
        omp_set_num_threads(saved_threads_);
    }
    team_environment(const team_environment&) = delete;
    team_environment& operator=(const team_environment&) = delete;

private:
    void set(const environment& e) const {
#pragma omp parallel num_threads(threads_)
        {
            orc::set_rounding_mode(e.mode);
            orc::set_ftz_daz(e.ftz_daz);
        }
    }
    int threads_;
    int saved_threads_;
};

// Large enough for the parallel path of tree_engine.h (span_tree::evaluate splits the tree across threads only above
// 2^tile_level = 64 leaves): 101 halving(256) leaves, 1605 fold(16) leaves, the last of each partial.
constexpr std::size_t parallel_n = 25677;

// One data set: its name and the raw bits of its elements.
struct data_set {
    std::string name;
    std::vector<std::uint64_t> bits;
};

// Near 1 with random signs: 1 + k·2^-(p-1), k < 2^(p-7), or just below 1, so that long products neither overflow
// nor underflow and every product and sum rounds (raw bits: no host arithmetic).
std::vector<std::uint64_t> near_one_terms(const format_info& f, std::size_t n, std::mt19937_64& rng) {
    const std::uint64_t one = static_cast<std::uint64_t>(f.emax) << (f.precision - 1);
    const std::uint64_t sign = std::uint64_t{1} << (f.storage_bits - 1);
    const std::uint64_t span = std::uint64_t{1} << (f.precision - 7);
    std::vector<std::uint64_t> out(n);
    for (auto& b : out) {
        const std::uint64_t k = rng() % span;
        b = (rng() & 1) ? one + k : one - 1 - k;
        if (rng() % 4 == 0) b |= sign;
    }
    return out;
}

std::vector<data_set> tree_data(const format_info& f, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<data_set> out;
    out.push_back({"subnormal", orc::random_terms(f, parallel_n, orc::term_mix::subnormal, rng)});
    out.push_back({"ties", orc::random_terms(f, parallel_n, orc::term_mix::ties, rng)});
    out.push_back({"near one", near_one_terms(f, parallel_n, rng)});
    out.push_back({"short subnormal", orc::random_terms(f, 37, orc::term_mix::subnormal, rng)});
    return out;
}

// Everything the trees and orders compute from one data set (raw bits), with the name of each result.
struct order_results {
    std::vector<std::string> names;
    std::vector<std::uint64_t> bits;
    friend bool operator==(const order_results& a, const order_results& b) { return a.bits == b.bits; }
};

template <class T, class Acc>
order_results trees_and_orders(const std::vector<std::uint64_t>& raw) {
    const std::vector<T> xs = orc::from_bits<T>(raw);
    const std::span<const T> span(xs);
    order_results r;
    const auto put = [&](std::string name, Acc v) {
        r.names.push_back(std::move(name));
        r.bits.push_back(static_cast<std::uint64_t>(format_traits<Acc>::to_bits(v)));
    };
    for (const tree_shape& shape : {halving(), fold()}) {
        for (reduce_op op : {reduce_op::sum, reduce_op::product, reduce_op::min, reduce_op::max})
            put("tree_reduce " + std::string(to_string(op)) + " " + shape.name(), tree_reduce<Acc>(span, op, shape));
        // reduce_chunked over chunks of 1024 = 256·4 = 16·64 elements: the calling thread's guard in reduce_chunked
        std::vector<std::span<const T>> chunks;
        for (std::size_t begin = 0; begin < xs.size(); begin += 1024)
            chunks.push_back(span.subspan(begin, std::min<std::size_t>(1024, xs.size() - begin)));
        put("reduce_chunked sum " + shape.name(),
            reduce_chunked<Acc>(std::span<const std::span<const T>>(chunks), reduce_op::sum, shape));
    }
    put("fold_sum", fold_sum<Acc>(span));
    put("kahan_sum", kahan_sum<Acc>(span));
    put("pairwise_sum", pairwise_sum<Acc>(span));
    return r;
}

// The default environment's results are the promised ones: the trees agree with the literal shapes on the oracle's
// integer arithmetic (test_tree_oracle.h), and the left fold with a fold of oracle::add_rounded.
template <class T, class Acc>
void expect_default_results_match_the_oracle(const std::vector<std::uint64_t>& raw, const order_results& got) {
    const format_info& acc = format_traits<Acc>::info;
    const std::vector<T> xs = orc::from_bits<T>(raw);
    std::size_t i = 0;
    for (const tree_shape& shape : {halving(), fold()}) {
        for (reduce_op op : {reduce_op::sum, reduce_op::product, reduce_op::min, reduce_op::max}) {
            const std::uint64_t want = test::spec_float_tree<T, Acc>(std::span<const T>(xs), op, shape);
            EXPECT_TRUE(test::same_bits(acc, got.bits[i], want))
                << got.names[i] << ": " << orc::describe(got.bits[i], acc) << ", oracle " << orc::describe(want, acc);
            ++i;
        }
        const std::uint64_t want_sum = test::spec_float_tree<T, Acc>(std::span<const T>(xs), reduce_op::sum, shape);
        EXPECT_EQ(got.bits[i], want_sum) << got.names[i];
        ++i;
    }
    const test::float_spec_op widen(acc, reduce_op::sum, test::oracle_engine::integer);
    std::uint64_t fold = widen.widen(raw[0], format_traits<T>::info);
    for (std::size_t k = 1; k < raw.size(); ++k) fold = orc::add_rounded(fold, widen.widen(raw[k], format_traits<T>::info), acc);
    EXPECT_EQ(got.bits[i], fold) << "fold_sum: " << orc::describe(got.bits[i], acc) << ", oracle "
                                 << orc::describe(fold, acc);
}

template <class T, class Acc>
void trees_and_orders_in_every_environment(std::uint64_t seed) {
    const format_info& f = format_traits<T>::info;
    const std::string what = std::string(f.name) + (std::is_same_v<T, Acc> ? "" : " in float32");
    const std::vector<data_set> data = tree_data(f, seed);
    ASSERT_GT(leaf_count(halving(), parallel_n), 64u) << "the data must reach the parallel path (tree_engine.h)";
    ASSERT_EQ(orc::current_rounding_mode(), rounding::to_nearest_even);
    ASSERT_FALSE(orc::ftz_daz_enabled());
    std::vector<order_results> expected;
    for (const data_set& d : data) {
        expected.push_back(trees_and_orders<T, Acc>(d.bits));
        SCOPED_TRACE(what + " " + d.name + " (seed " + std::to_string(seed) + "), default environment");
        expect_default_results_match_the_oracle<T, Acc>(d.bits, expected.back());
    }
    for (const environment& e : environments()) {
        for (int threads : {1, 2}) {
            const std::string where = what + " under " + name(e) + ", " + std::to_string(threads) + " thread(s)";
            std::vector<order_results> got;
            std::vector<thread_probe> before, after;
            {
                team_environment team(e, threads);
                {
                    orc::fp_environment_guard guard(e.mode, e.ftz_daz);  // the calling thread, as the caller set it
                    expect_environment_is_active(e);
                    const thread_probe caller_before = probe_this_thread();
                    before = probe_team(threads);
                    for (const data_set& d : data) got.push_back(trees_and_orders<T, Acc>(d.bits));
                    EXPECT_EQ(probe_this_thread(), caller_before) << where << ": the caller's environment changed";
                    after = probe_team(threads);
                }
            }
            ASSERT_EQ(before.size(), static_cast<std::size_t>(threads)) << where << ": OpenMP gave fewer threads";
            for (std::size_t t = 0; t < before.size(); ++t) {
                // Every thread really had e (else the comparison below would pass vacuously) ...
                EXPECT_EQ(before[t], before[0]) << where << ": thread " << t << " is not in the environment set";
                // ... and has it again after the library's parallel regions: each thread restored its own.
                EXPECT_EQ(after[t], before[t]) << where << ": thread " << t << "'s environment changed";
            }
            for (std::size_t i = 0; i < data.size(); ++i) {
                ASSERT_EQ(got[i].bits.size(), expected[i].bits.size());
                for (std::size_t k = 0; k < got[i].bits.size(); ++k)
                    EXPECT_EQ(got[i].bits[k], expected[i].bits[k])
                        << where << ", " << data[i].name << " data (seed " << seed << "): " << expected[i].names[k]
                        << " gives " << orc::describe(got[i].bits[k], format_traits<Acc>::info) << ", default "
                        << orc::describe(expected[i].bits[k], format_traits<Acc>::info);
            }
        }
    }
    EXPECT_EQ(orc::current_rounding_mode(), rounding::to_nearest_even);
    EXPECT_FALSE(orc::ftz_daz_enabled());
}

TEST(FpEnvironmentTrees, Float64) { trees_and_orders_in_every_environment<double, double>(6001); }
TEST(FpEnvironmentTrees, Float32) { trees_and_orders_in_every_environment<float, float>(6002); }
TEST(FpEnvironmentTrees, Float16) { trees_and_orders_in_every_environment<float16, float16>(6003); }
TEST(FpEnvironmentTrees, Bfloat16) { trees_and_orders_in_every_environment<bfloat16, bfloat16>(6004); }
TEST(FpEnvironmentTrees, Float16InFloat32) { trees_and_orders_in_every_environment<float16, float>(6005); }
TEST(FpEnvironmentTrees, Bfloat16InFloat32) { trees_and_orders_in_every_environment<bfloat16, float>(6006); }

// The data above does depend on the environment when nothing guards it: a plain left fold and product in the test's
// own code (no guard) differ from the default environment's under every non-default environment, for float64 and
// float32 (else the tests above would prove nothing).
template <class T>
std::vector<std::uint64_t> unguarded_folds(const std::vector<data_set>& data) {
    std::vector<std::uint64_t> out;
    for (const data_set& d : data) {
        const std::vector<T> xs = orc::from_bits<T>(d.bits);
        T s = xs[0], p = xs[0];
        for (std::size_t i = 1; i < xs.size(); ++i) {
            s = s + xs[i];
            p = p * xs[i];
        }
        out.push_back(format_traits<T>::to_bits(s));
        out.push_back(format_traits<T>::to_bits(p));
    }
    return out;
}

TEST(FpEnvironmentTrees, UnguardedArithmeticOnTheSameDataDoesChange) {
    const auto data64 = tree_data(binary64_info, 6001);
    const auto data32 = tree_data(binary32_info, 6002);
    const auto want64 = unguarded_folds<double>(data64);
    const auto want32 = unguarded_folds<float>(data32);
    for (const environment& e : environments()) {
        if (e.mode == rounding::to_nearest_even && !e.ftz_daz) continue;
        orc::fp_environment_guard guard(e.mode, e.ftz_daz);
        EXPECT_NE(unguarded_folds<double>(data64), want64) << name(e);
        EXPECT_NE(unguarded_folds<float>(data32), want32) << name(e);
    }
}

// The reviewer's two cases, with values derived by hand: 1 + 2^-60 is below half an ulp of 1 (2^-53), so it rounds to
// 1 to nearest (FE_UPWARD alone would give 1 + 2^-52); 2^-1074 + 2^-1074 + 1e-310 is exact in the subnormal range,
// the encoding of 1e-310 plus 2 (DAZ alone would read all three as 0).
TEST(FpEnvironmentTrees, ReviewersCases) {
    const std::vector<double> one_tiny{1.0, 0x1p-60};
    const double min_sub = std::numeric_limits<double>::denorm_min();
    const std::vector<double> subs{min_sub, min_sub, 1e-310};
    const std::uint64_t subs_sum = std::bit_cast<std::uint64_t>(1e-310) + 2;
    for (const environment& e : environments()) {
        orc::fp_environment_guard guard(e.mode, e.ftz_daz);
        SCOPED_TRACE(name(e));
        for (double r : {fold_sum(one_tiny), kahan_sum(one_tiny), pairwise_sum(one_tiny), tree_sum(one_tiny),
                         tree_sum(one_tiny, fold())})
            EXPECT_EQ(std::bit_cast<std::uint64_t>(r), std::bit_cast<std::uint64_t>(1.0));
        for (double r : {fold_sum(subs), kahan_sum(subs), pairwise_sum(subs), tree_sum(subs), tree_sum(subs, fold())})
            EXPECT_EQ(std::bit_cast<std::uint64_t>(r), subs_sum);
        expect_environment_is_active(e);  // and the caller's environment is back
    }
}

}  // namespace
