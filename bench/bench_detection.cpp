// bench_detection — the detection-power table of docs/detection.md: plants faults into emulated reduction kernels and
// counts, per standard, how many faulty results covers() rejects, and checks that no honest run is rejected.
//
// A plain executable, not a Google Benchmark: it measures detection rates, not time. scripts/detection-table runs it
// (make detection), writes the CSV and renders the table and the plot.
//
//   data      N(0, 1) and U(0, 1) in float64, float32, float16 and bfloat16 (drawn in binary64, rounded to the
//             format), n = 10^3 .. 10^8; and for the `exact` row order-free data (exactref/testing.h)
//   kernels   detection_kernels.h: A (CUB-like, levels:fold:8,tree:256,any), B (levels:tree:256,any), C (a pairwise
//             tree of height ceil(log2 n)), every addition correctly rounded in the data's format
//   faults    one lost term of median magnitude; a lost aligned run of 256 terms; a lost aligned run of 2048 terms;
//             one of the kernel's blocks counted twice; lost atomic updates (each update lost with probability
//             10^-4, given that at least one is); every addition truncated to bfloat16 (round toward zero); the
//             accumulator not reset (the previous call's result, on the same data, added)
//   rows      standard             kernel   reference built from
//             any_order            A        the data
//             tree:ceil(log2 n)    C        the data
//             split_k:c            A        the data (c = kernel A's blocks, ceil(n/2048))
//             levels:fold:8,tree:256,any    A   the data, with that structure
//             levels:tree:256,any  B        the data, with that structure
//             exact                A        order-free data for kernel A (exactref::testing::order_free_data)
//
// Each trial is one data set and one placement (an atomic order and the fault positions); every fault is planted
// into the same run as one honest result (same data, same atomic order), which must be covered. An honest run that
// is not covered is printed at once with everything needed to reproduce it, and the exit status is 3.
//
// Usage: bench_detection [--out FILE.csv] [--max-n N] [--min-n N] [--formats float64,float32,float16,bfloat16]
//                        [--data normal,uniform,order_free] [--threads T] [--scale F] [--quick]
//                        [--dataset FORMAT,KIND,N,INDEX]
//   --quick    n <= 10^5 and a tenth of the trials (seconds); --scale multiplies the data sets per n
//   --dataset  one data set alone (KIND: normal, uniform, order_free), as an honest rejection names it
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "detection_kernels.h"
#include "exactref/covers.h"
#include "exactref/format.h"
#include "exactref/reference.h"
#include "exactref/standard.h"
#include "exactref/testing.h"
#include "oracle.h"

namespace {

using namespace exactref;
using namespace exactref::detection;

// ---- configuration ------------------------------------------------------------------------------------------------

enum class fault { honest, lost_term, lost_256, lost_2048, double_block, lost_updates, bf16_truncation, not_reset };
constexpr fault all_faults[] = {fault::honest,       fault::lost_term,    fault::lost_256,
                                fault::lost_2048,    fault::double_block, fault::lost_updates,
                                fault::bf16_truncation, fault::not_reset};
constexpr std::size_t fault_count = std::size(all_faults);
const char* fault_name(fault f) {
    switch (f) {
        case fault::honest: return "honest";
        case fault::lost_term: return "lost_term";
        case fault::lost_256: return "lost_256";
        case fault::lost_2048: return "lost_2048";
        case fault::double_block: return "double_block";
        case fault::lost_updates: return "lost_updates";
        case fault::bf16_truncation: return "bf16_truncation";
        case fault::not_reset: return "not_reset";
    }
    return "?";
}

constexpr double lost_update_rate = 1e-4;
constexpr std::size_t median_sample = 1001;  // the lost term: the median |x| of this many randomly drawn terms

enum class row { any_order, tree, split_k, structured_a, structured_b, exact_order_free };
constexpr std::size_t row_count = 6;
constexpr kernel_id kernel_of(row r) {
    return r == row::tree ? kernel_id::pairwise : r == row::structured_b ? kernel_id::tree256 : kernel_id::cub;
}
const char* kernel_letter(kernel_id k) { return k == kernel_id::cub ? "A" : k == kernel_id::tree256 ? "B" : "C"; }

const standard structure_a = parse_standard("levels:fold:8,tree:256,any");
const standard structure_b = parse_standard("levels:tree:256,any");

unsigned ceil_log2(std::uint64_t n) { return n <= 1 ? 0u : static_cast<unsigned>(std::bit_width(n - 1)); }

/// The standards of the rows for n terms.
std::vector<standard> row_standards(std::uint64_t n) {
    return {any_order(), tree(ceil_log2(n)), split_k((n + 2047) / 2048), structure_a, structure_b, exact()};
}

enum class data_kind { normal, uniform, order_free };
const char* kind_name(data_kind k) {
    return k == data_kind::normal ? "normal" : k == data_kind::uniform ? "uniform" : "order_free";
}

/// How many data sets and placements (trials = their product) per n: >= 100 trials everywhere, more where they are
/// cheap. At the largest sizes a data set costs seconds (its reference, the order-free generator), a placement
/// microseconds, so trials there share data sets: 10 data sets x 10 placements at 10^8. The 16-bit formats are
/// emulated (several times slower) and get fewer data sets from 10^6 on.
struct trial_plan {
    std::size_t datasets;
    std::size_t placements;
};
trial_plan plan_for(std::uint64_t n, dtype f, double scale) {
    const bool narrow = f == dtype::float16 || f == dtype::bfloat16;
    trial_plan p = n <= 10'000       ? trial_plan{1000, 1}
                   : n <= 100'000    ? trial_plan{500, 1}
                   : n <= 1'000'000  ? trial_plan{narrow ? 100u : 200u, 1}
                   : n <= 10'000'000 ? (narrow ? trial_plan{20, 5} : trial_plan{50, 2})
                                     : trial_plan{10, 10};
    p.datasets = std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(static_cast<double>(p.datasets) * scale)));
    return p;
}

