// ulp_study — how far each summation order lands from the exact sum, as n grows (issue 3; scripts/ulp-study runs it
// and plots docs/ulp-study.png; docs/same-bits.md reads the plot).
//
//   ulp_study [--out FILE] [--max-n N] [--steps-per-decade K] [--quick]
//
// For float32 and float64, for n = 10^2 .. 10^8 (K log steps per decade, default 4; --max-n caps it, --quick is
// --max-n 1e6 --steps-per-decade 2), for five input distributions, the error of
//   left_fold, kahan, pairwise (orders.h), halving256, fold16 (tree.h)
// in ulps of the exact sum in the format: (r - s) / ulp(s), exact and rounded once (exactref::ulp_error against
// exactref::sum). Each sum accumulates in the data's format.
//
// Distributions (fixed seeds; x_i rounded once to the format from a binary64 value):
//   uniform    U[0, 1)
//   normal     N(0, 1)
//   harmonic   1/i, i = 1..n (binary64 1.0/i, then rounded to float32 for float32)
//   mixed      ± m·2^e, m ~ U[1, 2), e uniform in -30..30, random signs: magnitudes over 18 decades
//   cancel     near-cancellation: pairs a and -a·(1 + 2^-20·v), a ~ N(0, 1), v ~ U(-1, 1) (odd n: one more value
//              2^-20·N(0, 1)), shuffled; the exact sum is
//              tiny next to Σ|x| (condition numbers 10^6 .. 10^10), so every order is far from it in ulps of s
// Random distributions are repeated with new seeds (11 runs up to n = 10^5, 3 up to 10^6, then 1); the CSV holds the
// median and max of |ulp error| over the runs, the signed error of the first run, and the median condition Σ|x|/|s|
// (medians: with cancellation, |s| and so the error in ulps of s vary over orders of magnitude from run to run).
//
// CSV columns: format,distribution,n,order,runs,median_abs_ulp,max_abs_ulp,first_ulp,condition
// Runtime: 257 s for the full range on 2 shared cores here (10^8 float64 values need 0.8 GB); --quick about 20 s.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "exactref/orders.h"
#include "exactref/reference.h"
#include "exactref/tree.h"
#include "exactref/ulp.h"

