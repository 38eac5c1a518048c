// examples/atomic_sum_demo.cpp — `make demo`: real threads summing float32 values with atomics, every result judged
// by covers() against the exact sum, with the flat any-order standard and with the structured standard of the kernel
// (standard.h, "levels:"), whose bound comes from the data.
//
//   Part A  the 10,000 values of shared/data/gauss10k_f32.txt, summed by std::thread workers with
//           std::atomic<float>::fetch_add, one update per term, several runs: the exact sum, the distinct answers,
//           both bounds (any_order and the kernel's structure levels:any), and one verdict per run and standard.
//   Part B  the same over 10^6 normal(0,1) float32 values that the demo generates from a fixed seed, writes in the
//           CLI's own text format and reads back, so `exactref covers FILE RESULT --dtype float32` can be run by hand.
//   Part C  a planted lost-update worker (load, add, store as separate steps with a widened window): its results are
//           rejected whenever the lost terms push the error past the bound, and the demo prints both kinds of verdict.
//   Part D  the same race in a kernel that folds tiles of 64 values in a register and sends one update per tile
//           (levels:fold:64,any): counts of the racy runs any_order covers and the structured standard rejects.
//
// The demo checks itself and exits 1 when a check fails: an honest atomic run that is not covered, a covers()
// verdict that disagrees with an independent exact comparison, a racy run whose books do not reproduce its result,
// no rejected racy run at all, or no tiled run that only the structured standard rejects (a racy one, or the
// same fault planted when no race fell between the two bounds). Exit 2: bad usage or
// unreadable input. See docs/demo.md.
#include <algorithm>   // std::sort
#include <bit>         // std::bit_cast
#include <chrono>
#include <cmath>       // std::log, std::cos, std::sin, std::sqrt
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>      // std::mt19937_64 (fully specified, unlike the distributions)
#include <span>
#include <stdexcept>
#include <string>
#include <thread>      // std::thread::hardware_concurrency
#include <vector>

#include "demo_options.h"
#include "demo_table.h"
#include "demo_workers.h"
#include "exactref/covers.h"
#include "exactref/io.h"
#include "exactref/reference.h"
#include "exactref/standard.h"