// ---- the counts ---------------------------------------------------------------------------------------------------

struct cell {
    std::uint64_t trials = 0;
    std::uint64_t rejected = 0;
    std::uint64_t no_effect = 0;       // the faulty result is bit-identical to its honest run
    std::uint64_t vacuous = 0;         // trials whose reference makes the standard vacuous (B >= S)
    double bound_over_s = 0;           // sum over trials of B / S
    std::uint64_t lost_updates = 0;    // lost_updates only: updates lost, summed over trials
    void add(const cell& o) {
        trials += o.trials, rejected += o.rejected, no_effect += o.no_effect, vacuous += o.vacuous;
        bound_over_s += o.bound_over_s, lost_updates += o.lost_updates;
    }
};
using table_counts = std::array<std::array<cell, fault_count>, row_count>;

struct job {
    dtype format;
    data_kind kind;
    std::uint64_t n;
    trial_plan plan;
    table_counts counts{};
    double seconds = 0;
    std::mutex lock;
};

std::atomic<std::uint64_t> honest_rejections{0};
std::mutex print_lock;

/// The seed of one data set: its coordinates mixed by splitmix64, so results do not depend on the thread count.
std::uint64_t dataset_seed(dtype f, data_kind k, std::uint64_t n, std::size_t d) {
    std::uint64_t s = 0x6A09E667F3BCC909ull ^ (static_cast<std::uint64_t>(f) << 56) ^
                      (static_cast<std::uint64_t>(k) << 48) ^ n;
    const std::uint64_t a = splitmix64(s);
    std::uint64_t t = a ^ (0x9E3779B97F4A7C15ull * (d + 1));
    return splitmix64(t);
}

// ---- one data set ---------------------------------------------------------------------------------------------------

/// The faults of one placement, drawn once and planted into every kernel.
struct placement {
    std::size_t lost_term = 0;   // index of the lost term
    std::size_t run_256 = 0;     // the lost run [256·r, 256·r + 256)
    std::size_t run_2048 = 0;    // the lost run [2048·r, 2048·r + 2048)
    std::uint64_t draw = 0;      // seed of the per-kernel draws (atomic orders, doubled block, lost updates)
};

template <class T>
class dataset_runner {
public:
    using A = arithmetic<T>;
    using V = typename A::value;

    dataset_runner(job& j, std::size_t index) : job_(j), index_(index), n_(j.n) {
        seed_ = dataset_seed(j.format, j.kind, j.n, index);
    }

