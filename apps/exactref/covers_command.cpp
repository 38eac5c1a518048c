// `exactref covers FILE RESULT... [--standard S] [--dtype D] [--json]`: one verdict per RESULT, decided exactly by
// exactref::covers_bits (shared/DESIGN.md §3, §6).
//
// Each RESULT is parsed correctly rounded into the result format (the dtype; for mixed:ACC:OUT, the format OUT),
// so "30.604263" and "0x1.e9ab46p+4" name the same float32. Every RESULT is parsed before anything is printed: a
// malformed one is a usage error (exit 2) and no verdict is given.
//
// Text output: the standard, the exact sum, then one line per RESULT:
//   COVERED      30.604263 (0x1.e9ab46p+4)   error +1.19e-06  bound 4.72203  ratio 2.52e-07  ulps +0.625
// JSON keys (contract): covered (all of them), verdicts (list of {result, covered, error, bound, ulps}); also
// standard, dtype, n, exact, and per verdict input (the RESULT text as typed: cli::as_given), result_hex, error_exact,
// ratio, reason. Doubles that are not
// finite (an infinite bound, the error of an Inf result) are null.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "exactref/covers.h"
#include "exactref/standard.h"

namespace {

struct covers_options {
    exactref::cli::input_options input;
    std::vector<std::string> results;
    std::string standard_name = "any_order";
};

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

/// A display number for the text table: "n/a" where no number applies (the error of an Inf or NaN result).
std::string shown(double x, bool with_sign, int digits) {
    if (std::isnan(x)) return "n/a";
    return with_sign ? fmt::format("{:+.{}g}", x, digits) : fmt::format("{:.{}g}", x, digits);
}

void run_covers(const covers_options& options) {
    namespace cli = exactref::cli;
    const exactref::standard model = exactref::parse_standard(options.standard_name);
    const cli::loaded_input in = cli::load_input(options.input);
    const exactref::format_info& result_format =
        model.is_mixed() && model.output ? exactref::info(*model.output) : *in.format;

    std::vector<std::uint64_t> result_bits;
    for (const std::string& text : options.results) {
        try {
            result_bits.push_back(exactref::parse_number_bits(text, result_format));
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument("RESULT " + std::to_string(result_bits.size() + 1) + ": " + e.what());
        }
    }

    const exactref::reference ref = cli::reference_of(in.data);
    std::vector<exactref::verdict> verdicts;
    bool all_covered = true;
    for (const std::uint64_t bits : result_bits) {
        verdicts.push_back(exactref::covers_bits(result_format, bits, ref, model));
        all_covered = all_covered && verdicts.back().covered;
    }
    cli::set_exit_status(all_covered ? cli::exit_ok : cli::exit_not_covered);

    if (options.input.json) {
        nlohmann::json j;
        j["covered"] = all_covered;
        j["standard"] = model.name();
        j["dtype"] = std::string(result_format.name);
        j["n"] = ref.count;
        j["exact"] = ref.exact();
        nlohmann::json list = nlohmann::json::array();
        for (std::size_t i = 0; i < verdicts.size(); ++i) {
            const exactref::verdict& v = verdicts[i];
            list.push_back({{"input", cli::as_given(options.results[i])},
                            {"result", exactref::to_shortest_string(result_format, result_bits[i])},
                            {"result_hex", exactref::to_hex_string(result_format, result_bits[i])},
                            {"covered", v.covered},
                            {"error", number_or_null(v.error)},
                            {"error_exact", v.error_exact},
                            {"bound", number_or_null(v.bound)},
                            {"ratio", number_or_null(v.ratio)},
                            {"ulps", number_or_null(v.ulps)},
                            {"reason", v.reason}});
        }
        j["verdicts"] = std::move(list);
        std::cout << j.dump(2) << '\n';
        return;
    }

    fmt::print("standard  {}  ({}, n = {})\n", model.name(), result_format.name, ref.count);
    fmt::print("exact     {}\n", ref.exact());
    std::size_t covered = 0;
    for (std::size_t i = 0; i < verdicts.size(); ++i) {
        const exactref::verdict& v = verdicts[i];
        covered += v.covered ? 1 : 0;
        const std::string result = exactref::to_shortest_string(result_format, result_bits[i]) + " (" +
                                   exactref::to_hex_string(result_format, result_bits[i]) + ")";
        fmt::print("{:<12} {:<30} error {:<11} bound {:<11} ratio {:<10} ulps {}{}\n",
                   v.covered ? "COVERED" : "NOT COVERED", result, shown(v.error, true, 3), shown(v.bound, false, 6),
                   shown(v.ratio, false, 3), shown(v.ulps, true, 6), v.reason.empty() ? "" : "  (" + v.reason + ")");
    }
    fmt::print("{} of {} results covered by {}\n", covered, verdicts.size(), model.name());
}

}  // namespace

void register_covers(CLI::App& app) {
    auto options = std::make_shared<covers_options>();
    CLI::App* command = app.add_subcommand(
        "covers", "is each RESULT within the error model (--standard) of the exact sum of FILE? exit 0 when all are");
    exactref::cli::add_input_options(*command, options->input);
    command->add_option("RESULT", options->results,
                        "computed sums to judge: decimal, C99 hex float (0x1.e9ab46p+4), inf or nan; each is rounded "
                        "once into the dtype")
        ->required();
    command->add_option("--standard", options->standard_name,
                        "error model: any_order (default), exact, faithful, tree:H, split_k:S, split_k:S:pairwise, "
                        "mixed:ACC:OUT, directed:<model>");
    command->callback([options] { run_covers(*options); });
}