namespace {

namespace fs = std::filesystem;
using exactref::demo::format;
using exactref::demo::grouped;
using exactref::demo::ratio_text;
using exactref::demo::signed_sci;
using exactref::demo::table;
using align = exactref::demo::table::align;

constexpr std::uint64_t large_seed = 20240601;  // part B's generator seed, printed with the data
constexpr std::size_t part_d_tile = 64;         // part D: terms folded in a register per atomic update

/// The structure of the per-term atomic kernel of parts A-C: every term is one atomic update, in whatever order the
/// updates land, so one `any` level over all terms; its bound is the data's (structured-bounds.md, Step S2c).
const exactref::standard& per_term_structure() {
    static const exactref::standard s = exactref::parse_standard("levels:any");
    return s;
}
/// Part D's kernel: tiles of 64 consecutive terms folded, the tile sums meeting in atomics.
const exactref::standard& tiled_structure() {
    static const exactref::standard s =
        exactref::parse_standard("levels:fold:" + std::to_string(part_d_tile) + ",any");
    return s;
}

/// Failed self-checks, collected so that the demo prints everything before it exits non-zero.
struct self_checks {
    std::vector<std::string> failures;
    std::size_t passed = 0;
    void expect(bool ok, const std::string& what) {
        if (ok) {
            ++passed;
        } else {
            failures.push_back(what);
        }
    }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string hex(float x) { return exactref::to_hex_string(x); }
std::string shortest(float x) { return exactref::to_shortest_string(x); }

std::string verdict_word(const exactref::verdict& v) { return v.covered ? "covered" : "NOT COVERED"; }

/// Single-quotes a path for a shell when it holds anything but plain characters.
std::string shell_quote(const std::string& s) {
    if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,") ==
        std::string::npos) {
        return s;
    }
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

/// The CLI next to this build (build/<preset>/apps/exactref) when it exists, else plain `exactref`.
std::string cli_command(const char* argv0) {
    const fs::path cli = exactref::demo::executable_dir(argv0) / ".." / "apps" / "exactref";
    std::error_code ec;
    if (fs::is_regular_file(cli, ec)) return shell_quote(fs::weakly_canonical(cli, ec).string());
    return "exactref";
}

/// After a suggested CLI command line: how to get the CLI when it is not beside the demo (the demo preset builds
/// no CLI, so "exactref" names a command the user does not have yet). Empty when it was found.
std::string cli_note(const char* argv0) {
    if (cli_command(argv0) != "exactref") return "";
    return "    (the CLI is not part of `make demo`: `make build` builds it, or only it: `cmake --preset default && "
           "cmake --build build/default --target exactref_cli`; it is then build/default/apps/exactref)\n";
}

/// Re-checks a verdict with the superaccumulator alone, one-sidedly, as a check on covers(): |r - s| is computed
/// exactly and compared with the verdict's bound, a binary64 rounded upward from the exact bound B (so bound >= B).
/// A covered run must have |r - s| <= bound; a run above the bound must therefore be rejected.
bool verdict_agrees(float r, const exactref::reference& ref, const exactref::verdict& v) {
    exactref::superaccumulator error = ref.sum;  // s
    error.negate();
    error.add(r);                                // r - s, exactly
    if (error.sign() < 0) error.negate();
    const bool above_bound = error.compare(v.bound) > 0;
    return v.covered ? !above_bound : true;
}

/// Prints the reference lines shared by parts A, B and D: the exact values and both bounds.
void print_reference(const exactref::reference& ref, double bound, const exactref::standard& structure) {
    const float nearest = ref.nearest<float>();
    const double structured = exactref::bound(ref, structure, exactref::binary32_info);
    std::cout << "  n                  " << grouped(ref.count) << '\n'
              << "  exact sum s        " << ref.exact() << '\n'
              << "  RN_float32(s)      " << hex(nearest) << " = " << shortest(nearest) << '\n'
              << "  S = sum |x_i|      " << ref.abs_sum.to_decimal() << '\n'
              << "  any-order bound    (n-1)*u*S = " << format("%.12g", bound)
              << "   (u = 2^-24; Rump, BIT 52 (2012); Lange-Rump, BIT 57 (2017))\n"
              << "  structured bound   " << structure.name() << " = " << format("%.12g", structured)
              << format("   (%.3gx tighter: from the data's group sums, docs/algorithms/structured-bounds.md)\n",
                        bound / structured);
}

/// The verdict of `model` in a table cell: "covered" or "NOT COVERED".
std::string verdict_cell(const exactref::verdict& v) { return verdict_word(v); }

/// Runs the honest atomic sum `runs` times, prints the distinct answers and one verdict per run, and checks that
/// every run is covered. Returns the results in run order.
/// With plant_fault, worker 0 of the first run adds nothing, a bug the self-check must catch.
/// The reference must have been built with per_term_structure(); each run is judged by any_order and by it.
std::vector<float> judge_atomic_runs(std::span<const float> xs, const exactref::reference& ref, unsigned runs,
                                     unsigned threads, self_checks& checks, const std::string& part,
                                     bool plant_fault = false) {
    const exactref::standard& structure = per_term_structure();
    std::vector<float> results;
    std::vector<exactref::verdict> verdicts, structured;
    const auto start = std::chrono::steady_clock::now();
    for (unsigned run = 0; run < runs; ++run) {
        results.push_back(exactref::demo::atomic_sum(xs, threads, plant_fault && run == 0 ? 0 : -1));
    }
    const double elapsed = seconds_since(start);
    for (float r : results) {
        verdicts.push_back(exactref::covers(r, ref, exactref::any_order()));
        structured.push_back(exactref::covers(r, ref, structure));
    }

    // Distinct answers, smallest first, keyed by value (the bits of a positive or negative float sort differently).
    std::map<float, unsigned> distinct;
    for (float r : results) ++distinct[r];
    std::cout << "\n  " << distinct.size() << " distinct answer" << (distinct.size() == 1 ? "" : "s") << " in "
              << runs << " run" << (runs == 1 ? "" : "s") << " (" << threads << " threads, "
              << format("%.2f s", elapsed) << "):\n";
    table answers({{"result (hex)"}, {"result (decimal)"}, {"runs", align::right}, {"error r - s", align::right},
                   {"ulps", align::right}});
    for (const auto& [value, count] : distinct) {
        const auto v = exactref::covers(value, ref, exactref::any_order());
        answers.add_row({hex(value), shortest(value), std::to_string(count), signed_sci(v.error),
                         format("%+.1f", v.ulps)});
    }
    answers.print(std::cout, "    ");

    std::cout << "\n  one verdict per run and standard (|error|/bound: how much of the bound the run used):\n";
    table per_run({{"run", align::right}, {"result (hex)"}, {"error r - s", align::right}, {"ulps", align::right},
                   {"any_order", align::right}, {"verdict"}, {structure.name(), align::right}, {"verdict"}});
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& v = verdicts[i];
        const auto& w = structured[i];
        per_run.add_row({std::to_string(i + 1), hex(results[i]), signed_sci(v.error), format("%+.1f", v.ulps),
                         ratio_text(v.ratio), verdict_cell(v), ratio_text(w.ratio), verdict_cell(w)});
        checks.expect(v.covered, part + ": honest atomic run " + std::to_string(i + 1) + " (" + hex(results[i]) +
                                     ") is not covered by any_order:\n" + v.message());
        checks.expect(w.covered, part + ": honest atomic run " + std::to_string(i + 1) + " (" + hex(results[i]) +
                                     ") is not covered by " + structure.name() + ":\n" + w.message());
        for (const auto* verdict : {&v, &w}) {
            checks.expect(verdict_agrees(results[i], ref, *verdict),
                          part + ": covers() says covered for run " + std::to_string(i + 1) + " by " +
                              verdict->standard + " but the exact error exceeds its bound");
        }
    }
    per_run.print(std::cout, "    ");
    return results;
}

// ---- Part A ---------------------------------------------------------------------------------------------------------

/// Returns the 10,000 values so that part C can reuse them.
std::vector<float> part_a(const exactref::demo::options& opt, self_checks& checks) {
    std::cout << "\n== Part A: float32 values from a file, summed by " << opt.threads
              << " std::threads with std::atomic<float>::fetch_add ==\n\n";
    auto data = exactref::load_array(opt.input.string(), exactref::dtype::float32, true);
    std::vector<float> xs = std::get<std::vector<float>>(std::move(data.values));
    if (xs.empty()) throw std::invalid_argument(opt.input.string() + ": no values; part A needs a non-empty file");
    const auto ref = exactref::sum(std::span<const float>(xs), {per_term_structure()});
    const double bound = exactref::bound(ref, exactref::any_order(), exactref::binary32_info);

    std::cout << "  input              " << opt.input.string() << '\n';
    if (opt.plant_fault) std::cout << "  planted fault      worker 0 of run 1 skips its terms (--plant-fault)\n";
    print_reference(ref, bound, per_term_structure());

    float file_order = 0.0f;
    for (float x : xs) file_order += x;
    const auto v = exactref::covers(file_order, ref, exactref::any_order());
    std::cout << "  one thread, in file order: " << hex(file_order) << " = " << shortest(file_order)
              << format(", error %s, %+.1f ulps: ", signed_sci(v.error).c_str(), v.ulps) << verdict_word(v) << '\n';
    checks.expect(v.covered, "part A: the left-to-right sum is not covered:\n" + v.message());

    judge_atomic_runs(xs, ref, opt.runs, opt.threads, checks, "part A", opt.plant_fault);
    return xs;
}

// ---- Part B ---------------------------------------------------------------------------------------------------------

/// n normal(0, 1) values rounded to float32: Box-Muller on std::mt19937_64 (whose output the standard fixes, unlike
/// std::normal_distribution's), so the same seed gives the same file with any standard library.
std::vector<float> generate_normal(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 bits(seed);
    auto uniform_open_closed = [&] {  // (0, 1], 53 random bits: log() never sees 0
        return static_cast<double>((bits() >> 11) + 1) * 0x1p-53;
    };
    constexpr double two_pi = 6.283185307179586;
    std::vector<float> xs;
    xs.reserve(n);
    while (xs.size() < n) {
        const double radius = std::sqrt(-2.0 * std::log(uniform_open_closed()));
        const double angle = two_pi * uniform_open_closed();
        xs.push_back(static_cast<float>(radius * std::cos(angle)));
        if (xs.size() < n) xs.push_back(static_cast<float>(radius * std::sin(angle)));
    }
    return xs;
}

void part_b(const exactref::demo::options& opt, const char* argv0, self_checks& checks) {
    const std::size_t n = opt.large_n;
    std::cout << "\n== Part B: " << grouped(n) << " float32 values N(0,1), written in the CLI's format, read back, "
              << "summed by " << opt.threads << " std::threads ==\n\n";

    const auto generated = generate_normal(n, large_seed);
    fs::create_directories(opt.data_dir);
    const std::string name = n == 1'000'000 ? "gauss1m_f32.txt" : "gauss" + std::to_string(n) + "_f32.txt";
    const fs::path file = fs::absolute(opt.data_dir / name);
    auto start = std::chrono::steady_clock::now();
    {
        std::ofstream out(file);
        if (!out) throw std::invalid_argument(file.string() + ": cannot be written; pass a writable --data-dir");
        exactref::write_text(out, std::span<const float>(generated),
                             grouped(n) + " float32 values: normal(0, 1), Box-Muller on std::mt19937_64 seed " +
                                 std::to_string(large_seed) + ", written by atomic_sum_demo");
        if (!out.flush()) throw std::invalid_argument(file.string() + ": write failed (disk full?)");
    }
    const double write_s = seconds_since(start);

    start = std::chrono::steady_clock::now();
    auto data = exactref::load_array(file.string(), exactref::dtype::float32, true);
    std::vector<float> xs = std::get<std::vector<float>>(std::move(data.values));
    const double read_s = seconds_since(start);
    const bool same = xs.size() == generated.size() &&
                      std::equal(xs.begin(), xs.end(), generated.begin(), [](float a, float b) {
                          return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
                      });
    checks.expect(same, "part B: the values read back from " + file.string() + " differ from those written");

    start = std::chrono::steady_clock::now();
    const auto ref = exactref::sum(std::span<const float>(xs), {per_term_structure()});
    const double exact_s = seconds_since(start);
    const double bound = exactref::bound(ref, exactref::any_order(), exactref::binary32_info);

    std::cout << "  generator          Box-Muller on std::mt19937_64, seed " << large_seed << ", rounded to float32\n"
              << "  file               " << file.string() << format("  (%.1f MB, C99 hex floats)\n",
                                                                  static_cast<double>(fs::file_size(file)) / 1e6)
              << "  write / read back  " << format("%.2f s / %.2f s", write_s, read_s) << ", "
              << (same ? "bit-identical to the generated values" : "DIFFERENT from the generated values") << '\n'
              << "  exact reference    " << format("%.3f s (s and S, superaccumulator; the structured bound)", exact_s)
              << '\n';
    print_reference(ref, bound, per_term_structure());

    const auto results = judge_atomic_runs(xs, ref, opt.runs, opt.threads, checks, "part B");
    std::cout << "\n  check a run by hand with the CLI (exit status 0: covered):\n"
              << "    " << cli_command(argv0) << " covers " << shell_quote(file.string()) << ' ' << hex(results.front())
              << " --dtype float32\n"
              << cli_note(argv0);
}

// ---- Part C ---------------------------------------------------------------------------------------------------------

/// The racy windows of parts C and D, from a bare race to a yield in every update. "yield every <per worker>" yields
/// at each worker's last update only, which tends to lose just the few updates that land during that one yield: a
/// loss small enough to be covered.
std::vector<exactref::demo::race_window> race_schedule(unsigned per_worker) {
    using window = exactref::demo::race_window;
    return {
        {window::kind::none, 1, 0},    {window::kind::yield, per_worker, 0}, {window::kind::spin, 64, 2000},
        {window::kind::yield, 256, 0}, {window::kind::yield, 32, 0},         {window::kind::yield, 4, 0},
        {window::kind::yield, 1, 0},
    };
}

/// The exact sum of the terms of the lost updates (tiles of `tile` terms).
exactref::reference lost_sum_of(std::span<const float> xs, const std::vector<std::size_t>& lost, std::size_t tile) {
    std::vector<float> terms;
    for (std::size_t u : lost)
        for (std::size_t i = u * tile; i < std::min(xs.size(), (u + 1) * tile); ++i) terms.push_back(xs[i]);
    return exactref::sum(std::span<const float>(terms));
}

void part_c(std::span<const float> xs, const exactref::demo::options& opt, const char* argv0, self_checks& checks) {
    using window = exactref::demo::race_window;
    const exactref::standard& structure = per_term_structure();
    const unsigned threads = std::max(opt.threads, 2u);  // one thread cannot race with itself
    std::cout << "\n== Part C: a planted lost-update worker: load, add, store as separate steps, " << threads
              << " std::threads, the values of part A ==\n\n";
    const auto ref = exactref::sum(xs, {structure});
    const double bound = exactref::bound(ref, exactref::any_order(), exactref::binary32_info);
    const double structured = exactref::bound(ref, structure, exactref::binary32_info);
    std::cout << "  Each update reads the shared float, adds its term and writes it back; another worker's write in\n"
              << "  between is overwritten and its term is lost. The window between read and write is widened as\n"
              << "  the second column says. \"lost\" counts the overwritten updates; \"lost sum\" is the exact sum of\n"
              << "  their terms (known from per-update books: which write each read saw). The bounds are "
              << format("%.6g", bound) << " (any_order)\n"
              << "  and " << format("%.6g", structured) << " (" << structure.name()
              << ", this kernel's structure); a run is rejected when its error exceeds the bound,\n"
              << "  and always when |lost sum| > 2 x bound.\n\n";

    const auto per_worker = static_cast<unsigned>((xs.size() + threads - 1) / threads);
    const std::vector<window> schedule = race_schedule(per_worker);
    constexpr unsigned max_retries = 8;  // extra "yield every update" runs if no run was rejected yet
    table rows({{"run", align::right}, {"window (read .. write)"}, {"lost", align::right},
                {"lost sum", align::right}, {"result (hex)"}, {"error r - s", align::right},
                {"any_order", align::right}, {"verdict"}, {structure.name(), align::right}, {"verdict"}});
    unsigned rejected = 0;
    unsigned rejected_structured = 0;
    unsigned covered_with_losses = 0;
    unsigned covered_without_losses = 0;
    float rejected_example = 0.0f;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < schedule.size() + max_retries; ++i) {
        if (i >= schedule.size() && rejected > 0) break;
        const window w = i < schedule.size() ? schedule[i] : window{window::kind::yield, 1, 0};
        const auto run = exactref::demo::lost_update_sum(xs, threads, w);
        const auto v = exactref::covers(run.result, ref, exactref::any_order());
        const auto vs = exactref::covers(run.result, ref, structure);
        const std::string label = "part C run " + std::to_string(i + 1) + " (" + w.describe() + ", " +
                                  hex(run.result) + ")";

        const auto lost = lost_sum_of(xs, run.lost, 1);
        exactref::superaccumulator lost_magnitude = lost.sum;
        if (lost_magnitude.sign() < 0) lost_magnitude.negate();

        checks.expect(run.replay_matches, label + ": replaying the surviving updates does not give the result");
        for (const auto* verdict : {&v, &vs}) {
            checks.expect(verdict_agrees(run.result, ref, *verdict),
                          label + ": covered by " + verdict->standard + ", but the exact error exceeds the bound");
            checks.expect(!(verdict->covered && lost_magnitude.compare(2.0 * verdict->bound) > 0),
                          label + ": covered by " + verdict->standard +
                              " although the lost terms sum to more than twice the bound:\n" + verdict->message());
            checks.expect(!run.lost.empty() || verdict->covered,
                          label + ": no update was lost, yet the result is not covered:\n" + verdict->message());
        }
        checks.expect(!(v.covered == false && vs.covered),
                      label + ": rejected by any_order but covered by the tighter " + structure.name());
        if (!v.covered) {
            if (rejected == 0) rejected_example = run.result;
            ++rejected;
        } else if (!run.lost.empty()) {
            ++covered_with_losses;
        } else {
            ++covered_without_losses;
        }
        rejected_structured += !vs.covered;
        rows.add_row({std::to_string(i + 1), (i < schedule.size() ? "" : "retry: ") + w.describe(),
                      grouped(run.lost.size()),
                      run.lost.empty() ? std::string("0") : format("%+.4f", lost.sum.round<double>()), hex(run.result),
                      signed_sci(v.error), ratio_text(v.ratio), verdict_cell(v), ratio_text(vs.ratio),
                      verdict_cell(vs)});
    }
    rows.print(std::cout, "  ");
    checks.expect(rejected > 0, "part C: no lost-update run was rejected, even after " + std::to_string(max_retries) +
                                    " retries with a yield in every update");
    std::cout << format("\n  any_order: %u rejected, %u covered with lost updates, %u without any (%.2f s).\n",
                        rejected, covered_with_losses, covered_without_losses, seconds_since(start))
              << format("  %s: %u rejected, %u of them covered by any_order.\n", structure.name().c_str(),
                        rejected_structured, rejected_structured - rejected);
    if (covered_with_losses > 0) {
        std::cout << "  A covered run with lost updates lost terms that sum to less than the bound: any_order is a\n"
                  << "  statement about rounding, and a loss that small cannot be told from rounding error. With one\n"
                  << "  atomic update per term the kernel's structure is a single `any` level, and its data bound is\n"
                  << "  only about half the flat one; part D shows a kernel whose structure sees far more.\n";
    }
    if (covered_without_losses > 0) {
        std::cout << "  A run without lost updates had its workers' read-add-write steps never overlap.\n";
    }
    if (rejected > 0) {
        std::cout << "  the CLI agrees on a rejected run (exit status 1: not covered):\n"
                  << "    " << cli_command(argv0) << " covers "
                  << shell_quote(fs::absolute(opt.input).lexically_normal().string())
                  << ' ' << hex(rejected_example) << " --dtype float32\n"
                  << cli_note(argv0);
    }
}