    void run() {
        xoshiro256 rng(seed_);
        std::vector<T> terms = make_terms(rng);
        const bool order_free = job_.kind == data_kind::order_free;
        const reference ref = order_free ? sum(std::span<const T>(terms))
                                         : sum(std::span<const T>(terms), {structure_a, structure_b});
        if constexpr (std::is_same_v<T, V>) {
            xs_ = std::move(terms);  // binary64, binary32: the kernels add the terms themselves
        } else {
            xs_.resize(n_);
            for (std::size_t i = 0; i < n_; ++i) xs_[i] = static_cast<V>(static_cast<float>(terms[i]));
            terms = {};
        }
        const std::vector<standard> standards = row_standards(n_);

        std::vector<placement> places(job_.plan.placements);
        for (placement& p : places) {
            p.lost_term = median_magnitude_index(rng);
            p.run_256 = rng.below(std::max<std::size_t>(1, n_ / 256));
            p.run_2048 = rng.below(std::max<std::size_t>(1, n_ / 2048));
            p.draw = rng();
        }

        table_counts local{};
        for (kernel_id k : {kernel_id::cub, kernel_id::tree256, kernel_id::pairwise}) {
            std::vector<row> rows;
            for (std::size_t r = 0; r < row_count; ++r) {
                const row rr = static_cast<row>(r);
                if (kernel_of(rr) != k) continue;
                if ((rr == row::exact_order_free) != order_free) continue;
                rows.push_back(rr);
            }
            if (rows.empty()) continue;
            kernel_runs(k, rows, standards, ref, places, local);
        }
        std::lock_guard<std::mutex> guard(job_.lock);
        for (std::size_t r = 0; r < row_count; ++r)
            for (std::size_t f = 0; f < fault_count; ++f) job_.counts[r][f].add(local[r][f]);
    }

private:
    std::vector<T> make_terms(xoshiro256& rng) const {
        if (job_.kind == data_kind::order_free) {
            // Any order when the format allows n terms of it; otherwise the structure of kernel A (which the
            // exact row judges).
            if (n_ <= testing::order_free_max_terms(format_traits<T>::info.id))
                return testing::order_free_data<T>(n_, seed_);
            return testing::order_free_data<T>(n_, seed_, structure_a);
        }
        std::vector<T> out(n_);
        static const normal_ziggurat normal;
        for (T& x : out) {
            const double v = job_.kind == data_kind::normal ? normal(rng) : rng.uniform01();
            if constexpr (std::is_floating_point_v<T>) {
                x = static_cast<T>(v);
            } else {
                x = T(static_cast<float>(v));
            }
        }
        return out;
    }

    /// The term of median magnitude among median_sample randomly drawn ones (all of them when n is smaller).
    std::size_t median_magnitude_index(xoshiro256& rng) const {
        std::vector<std::size_t> idx;
        if (n_ <= median_sample) {
            for (std::size_t i = 0; i < n_; ++i) idx.push_back(i);
        } else {
            for (std::size_t i = 0; i < median_sample; ++i) idx.push_back(rng.below(n_));
        }
        auto mid = idx.begin() + static_cast<std::ptrdiff_t>(idx.size() / 2);
        std::nth_element(idx.begin(), mid, idx.end(),
                         [&](std::size_t a, std::size_t b) { return std::fabs(xs_[a]) < std::fabs(xs_[b]); });
        return *mid;
    }

    /// The block results with terms [begin, end) zeroed (the blocks they touch recomputed; adding +0 is exact, so
    /// this is the kernel that skips those terms).
    std::vector<V> without(kernel_id k, const std::vector<V>& blocks, std::size_t begin, std::size_t end) const {
        const std::size_t b = shape_of(k).block;
        std::vector<V> out = blocks;
        end = std::min(end, n_);
        std::vector<V> tmp(b);
        for (std::size_t blk = begin / b; blk * b < end; ++blk) {
            const std::size_t lo = blk * b, m = std::min(b, n_ - lo);
            std::copy(xs_.begin() + lo, xs_.begin() + lo + m, tmp.begin());
            for (std::size_t i = std::max(begin, lo); i < std::min(end, lo + m); ++i) tmp[i - lo] = V(0);
            out[blk] = block_result<A>(k, tmp.data(), m);
        }
        return out;
    }

    static std::vector<std::uint32_t> permutation(std::size_t c, xoshiro256& rng) {
        std::vector<std::uint32_t> p(c);
        for (std::size_t i = 0; i < c; ++i) p[i] = static_cast<std::uint32_t>(i);
        for (std::size_t i = c; i > 1; --i) std::swap(p[i - 1], p[rng.below(i)]);
        return p;
    }

