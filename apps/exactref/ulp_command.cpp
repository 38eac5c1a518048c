// `exactref ulp [--dtype D] [--json] FILE|-`: how far the usual summation orders land from the exact sum, in ulps of
// the exact sum in the dtype (shared/DESIGN.md §6). Orders (orders.h, tree.h), each accumulated in the dtype:
//   left_fold    ((x0 + x1) + x2) + ...
//   kahan        Kahan–Babuška compensated sum (Neumaier 1974)
//   pairwise     numpy's pairwise summation (blocks of 128, 8 partial sums)
//   halving256   the canonical tree (same bits on every thread count and on the device)
//   fold16       leaves of 16 folded from 0, then pairwise
// The ulp error is (r - s) / ulp(s), computed exactly and rounded once (ulp.h): 0 means r is s, ±0.5 or less means r
// is a correct rounding of s.
//
// Text output, e.g. for the harmonic series 1/i, i = 1..10^7, float64:
//   n           10000000
//   dtype       float64
//   exact       16.695311365859851761239017191...
//   nearest     16.69531136585985  (0x1.0b1ffecf8e7b8p+4)
//
//   order       result              hex                      ulp_error
//   left_fold   16.695311365857272  0x1.0b1ffecf8e1b9p+4     -726.484
//   ...
// JSON keys: n, dtype, exact, nearest, nearest_hex, orders (a list of {order, result, result_hex, ulp_error}; ulp_error
// is null when it is not finite: NaN or Inf results).
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "commands.h"
#include "exactref/orders.h"
#include "exactref/tree.h"
#include "exactref/ulp.h"

namespace {

struct order_result {
    std::string name;
    std::uint64_t bits = 0;
    double ulps = 0;
};

template <class T>
std::vector<order_result> run_orders(const std::vector<T>& xs, const exactref::reference& ref) {
    using namespace exactref;
    const std::span<const T> s(xs);
    const std::pair<const char*, T> results[] = {
        {"left_fold", fold_sum(s)},           {"kahan", kahan_sum(s)}, {"pairwise", pairwise_sum(s)},
        {"halving256", tree_sum(s, halving())}, {"fold16", tree_sum(s, fold())},
    };
    std::vector<order_result> out;
    for (const auto& [name, r] : results)
        out.push_back({name, static_cast<std::uint64_t>(format_traits<T>::to_bits(r)), ulp_error(r, ref)});
    return out;
}

std::string ulps_text(double u) {
    if (std::isnan(u)) return "nan";
    if (std::isinf(u)) return u > 0 ? "inf" : "-inf";
    return fmt::format("{:.3f}", u);
}

void run_ulp(const exactref::cli::input_options& options) {
    namespace cli = exactref::cli;
    const cli::loaded_input in = cli::load_input(options);
    const exactref::format_info& f = *in.format;
    const exactref::reference ref = cli::reference_of(in.data);
    const std::vector<order_result> rows =
        std::visit([&](const auto& xs) { return run_orders(xs, ref); }, in.data.values);
    const std::uint64_t nearest_bits = ref.sum.round_bits(f, exactref::rounding::to_nearest_even);

    if (options.json) {
        nlohmann::json j;
        j["n"] = ref.count;
        j["dtype"] = std::string(f.name);
        j["exact"] = ref.exact();
        j["nearest"] = exactref::to_shortest_string(f, nearest_bits);
        j["nearest_hex"] = exactref::to_hex_string(f, nearest_bits);
        j["orders"] = nlohmann::json::array();
        for (const order_result& r : rows)
            j["orders"].push_back({{"order", r.name},
                                   {"result", exactref::to_shortest_string(f, r.bits)},
                                   {"result_hex", exactref::to_hex_string(f, r.bits)},
                                   {"ulp_error", std::isfinite(r.ulps) ? nlohmann::json(r.ulps) : nlohmann::json(nullptr)}});
        std::cout << j.dump(2) << '\n';
        return;
    }
    fmt::print("n           {}\n", ref.count);
    fmt::print("dtype       {}\n", f.name);
    fmt::print("exact       {}\n", ref.exact());
    fmt::print("nearest     {}  ({})\n\n", exactref::to_shortest_string(f, nearest_bits),
               exactref::to_hex_string(f, nearest_bits));
    fmt::print("{:<11} {:<26} {:<26} {}\n", "order", "result", "hex", "ulp_error");
    for (const order_result& r : rows)
        fmt::print("{:<11} {:<26} {:<26} {}\n", r.name, exactref::to_shortest_string(f, r.bits),
                   exactref::to_hex_string(f, r.bits), ulps_text(r.ulps));
}

}  // namespace

void register_ulp(CLI::App& app) {
    auto options = std::make_shared<exactref::cli::input_options>();
    CLI::App* command = app.add_subcommand(
        "ulp", "ULP error against the exact sum of left fold, Kahan, pairwise, halving(256) and fold(16) sums");
    exactref::cli::add_input_options(*command, *options);
    command->callback([options] { run_ulp(*options); });
}