// ---- Part D ---------------------------------------------------------------------------------------------------------

/// Counts of one window's racy runs in part D.
struct race_counts {
    unsigned runs = 0;
    unsigned with_losses = 0;
    unsigned lost_updates = 0;
    unsigned rejected_flat = 0;
    unsigned rejected_structured = 0;
    unsigned only_structured = 0;  // covered by any_order, rejected by the structured standard
};

void part_d(std::span<const float> xs, const exactref::demo::options& opt, const char* argv0, self_checks& checks) {
    using window = exactref::demo::race_window;
    const exactref::standard& structure = tiled_structure();
    const unsigned threads = std::max(opt.threads, 2u);
    const std::size_t tile = part_d_tile;
    const std::size_t updates = exactref::demo::update_count(xs.size(), tile);
    std::cout << "\n== Part D: the same race in a kernel that folds tiles of " << tile
              << " values in a register and sends one update per tile, " << threads
              << " std::threads, the values of part A ==\n\n";
    const auto ref = exactref::sum(xs, {structure});
    const double bound = exactref::bound(ref, exactref::any_order(), exactref::binary32_info);
    std::cout << "  Real kernels reduce locally before they touch shared memory. Here worker t folds tiles t, t+" << threads
              << ", ... of\n"
              << "  " << tile << " consecutive values and adds each tile's sum to the shared float (" << grouped(updates)
              << " updates). The kernel's structure\n"
              << "  is " << structure.name() << "; a lost update now loses a whole tile (" << tile
              << " terms, typically |sum| ~ 6).\n";
    print_reference(ref, bound, structure);

    // Honest tiled runs: every one covered by both standards.
    double worst_flat = 0, worst_structured = 0;
    std::map<float, unsigned> distinct;
    for (unsigned run = 0; run < opt.runs; ++run) {
        const float r = exactref::demo::atomic_sum(xs, threads, -1, tile);
        ++distinct[r];
        const auto v = exactref::covers(r, ref, exactref::any_order());
        const auto vs = exactref::covers(r, ref, structure);
        worst_flat = std::max(worst_flat, v.ratio);
        worst_structured = std::max(worst_structured, vs.ratio);
        const std::string label = "part D: honest tiled run " + std::to_string(run + 1) + " (" + hex(r) + ")";
        checks.expect(v.covered, label + " is not covered by any_order:\n" + v.message());
        checks.expect(vs.covered, label + " is not covered by " + structure.name() + ":\n" + vs.message());
        checks.expect(verdict_agrees(r, ref, vs), label + ": covered, but the exact error exceeds the bound");
    }
    std::cout << "\n  " << opt.runs << " honest tiled runs (fetch_add per tile): " << distinct.size()
              << " distinct answer" << (distinct.size() == 1 ? "" : "s") << ", every one covered by both standards\n"
              << "  (largest |error|/bound: any_order " << ratio_text(worst_flat) << ", " << structure.name() << ' '
              << ratio_text(worst_structured) << ").\n\n";

    // Racy tiled runs, every window several times; more rounds while no run shows the difference.
    const auto per_worker = static_cast<unsigned>((updates + threads - 1) / threads);
    // From sparse to heavy losses. "work" busy-waits before each update (the tile's compute, outside the window) so
    // that the workers run side by side; "wait for a store" holds a read until another worker's store lands, which
    // loses about that one update (with every = the updates per worker, one or two tiles a run).
    const std::vector<window> schedule = {
        {window::kind::none, 1, 0, 2000},        {window::kind::spin, 1, 100, 2000},
        {window::kind::wait, per_worker, 0, 2000}, {window::kind::wait, per_worker / 2, 0, 2000},
        {window::kind::wait, 8, 0, 2000},          {window::kind::spin, 4, 2000, 2000},
        {window::kind::yield, per_worker, 0, 2000},
    };
    const unsigned rounds = opt.quick ? 3 : 5;
    constexpr unsigned max_extra_rounds = 8;
    std::vector<race_counts> counts(schedule.size());
    race_counts total;
    float example = 0.0f;  // a run that any_order covers and the structured standard rejects
    const auto start = std::chrono::steady_clock::now();
    for (unsigned round = 0; round < rounds + max_extra_rounds; ++round) {
        if (round >= rounds && total.only_structured > 0) break;
        for (std::size_t i = 0; i < schedule.size(); ++i) {
            const auto run = exactref::demo::lost_update_sum(xs, threads, schedule[i], tile);
            const auto v = exactref::covers(run.result, ref, exactref::any_order());
            const auto vs = exactref::covers(run.result, ref, structure);
            const std::string label = "part D run (" + schedule[i].describe() + ", " + hex(run.result) + ")";
            const auto lost = lost_sum_of(xs, run.lost, tile);
            exactref::superaccumulator lost_magnitude = lost.sum;
            if (lost_magnitude.sign() < 0) lost_magnitude.negate();
            checks.expect(run.replay_matches, label + ": replaying the surviving updates does not give the result");
            checks.expect(verdict_agrees(run.result, ref, vs), label + ": covered, but the exact error exceeds the bound");
            for (const auto* verdict : {&v, &vs}) {
                checks.expect(!(verdict->covered && lost_magnitude.compare(2.0 * verdict->bound) > 0),
                              label + ": covered by " + verdict->standard +
                                  " although the lost tiles sum to more than twice its bound:\n" + verdict->message());
            }
            checks.expect(!run.lost.empty() || (v.covered && vs.covered),
                          label + ": no update was lost, yet the result is not covered:\n" + vs.message());
            checks.expect(!(!v.covered && vs.covered),
                          label + ": rejected by any_order but covered by the tighter " + structure.name());
            race_counts& c = counts[i];
            for (race_counts* t : {&c, &total}) {
                ++t->runs;
                t->with_losses += !run.lost.empty();
                t->lost_updates += static_cast<unsigned>(run.lost.size());
                t->rejected_flat += !v.covered;
                t->rejected_structured += !vs.covered;
                t->only_structured += v.covered && !vs.covered;
            }
            if (v.covered && !vs.covered && total.only_structured == 1) example = run.result;
        }
    }
    table rows({{"window (read .. write)"}, {"runs", align::right}, {"runs that lost updates", align::right},
                {"lost updates", align::right}, {"rejected: any_order", align::right},
                {structure.name(), align::right}, {"only " + structure.name(), align::right}});
    for (std::size_t i = 0; i < schedule.size(); ++i) {
        const race_counts& c = counts[i];
        rows.add_row({schedule[i].describe(), std::to_string(c.runs), std::to_string(c.with_losses),
                      grouped(c.lost_updates), std::to_string(c.rejected_flat), std::to_string(c.rejected_structured),
                      std::to_string(c.only_structured)});
    }
    rows.add_row({"all", std::to_string(total.runs), std::to_string(total.with_losses), grouped(total.lost_updates),
                  std::to_string(total.rejected_flat), std::to_string(total.rejected_structured),
                  std::to_string(total.only_structured)});
    rows.print(std::cout, "  ");
    std::cout << format("\n  Of %u racy runs that lost updates, any_order rejected %u and %s %u: %u run%s that\n"
                        "  any_order covers and the structured standard catches (%.2f s).\n",
                        total.with_losses, total.rejected_flat, structure.name().c_str(), total.rejected_structured,
                        total.only_structured, total.only_structured == 1 ? "" : "s", seconds_since(start));
    if (total.only_structured == 0) {
        // The races are the machine's: on a quiet one no lost tile may fall between the two bounds. The same fault,
        // planted: the tiles added in order, the first tile whose sum lies between twice the structured bound and
        // half the flat one never added.
        const double flat_bound = exactref::bound(ref, exactref::any_order(), exactref::binary32_info);
        const double structured_bound = exactref::bound(ref, structure, exactref::binary32_info);
        std::vector<float> tile_sums;
        for (std::size_t b = 0; b < xs.size(); b += tile) {
            float a = 0.0f;
            for (std::size_t i = b; i < std::min(xs.size(), b + tile); ++i) a += xs[i];
            tile_sums.push_back(a);
        }
        for (std::size_t lost = 0; lost < tile_sums.size() && total.only_structured == 0; ++lost) {
            const double m = std::fabs(static_cast<double>(tile_sums[lost]));
            if (m <= 2 * structured_bound || m >= flat_bound / 2) continue;
            float r = 0.0f;
            for (std::size_t t = 0; t < tile_sums.size(); ++t)
                if (t != lost) r += tile_sums[t];
            const bool flat_covers = exactref::covers(r, ref, exactref::any_order()).covered;
            const bool structured_covers = exactref::covers(r, ref, structure).covered;
            if (flat_covers && !structured_covers) {
                total.only_structured = 1;
                example = r;
                std::cout << "  No racy run fell between the bounds on this machine; the same fault planted (tile "
                          << lost << " of " << tile_sums.size() << " never added) is one:\n";
            }
        }
    }
    checks.expect(total.only_structured > 0,
                  "part D: no run, racy or planted, was rejected by " + structure.name() + " and covered by any_order");
    if (total.only_structured > 0) {
        const std::string file = shell_quote(fs::absolute(opt.input).lexically_normal().string());
        std::cout << "  by hand with the CLI, one such run: any_order covers it (exit status 0):\n"
                  << "    " << cli_command(argv0) << " covers " << file << ' ' << hex(example) << " --dtype float32\n"
                  << "  and the kernel's structured standard does not (exit status 1):\n"
                  << "    " << cli_command(argv0) << " covers " << file << ' ' << hex(example)
                  << " --dtype float32 --standard " << structure.name() << '\n'
                  << cli_note(argv0);
    }
}

}  // namespace