    /// The blocks lost at rate 10^-4, given that at least one is: the first by inverting the truncated geometric
    /// distribution, the rest by geometric gaps.
    static std::vector<std::size_t> lost_blocks(std::size_t c, xoshiro256& rng) {
        const double log_keep = std::log1p(-lost_update_rate);
        const double none = std::exp(c * log_keep);  // P(no update lost)
        std::vector<std::size_t> lost;
        const double u = rng.open01();
        std::size_t i = static_cast<std::size_t>(std::floor(std::log1p(-u * (1 - none)) / log_keep));
        i = std::min(i, c - 1);
        while (i < c) {
            lost.push_back(i);
            i += 1 + static_cast<std::size_t>(std::floor(std::log(rng.open01()) / log_keep));
        }
        return lost;
    }

    V top(kernel_id k, const std::vector<V>& blocks, std::span<const std::uint32_t> order, V start = V(0)) const {
        return shape_of(k).atomic_top ? atomic_top<A>(std::span<const V>(blocks), order, start)
                                      : A::add(start, tree_top<A>(blocks));
    }

    void kernel_runs(kernel_id k, const std::vector<row>& rows, const std::vector<standard>& standards,
                     const reference& ref, const std::vector<placement>& places, table_counts& counts) {
        const kernel_shape shape = shape_of(k);
        const std::vector<V> blocks = block_results<A>(k, std::span<const V>(xs_));
        const std::vector<V> truncated = block_results<A, true>(k, std::span<const V>(xs_));
        const std::size_t c = blocks.size();
        const format_info& info = format_traits<T>::info;
        const double abs_sum = ref.abs_sum.template round<double>();

        for (std::size_t p = 0; p < places.size(); ++p) {
            const placement& pl = places[p];
            xoshiro256 rng(pl.draw ^ (0xA5A5A5A5ull * (static_cast<std::uint64_t>(k) + 1)));
            const std::vector<std::uint32_t> order =
                shape.atomic_top ? permutation(c, rng) : std::vector<std::uint32_t>{};
            const V honest = top(k, blocks, order);

            V result[fault_count];
            bool applies[fault_count];
            std::uint64_t lost_count = 0;
            for (std::size_t f = 0; f < fault_count; ++f) applies[f] = true;
            result[0] = honest;
            result[1] = top(k, without(k, blocks, pl.lost_term, pl.lost_term + 1), order);
            result[2] = top(k, without(k, blocks, 256 * pl.run_256, 256 * pl.run_256 + 256), order);
            applies[3] = n_ >= 2 * 2048;  // a run of 2048 that is not the whole sum
            result[3] = applies[3] ? top(k, without(k, blocks, 2048 * pl.run_2048, 2048 * pl.run_2048 + 2048), order)
                                   : honest;
            applies[4] = applies[5] = c >= 2;  // with one block these faults double or lose the whole sum
            {
                const std::size_t twice = c >= 2 ? rng.below(c) : 0;
                if (shape.atomic_top) {
                    std::vector<std::uint32_t> o = order;
                    o.insert(o.begin() + static_cast<std::ptrdiff_t>(rng.below(c + 1)), static_cast<std::uint32_t>(twice));
                    result[4] = top(k, blocks, o);
                } else {
                    std::vector<V> b = blocks;
                    b[twice] = A::add(b[twice], b[twice]);  // 2v, exact
                    result[4] = top(k, b, order);
                }
            }
            if (c >= 2) {
                const std::vector<std::size_t> lost = lost_blocks(c, rng);
                lost_count = lost.size();
                if (shape.atomic_top) {
                    std::vector<bool> gone(c, false);
                    for (std::size_t i : lost) gone[i] = true;
                    std::vector<std::uint32_t> o;
                    for (std::uint32_t i : order)
                        if (!gone[i]) o.push_back(i);
                    result[5] = top(k, blocks, o);
                } else {
                    std::vector<V> b = blocks;
                    for (std::size_t i : lost) b[i] = V(0);
                    result[5] = top(k, b, order);
                }
            } else {
                result[5] = honest;
            }
            result[6] = shape.atomic_top ? atomic_top<A, true>(std::span<const V>(truncated), order)
                                         : tree_top<A, true>(truncated);
            // The previous call on the same data: an honest run in another atomic order, judged as one too.
            const V previous = shape.atomic_top ? top(k, blocks, permutation(c, rng)) : honest;
            if (shape.atomic_top) {
                result[7] = top(k, blocks, order, previous);
            } else {
                result[7] = A::add(honest, honest);
            }

            for (row r : rows) {
                const standard& model = standards[static_cast<std::size_t>(r)];
                auto& line = counts[static_cast<std::size_t>(r)];
                bool vacuous = false;
                double ratio = 0;
                if (model.decides == rule::bound) {
                    const verdict v = covers_bits(info, A::bits(honest), ref, model);
                    vacuous = v.vacuous;
                    ratio = abs_sum > 0 ? v.bound / abs_sum : 0;
                    if (!v.covered) report_honest(k, model, p, honest, v);
                } else if (!decide_bits(info, A::bits(honest), ref, model).covered) {
                    report_honest(k, model, p, honest, covers_bits(info, A::bits(honest), ref, model));
                }
                for (std::size_t f = 0; f < fault_count; ++f) {
                    if (!applies[f]) continue;
                    cell& e = line[f];
                    ++e.trials;
                    e.vacuous += vacuous;
                    e.bound_over_s += ratio;
                    e.no_effect += f != 0 && A::bits(result[f]) == A::bits(honest);
                    if (f == 5) e.lost_updates += lost_count;
                    e.rejected += !decide_bits(info, A::bits(result[f]), ref, model).covered;
                }
                if (shape.atomic_top) {
                    cell& e = line[0];
                    ++e.trials;
                    e.vacuous += vacuous;
                    e.bound_over_s += ratio;
                    if (!decide_bits(info, A::bits(previous), ref, model).covered) {
                        ++e.rejected;
                        report_honest(k, model, p, previous, covers_bits(info, A::bits(previous), ref, model));
                    }
                }
            }
        }
    }

