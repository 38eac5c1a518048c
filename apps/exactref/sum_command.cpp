// `exactref sum [--dtype D] [--json] FILE|-`: the exact sum of the data, its correctly rounded value in the dtype,
// Σ|x| and the any-order bound (n-1)·u·Σ|x| (shared/DESIGN.md §6; the bound: Rump, BIT 52 (2012); Lange–Rump,
// BIT 57 (2017)).
//
// Text output (one "key  value" line each), e.g. for shared/data/gauss10k_f32.txt --dtype float32:
//   n                10000
//   exact            30.604261366177525...
//   nearest          30.604261  (0x1.e9ab0ep+4)
//   any_order_bound  4.72203014716...
// JSON keys (contract): n, dtype, exact, nearest, nearest_hex, abs_sum, any_order_bound (a number, rounded upward to
// binary64; null when special values decide the result and no finite bound applies).
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "exactref/covers.h"
#include "exactref/standard.h"

namespace {

void run_sum(const exactref::cli::input_options& options) {
    namespace cli = exactref::cli;
    const cli::streamed_reference in = cli::stream_reference(options);  // O(1) memory in the input's size
    const exactref::format_info& f = *in.format;
    const exactref::reference& ref = in.ref;
    const std::uint64_t nearest_bits = ref.sum.round_bits(f, exactref::rounding::to_nearest_even);
    const std::string nearest = exactref::to_shortest_string(f, nearest_bits);
    const std::string nearest_hex = exactref::to_hex_string(f, nearest_bits);
    const double bound = exactref::bound(ref, exactref::any_order(), f);

    if (options.json) {
        nlohmann::json j;
        j["n"] = ref.count;
        j["dtype"] = std::string(f.name);
        j["exact"] = ref.exact();
        j["nearest"] = nearest;
        j["nearest_hex"] = nearest_hex;
        j["abs_sum"] = ref.abs_sum.to_decimal();
        j["any_order_bound"] = std::isfinite(bound) ? nlohmann::json(bound) : nlohmann::json(nullptr);
        std::cout << j.dump(2) << '\n';
        return;
    }
    fmt::print("n                {}\n", ref.count);
    fmt::print("dtype            {}\n", f.name);
    fmt::print("exact            {}\n", ref.exact());
    fmt::print("nearest          {}  ({})\n", nearest, nearest_hex);
    fmt::print("abs_sum          {}\n", ref.abs_sum.to_decimal());
    fmt::print("any_order_bound  {}  ((n-1)*u*abs_sum, u = 2^{}, rounded up)\n", cli::shortest(bound),
               f.u_exponent());
}

}  // namespace

void register_sum(CLI::App& app) {
    auto options = std::make_shared<exactref::cli::input_options>();
    CLI::App* command = app.add_subcommand(
        "sum", "exact sum of the numbers in FILE, its nearest value in the dtype, sum of |x|, any-order bound");
    exactref::cli::add_input_options(*command, *options);
    command->callback([options] { run_sum(*options); });
}