int main(int argc, char** argv) {
    exactref::demo::options opt;
    try {
        opt = exactref::demo::parse_options(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "atomic_sum_demo: " << e.what() << '\n';
        return 2;
    }
    if (opt.help) {
        std::cout << exactref::demo::usage_text;
        return 0;
    }

    std::cout << "exactref demo: atomic float32 sums on " << opt.threads << " threads ("
              << std::thread::hardware_concurrency() << " hardware threads), every result judged by covers()\n";
    self_checks checks;
    const auto start = std::chrono::steady_clock::now();
    try {
        const auto values = part_a(opt, checks);
        part_b(opt, argc > 0 ? argv[0] : nullptr, checks);
        part_c(values, opt, argc > 0 ? argv[0] : nullptr, checks);
        part_d(values, opt, argc > 0 ? argv[0] : nullptr, checks);
    } catch (const std::exception& e) {
        std::cout.flush();
        std::cerr << "atomic_sum_demo: " << e.what() << '\n';
        return 2;
    }

    std::cout << "\n== Self-check ==\n";
    if (checks.failures.empty()) {
        std::cout << "  OK: " << checks.passed << " checks passed (" << format("%.1f s", seconds_since(start))
                  << "): every honest atomic run covered by both standards, every racy\n"
                  << "  run's books reproduce its result, covers() agrees with an exact re-check, a lost-update run "
                  << "was\n  rejected, and a tiled one was caught by the structured standard alone.\n";
        return 0;
    }
    for (const auto& f : checks.failures) {
        std::string indented;
        for (char c : f) indented += c == '\n' ? std::string("\n      ") : std::string(1, c);
        std::cout << "  FAILED: " << indented << '\n';
    }
    std::cout << "  " << checks.failures.size() << " of " << checks.failures.size() + checks.passed
              << " checks failed\n";
    return 1;
}