    void report_honest(kernel_id k, const standard& model, std::size_t p, V honest, const verdict& v) const {
        honest_rejections.fetch_add(1);
        std::lock_guard<std::mutex> guard(print_lock);
        std::cerr << "HONEST RUN REJECTED: " << format_traits<T>::info.name << ' ' << kind_name(job_.kind)
                  << " n=" << n_ << " dataset " << index_ << " (seed 0x" << std::hex << seed_ << std::dec
                  << ") placement " << p << " kernel " << kernel_letter(k) << " standard " << model.name() << " result bits 0x" << std::hex << A::bits(honest) << std::dec
                  << "\n  rerun: bench_detection --dataset " << format_traits<T>::info.name << ',' << kind_name(job_.kind)
                  << ',' << n_ << ',' << index_ << "\n" << v.message() << "\n";
    }

    job& job_;
    std::size_t index_;
    std::uint64_t n_;
    std::uint64_t seed_ = 0;
    std::vector<V> xs_;
};

void run_dataset(job& j, std::size_t index) {
    switch (j.format) {
        case dtype::float64: dataset_runner<double>(j, index).run(); break;
        case dtype::float32: dataset_runner<float>(j, index).run(); break;
        case dtype::float16: dataset_runner<float16>(j, index).run(); break;
        case dtype::bfloat16: dataset_runner<bfloat16>(j, index).run(); break;
    }
}

// ---- the arithmetic check ----------------------------------------------------------------------------------------

/// The 16-bit emulation against the oracle's integer add_rounded, on random finite pairs: uniform over the encodings
/// and pairs of nearby magnitudes (where cancellation and ties happen). Returns the mismatches.
template <class H>
std::size_t check_arithmetic(std::size_t pairs) {
    using A = arithmetic<H>;
    const format_info& f = format_traits<H>::info;
    xoshiro256 rng(12345);
    std::size_t bad = 0;
    auto finite = [&](std::uint16_t b) {
        return ((b >> (f.storage_bits - 1 - f.exponent_bits)) & f.special_exponent_field()) != f.special_exponent_field();
    };
    for (std::size_t i = 0; i < pairs; ++i) {
        std::uint16_t a = static_cast<std::uint16_t>(rng()), b = static_cast<std::uint16_t>(rng());
        if (i % 2) b = static_cast<std::uint16_t>((a & 0xFF00u) ^ (rng() & 0x83FFu));  // nearby, random sign
        if (!finite(a) || !finite(b)) continue;
        H ha, hb;
        ha.bits = a;
        hb.bits = b;
        const std::uint64_t got = A::bits(A::add(static_cast<float>(ha), static_cast<float>(hb)));
        const std::uint64_t want = oracle::add_rounded(a, b, f);
        if (got != want && !(oracle::is_nan_bits(f, got) && oracle::is_nan_bits(f, want))) ++bad;
    }
    return bad;
}