namespace {

enum class distribution { uniform, normal, harmonic, mixed, cancel };
constexpr distribution all_distributions[] = {distribution::uniform, distribution::normal, distribution::harmonic,
                                              distribution::mixed, distribution::cancel};
const char* name(distribution d) {
    switch (d) {
        case distribution::uniform: return "uniform";
        case distribution::normal: return "normal";
        case distribution::harmonic: return "harmonic";
        case distribution::mixed: return "mixed";
        case distribution::cancel: return "cancel";
    }
    return "?";
}

template <class T>
std::vector<T> make_data(distribution d, std::size_t n, std::uint64_t seed) {
    std::vector<T> xs(n);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::normal_distribution<double> gauss(0.0, 1.0);
    switch (d) {
        case distribution::uniform:
            for (auto& x : xs) x = static_cast<T>(unit(rng));
            break;
        case distribution::normal:
            for (auto& x : xs) x = static_cast<T>(gauss(rng));
            break;
        case distribution::harmonic:
            for (std::size_t i = 0; i < n; ++i) xs[i] = static_cast<T>(1.0 / static_cast<double>(i + 1));
            break;
        case distribution::mixed: {
            std::uniform_int_distribution<int> exponent(-30, 30);
            for (auto& x : xs) {
                const double m = 1.0 + unit(rng);
                x = static_cast<T>(((rng() & 1) ? -m : m) * std::ldexp(1.0, exponent(rng)));
            }
            break;
        }
        case distribution::cancel: {
            for (std::size_t i = 0; i + 1 < n; i += 2) {
                const T a = static_cast<T>(gauss(rng));
                xs[i] = a;
                xs[i + 1] = static_cast<T>(-static_cast<double>(a) * (1.0 + std::ldexp(2 * unit(rng) - 1, -20)));
            }
            // An odd n leaves one element without a partner: give it the residues' scale, not N(0, 1)'s.
            if (n % 2) xs[n - 1] = static_cast<T>(std::ldexp(gauss(rng), -20));
            std::shuffle(xs.begin(), xs.end(), rng);
            break;
        }
    }
    return xs;
}

constexpr const char* order_names[] = {"left_fold", "kahan", "pairwise", "halving256", "fold16"};
constexpr std::size_t order_count = 5;

template <class T>
std::array<double, order_count> errors(const std::vector<T>& xs, const exactref::reference& ref) {
    const std::span<const T> s(xs);
    const T results[order_count] = {exactref::fold_sum(s), exactref::kahan_sum(s), exactref::pairwise_sum(s),
                                    exactref::tree_sum(s, exactref::halving()), exactref::tree_sum(s, exactref::fold())};
    std::array<double, order_count> out{};
    for (std::size_t k = 0; k < order_count; ++k) out[k] = exactref::ulp_error(results[k], ref);
    return out;
}

// The median of an odd number of values (runs are 11, 3 or 1).
double median(std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

double condition(const exactref::reference& ref) {
    const double s = std::abs(ref.sum.round<double>());
    const double abs_sum = ref.abs_sum.round<double>();
    return s == 0 ? INFINITY : abs_sum / s;
}

template <class T>
void study(const char* format, std::span<const std::size_t> lengths, std::FILE* out) {
    for (distribution d : all_distributions) {
        for (std::size_t n : lengths) {
            const int runs = d == distribution::harmonic ? 1 : n <= 100000 ? 11 : n <= 1000000 ? 3 : 1;
            std::array<std::vector<double>, order_count> abs_errors;
            std::array<double, order_count> first{};
            std::vector<double> conditions;
            for (int run = 0; run < runs; ++run) {
                const std::uint64_t seed = 0x51ed0000u + n * 16 + static_cast<std::uint64_t>(run) +
                                           (static_cast<std::uint64_t>(d) << 48) + (sizeof(T) << 56);
                const std::vector<T> xs = make_data<T>(d, n, seed);
                const exactref::reference ref = exactref::sum(std::span<const T>(xs));
                const auto e = errors(xs, ref);
                for (std::size_t k = 0; k < order_count; ++k) {
                    abs_errors[k].push_back(std::abs(e[k]));
                    if (run == 0) first[k] = e[k];
                }
                conditions.push_back(condition(ref));
            }
            for (std::size_t k = 0; k < order_count; ++k)
                std::fprintf(out, "%s,%s,%zu,%s,%d,%.6g,%.6g,%.6g,%.6g\n", format, name(d), n, order_names[k], runs,
                             median(abs_errors[k]), *std::max_element(abs_errors[k].begin(), abs_errors[k].end()),
                             first[k], median(conditions));
            std::fflush(out);
            std::fprintf(stderr, "  %s %-8s n=%zu done\n", format, name(d), n);
        }
    }
}

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "ulp_study: %s\nusage: ulp_study [--out FILE] [--max-n N] [--steps-per-decade K] [--quick]\n", why);
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    std::string out_path = "-";
    double max_n = 1e8;
    int steps = 4;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
            return argv[++i];
        };
        if (arg == "--out") out_path = value();
        else if (arg == "--max-n") max_n = std::stod(value());
        else if (arg == "--steps-per-decade") steps = std::stoi(value());
        else if (arg == "--quick") max_n = 1e6, steps = 2;
        else usage(("unknown argument " + arg).c_str());
    }
    if (steps < 1 || steps > 20 || max_n < 100 || max_n > 1e9) usage("need 1 <= K <= 20 and 100 <= N <= 1e9");
    std::vector<std::size_t> lengths;
    for (int k = 0;; ++k) {
        const double n = std::round(std::pow(10.0, 2.0 + static_cast<double>(k) / steps));
        if (n > max_n * (1 + 1e-9)) break;
        lengths.push_back(static_cast<std::size_t>(n));
    }
    std::FILE* out = out_path == "-" ? stdout : std::fopen(out_path.c_str(), "w");
    if (out == nullptr) usage(("cannot write " + out_path).c_str());
    std::fprintf(out, "format,distribution,n,order,runs,median_abs_ulp,max_abs_ulp,first_ulp,condition\n");
    const auto start = std::chrono::steady_clock::now();
    study<float>("float32", lengths, out);
    study<double>("float64", lengths, out);
    if (out != stdout) std::fclose(out);
    std::fprintf(stderr, "ulp_study: %zu lengths up to %zu in %.1f s\n", lengths.size(), lengths.back(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return 0;
}