// ---- the command line and the run ---------------------------------------------------------------------------------

struct options {
    std::string out;
    std::uint64_t min_n = 1000, max_n = 100'000'000;
    std::vector<dtype> formats{dtype::float64, dtype::float32, dtype::float16, dtype::bfloat16};
    std::vector<data_kind> kinds{data_kind::normal, data_kind::uniform, data_kind::order_free};
    unsigned threads = 2;
    double scale = 1;
    // --dataset FORMAT,KIND,N,INDEX: that one data set alone (to reproduce a line an honest rejection printed)
    bool single = false;
    dtype single_format = dtype::float32;
    data_kind single_kind = data_kind::normal;
    std::uint64_t single_n = 0;
    std::size_t single_index = 0;
};

data_kind parse_kind(const std::string& name) {
    for (data_kind k : {data_kind::normal, data_kind::uniform, data_kind::order_free})
        if (name == kind_name(k)) return k;
    throw std::invalid_argument("unknown data kind '" + name + "' (normal, uniform, order_free)");
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&] {
            if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return std::string(argv[++i]);
        };
        if (a == "--out") {
            o.out = value();
        } else if (a == "--max-n") {
            o.max_n = std::stoull(value());
        } else if (a == "--min-n") {
            o.min_n = std::stoull(value());
        } else if (a == "--threads") {
            o.threads = static_cast<unsigned>(std::stoul(value()));
        } else if (a == "--scale") {
            o.scale = std::stod(value());
        } else if (a == "--quick") {
            o.max_n = std::min<std::uint64_t>(o.max_n, 100'000);
            o.scale = 0.1;
        } else if (a == "--dataset") {
            std::stringstream list(value());
            std::vector<std::string> parts;
            for (std::string part; std::getline(list, part, ',');) parts.push_back(part);
            if (parts.size() != 4) throw std::invalid_argument("--dataset takes FORMAT,KIND,N,INDEX (float32,normal,1000000,17)");
            o.single = true;
            o.single_format = parse_dtype(parts[0]);
            o.single_kind = parse_kind(parts[1]);
            o.single_n = std::stoull(parts[2]);
            o.single_index = std::stoull(parts[3]);
        } else if (a == "--data") {
            o.kinds.clear();
            std::stringstream list(value());
            for (std::string name; std::getline(list, name, ',');) o.kinds.push_back(parse_kind(name));
        } else if (a == "--formats") {
            o.formats.clear();
            std::stringstream list(value());
            for (std::string name; std::getline(list, name, ',');) o.formats.push_back(parse_dtype(name));
        } else {
            throw std::invalid_argument("unknown argument '" + a + "' (see the banner of bench/bench_detection.cpp)");
        }
    }
    if (o.threads == 0 || o.scale <= 0) throw std::invalid_argument("--threads and --scale must be positive");
    return o;
}

bool sixteen_bit(dtype f) { return f == dtype::float16 || f == dtype::bfloat16; }

}  // namespace

int main(int argc, char** argv) {
    options opt;
    try {
        opt = parse(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "bench_detection: " << e.what() << '\n';
        return 2;
    }
    const std::size_t bad16 = check_arithmetic<float16>(2'000'000), badbf = check_arithmetic<bfloat16>(2'000'000);
    if (bad16 + badbf != 0) {
        std::cerr << "bench_detection: the 16-bit emulation disagrees with oracle::add_rounded (" << bad16
                  << " float16, " << badbf << " bfloat16 pairs)\n";
        return 1;
    }
    std::cerr << "bench_detection: float16/bfloat16 additions agree with oracle::add_rounded on 2x2e6 pairs\n";

    // Jobs: 10^8 only for binary64/binary32 (16-bit formats stop at 10^7: every standard but exact is vacuous far
    // below, and U(0, 1) sums overflow float16 from n = 2^17 on).
    std::vector<std::unique_ptr<job>> jobs;
    for (std::uint64_t n = 1000; n <= opt.max_n; n *= 10) {
        if (n < opt.min_n) continue;
        for (dtype f : opt.formats) {
            if (sixteen_bit(f) && n > 10'000'000) continue;
            for (data_kind k : opt.kinds) {
                if (f == dtype::float16 && k == data_kind::uniform && n > 100'000) continue;  // s > 65504: overflow
                auto j = std::make_unique<job>();
                j->format = f;
                j->kind = k;
                j->n = n;
                j->plan = plan_for(n, f, opt.scale);
                jobs.push_back(std::move(j));
            }
        }
    }
    // Work items, largest n first so that the two workers finish together.
    std::vector<std::pair<job*, std::size_t>> items;
    if (opt.single) {
        jobs.clear();
        auto j = std::make_unique<job>();
        j->format = opt.single_format;
        j->kind = opt.single_kind;
        j->n = opt.single_n;
        j->plan = plan_for(opt.single_n, opt.single_format, 1);
        items.emplace_back(j.get(), opt.single_index);
        j->plan.datasets = 1;
        jobs.push_back(std::move(j));
    }
    std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a->n > b->n; });
    for (auto& j : jobs)
        for (std::size_t d = 0; d < j->plan.datasets && !opt.single; ++d) items.emplace_back(j.get(), d);

    const auto start = std::chrono::steady_clock::now();
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::string failure;
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < opt.threads; ++t)
        pool.emplace_back([&] {
            for (std::size_t i; (i = next.fetch_add(1)) < items.size() && !failed;) {
                const auto t0 = std::chrono::steady_clock::now();
                try {
                    run_dataset(*items[i].first, items[i].second);
                } catch (const std::exception& e) {
                    std::lock_guard<std::mutex> guard(print_lock);
                    failure = e.what();
                    failed = true;
                }
                const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                std::lock_guard<std::mutex> guard(items[i].first->lock);
                items[i].first->seconds += s;
            }
        });
    for (std::thread& t : pool) t.join();
    if (failed) {
        std::cerr << "bench_detection: " << failure << '\n';
        return 1;
    }
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::ofstream file;
    if (!opt.out.empty()) {
        file.open(opt.out);
        if (!file) {
            std::cerr << "bench_detection: cannot write " << opt.out << '\n';
            return 2;
        }
    }
    std::ostream& out = opt.out.empty() ? std::cout : file;
    out << "format,data,n,fault,standard,kernel,trials,rejected,no_effect,vacuous,mean_bound_over_S,mean_lost_updates,"
           "datasets,placements,cpu_seconds\n";
    std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) {
        return std::tuple(a->format, a->kind, a->n) < std::tuple(b->format, b->kind, b->n);
    });
    for (auto& j : jobs) {
        const std::vector<standard> standards = row_standards(j->n);
        for (std::size_t r = 0; r < row_count; ++r) {
            const bool exact_row = static_cast<row>(r) == row::exact_order_free;
            if (exact_row != (j->kind == data_kind::order_free)) continue;
            for (std::size_t f = 0; f < fault_count; ++f) {
                const cell& e = j->counts[r][f];
                char line[512];
                std::snprintf(line, sizeof line, "%s,%s,%llu,%s,\"%s\",%s,%llu,%llu,%llu,%llu,%.6g,%.4g,%zu,%zu,%.1f\n",
                              std::string(info(j->format).name).c_str(), kind_name(j->kind),
                              static_cast<unsigned long long>(j->n), fault_name(all_faults[f]),
                              standards[r].name().c_str(), kernel_letter(kernel_of(static_cast<row>(r))),
                              static_cast<unsigned long long>(e.trials), static_cast<unsigned long long>(e.rejected),
                              static_cast<unsigned long long>(e.no_effect), static_cast<unsigned long long>(e.vacuous),
                              e.trials ? e.bound_over_s / static_cast<double>(e.trials) : 0.0,
                              e.trials ? static_cast<double>(e.lost_updates) / static_cast<double>(e.trials) : 0.0,
                              j->plan.datasets, j->plan.placements, j->seconds);
                out << line;
            }
        }
    }
    std::cerr << "bench_detection: " << items.size() << " data sets in " << total << " s on " << opt.threads
              << " threads; honest runs rejected: " << honest_rejections.load() << '\n';
    return honest_rejections.load() == 0 ? 0 : 3;
}
