// `exactref covers FILE RESULT... [--standard S] [--dtype D] [--json] [--explain]`: one verdict per RESULT, decided
// exactly by exactref::covers_bits (shared/DESIGN.md §3, §6).
//
// Each RESULT is parsed correctly rounded into the result format (the dtype; for mixed:ACC:OUT, the format OUT),
// so "30.604263" and "0x1.e9ab46p+4" name the same float32. Every RESULT is parsed before anything is printed: a
// malformed one is a usage error (exit 2) and no verdict is given. A structured standard (levels:...) gets its
// bound from the data: the reference is built with it, from the array load_input holds.
//
// Text output: the standard, the exact sum, what the check can see (bound standards), then one line per RESULT:
//   COVERED      30.604263 (0x1.e9ab46p+4)   error +1.19e-06  bound 4.72203  ratio 2.52e-07  ulps +0.625
// and with --explain, per RESULT, every candidate standard of exactref::explain (covering ones first, tightest
// first). A vacuous check (B >= S: it cannot see any lost or doubled part of the terms) is marked on each line and
// warned about once on stderr with the library's advice; the exit status still follows the verdicts.
// --results FILE adds the results in FILE (text or .npy, parsed like data in the result format); a FILE with no
// numbers, or FILE and --results both '-', is a usage error. RESULT arguments that overflow or underflow when parsed
// are warned about as numbers in a file are (warn_parse_report, counted by argument). A rejected result
// that is a value of a narrower format and lies within the standard read in that format gets a hint on stderr
// (exactref::suggest_narrower_format; the verdict and the exit status are not changed).
// JSON keys (contract): covered (all of them), verdicts (list of {result, covered, error, bound, ulps}); also
// standard, dtype, n, exact, and per verdict input (the RESULT text as typed: cli::as_given), result_hex, error_exact,
// ratio, reason, vacuous, sensitivity ({of_sum, of_abs_sum, of_largest}), advice, hint_dtype (the narrower dtype
// of the hint, or null), and with --explain explain (list of
// {standard, covered, bound, ratio, vacuous, reason}). Doubles that are not finite (an infinite bound, the error of
// an Inf result, a sensitivity of an exact zero sum) are null.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cctype>  // std::tolower
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "exactref/covers.h"
#include "exactref/standard.h"

namespace {

struct covers_options {
    exactref::cli::input_options input;
    std::vector<std::string> results;
    std::string results_file;  // --results FILE: more results, read like data (text or .npy) in the result format
    std::string standard_name = "any_order";
    bool any_zero_sign = false;  // --any-zero-sign: either sign of an exact zero (standard::any_zero_sign)
    bool explain = false;
};

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

/// A display number for the text table: "n/a" where no number applies (the error of an Inf or NaN result).
std::string shown(double x, bool with_sign, int digits) {
    if (std::isnan(x)) return "n/a";
    return with_sign ? fmt::format("{:+.{}g}", x, digits) : fmt::format("{:.{}g}", x, digits);
}

nlohmann::json sensitivity_json(const exactref::verdict_sensitivity& s) {
    return {{"of_sum", number_or_null(s.of_sum)},
            {"of_abs_sum", number_or_null(s.of_abs_sum)},
            {"of_largest", number_or_null(s.of_largest)}};
}

/// What a bound standard can see, in one line: B against the largest term, S and |s| (the verdict's sensitivity).
std::string sees_line(const exactref::verdict& v) {
    if (v.vacuous) return "nothing: the check is VACUOUS (B >= S = sum of |x|): no lost or doubled part of the terms "
                          "can be seen, not even a result of 0";
    std::string out = "a fault only if it moves the sum by more than B = " + shown(v.bound, false, 6) + " (";
    if (std::isfinite(v.sensitivity.of_largest)) out += shown(v.sensitivity.of_largest, false, 3) + "x the largest |x|, ";
    out += shown(v.sensitivity.of_abs_sum, false, 3) + " of S";
    if (std::isfinite(v.sensitivity.of_sum)) out += ", " + shown(v.sensitivity.of_sum, false, 3) + "x |s|";
    out += ")";
    if (std::isfinite(v.sensitivity.of_largest) && v.sensitivity.of_largest >= 1)
        out += ": a lost term smaller than B cannot be seen";
    return out;
}

/// The results of --results FILE as raw bits of the result format: parsed like data (array_reader: text in the
/// result format, or a .npy of that dtype), in chunks; the bits are kept, 8 bytes a result.
/// `format_from` says where the result format came from, for the message when a .npy FILE holds another dtype.
std::vector<std::uint64_t> results_from_file(const covers_options& options, const exactref::format_info& f,
                                             const std::string& format_from) {
    std::vector<std::uint64_t> bits;
    const std::string path = exactref::cli::as_given(options.results_file);
    const std::string where = path == "-" ? "<stdin>" : path;
    try {
        // The file's own dtype first (a bfloat16 '<V2' file only reads as bfloat16 when asked for), so that a
        // mismatch names where the result format came from rather than a --dtype the user may not have given.
        exactref::array_reader reader(path, f.id, f.id == exactref::dtype::bfloat16);
        if (reader.type() != f.id)
            throw std::invalid_argument(where + " holds " + std::string(exactref::info(reader.type()).name) +
                                        " values, but the results are judged in " + std::string(f.name) + " (" +
                                        format_from + "): save the results as " + std::string(f.name) +
                                        " or as text, or give the format they were computed in");
        exactref::data_array chunk;
        while (reader.next(chunk))
            std::visit(
                [&bits](const auto& v) {
                    for (const auto& x : v) bits.push_back(exactref::format_traits<std::decay_t<decltype(x)>>::to_bits(x));
                },
                chunk.values);
        exactref::cli::warn_parse_report(reader.report(), f, options.results_file);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("--results: ") + e.what());
    }
    if (bits.empty())
        throw std::invalid_argument("--results: no results to judge in " + where +
                                    " (it holds no numbers): put one computed sum per line (text, '#' comments "
                                    "allowed) or save them as a .npy, or give them as RESULT arguments");
    return bits;
}

/// True when the text of a number (as parse_number_bits takes it) has a non-zero digit in its significand: a
/// result of 0 from such a text underflowed.
bool has_nonzero_significand(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '+' || text.front() == '-')) text.remove_prefix(1);
    const bool hex = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (hex) text.remove_prefix(2);
    for (const char c : text) {
        if (c == (hex ? 'p' : 'e') || c == (hex ? 'P' : 'E')) break;
        if ((c >= '1' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))) return true;
    }
    return false;
}

/// What parsing changed about the RESULT arguments (the warning --results FILE gets, counted by argument): a
/// finite number that became ±inf, a non-zero one that became ±0.
exactref::parse_report report_of_arguments(const std::vector<std::string>& texts,
                                           const std::vector<std::uint64_t>& bits, const exactref::format_info& f) {
    exactref::parse_report report;
    for (std::size_t i = 0; i < bits.size(); ++i) {
        const exactref::decoded d = exactref::decode_bits(f, bits[i]);
        std::string lower;
        for (const char c : texts[i]) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        if (d.is_inf && lower.find("inf") == std::string::npos && ++report.overflowed == 1)
            report.first_overflow_line = i + 1;
        if (!d.is_inf && !d.is_nan && d.significand == 0 && has_nonzero_significand(texts[i]) &&
            ++report.underflowed == 1)
            report.first_underflow_line = i + 1;
    }
    return report;
}

/// "hint: ..." on stderr when a rejected result looks computed in a narrower format (suggest_narrower_format).
std::optional<exactref::dtype> hint_for(const exactref::format_info& f, std::uint64_t bits,
                                        const exactref::reference& ref, const exactref::standard& model,
                                        const std::string& shown_result) {
    const std::optional<exactref::dtype> narrower = exactref::suggest_narrower_format(f, bits, ref, model);
    if (narrower) {
        const std::string_view name = exactref::info(*narrower).name;
        std::cerr << "exactref: hint: " << shown_result << " is a " << name << " value and lies within "
                  << (model.decides == exactref::rule::bound ? model.name() : std::string("any_order")) << " read in "
                  << name << ": if it was computed in " << name << ", judge it as one with --dtype " << name
                  << " (this verdict is for " << f.name << ")\n";
    }
    return narrower;
}

void run_covers(const covers_options& options) {
    namespace cli = exactref::cli;
    exactref::standard model = exactref::parse_standard(options.standard_name);
    model.any_zero_sign = options.any_zero_sign;
    if (options.results.empty() && options.results_file.empty())
        throw CLI::RequiredError("RESULT (or --results FILE)");
    if (cli::as_given(options.input.file) == "-" && cli::as_given(options.results_file) == "-")
        throw CLI::ValidationError("only one of FILE and --results can be '-' (standard input is read once, for "
                                   "one of them): save the data or the results to a file",
                                   CLI::ExitCodes::ValidationError);

    // A structured standard's bound comes from the data's group sums: the reference is built with it (from the
    // whole array); every other standard streams the data.
    std::vector<exactref::standard> structures;
    if (model.structured) structures.push_back(model);
    const cli::streamed_reference in = cli::stream_reference(options.input, structures);
    const exactref::reference& ref = in.ref;
    const exactref::format_info& result_format =
        model.is_mixed() && model.output ? exactref::info(*model.output) : *in.format;

    std::vector<std::uint64_t> result_bits;
    std::vector<std::string> inputs;  // as typed, or the shortest decimal for --results
    for (const std::string& text : options.results) {
        try {
            result_bits.push_back(exactref::parse_number_bits(text, result_format));
            inputs.push_back(cli::as_given(text));
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument("RESULT " + std::to_string(result_bits.size() + 1) + ": " + e.what());
        }
    }
    cli::warn_parse_report(report_of_arguments(options.results, result_bits, result_format), result_format,
                           "the RESULT arguments", 0, "RESULT");
    if (!options.results_file.empty()) {
        const std::string format_from =
            model.is_mixed() && model.output ? "the output format of --standard " + model.name()
            : options.input.dtype_option != nullptr && options.input.dtype_option->count() > 0
                ? "--dtype " + std::string(result_format.name)
                : "the format of the data in " + (cli::as_given(options.input.file) == "-"
                                                      ? std::string("<stdin>")
                                                      : cli::as_given(options.input.file));
        for (const std::uint64_t bits : results_from_file(options, result_format, format_from)) {
            result_bits.push_back(bits);
            inputs.push_back(exactref::to_shortest_string(result_format, bits));
        }
    }

    std::vector<exactref::verdict> verdicts;
    std::vector<std::vector<exactref::verdict>> explained;
    std::vector<std::optional<exactref::dtype>> hints;
    bool all_covered = true;
    for (std::size_t i = 0; i < result_bits.size(); ++i) {
        const std::uint64_t bits = result_bits[i];
        verdicts.push_back(exactref::covers_bits(result_format, bits, ref, model));
        all_covered = all_covered && verdicts.back().covered;
        hints.push_back(verdicts.back().covered ? std::nullopt
                                                : hint_for(result_format, bits, ref, model, inputs[i]));
        if (options.explain)
            explained.push_back(exactref::explain_bits(result_format, bits, ref, options.any_zero_sign));
    }
    cli::set_exit_status(all_covered ? cli::exit_ok : cli::exit_not_covered);
    // Vacuity depends on the reference and the standard, not on the result: one warning for the run.
    for (const exactref::verdict& v : verdicts) {
        if (!v.vacuous) continue;
        std::cerr << "exactref: warning: " << model.name() << " is vacuous for this input: " << v.advice << "\n";
        break;
    }

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
            list.push_back({{"input", inputs[i]},
                            {"result", exactref::to_shortest_string(result_format, result_bits[i])},
                            {"result_hex", exactref::to_hex_string(result_format, result_bits[i])},
                            {"covered", v.covered},
                            {"error", number_or_null(v.error)},
                            {"error_exact", v.error_exact},
                            {"bound", number_or_null(v.bound)},
                            {"ratio", number_or_null(v.ratio)},
                            {"ulps", number_or_null(v.ulps)},
                            {"reason", v.reason},
                            {"vacuous", v.vacuous},
                            {"sensitivity", sensitivity_json(v.sensitivity)},
                            {"advice", v.advice},
                            {"hint_dtype", hints[i] ? nlohmann::json(std::string(exactref::info(*hints[i]).name))
                                                    : nlohmann::json(nullptr)}});
            if (options.explain) {
                nlohmann::json candidates = nlohmann::json::array();
                for (const exactref::verdict& e : explained[i])
                    candidates.push_back({{"standard", e.standard},
                                          {"covered", e.covered},
                                          {"bound", number_or_null(e.bound)},
                                          {"ratio", number_or_null(e.ratio)},
                                          {"vacuous", e.vacuous},
                                          {"reason", e.reason}});
                list.back()["explain"] = std::move(candidates);
            }
        }
        j["verdicts"] = std::move(list);
        std::cout << j.dump(2) << '\n';
        return;
    }

    fmt::print("standard  {}  ({}, n = {})\n", model.name(), result_format.name, ref.count);
    fmt::print("exact     {}\n", ref.exact());
    if (model.decides == exactref::rule::bound && !verdicts.empty() &&
        (verdicts.front().vacuous || verdicts.front().sensitivity.of_abs_sum > 0))
        fmt::print("sees      {}\n", sees_line(verdicts.front()));
    std::size_t covered = 0;
    for (std::size_t i = 0; i < verdicts.size(); ++i) {
        const exactref::verdict& v = verdicts[i];
        covered += v.covered ? 1 : 0;
        const std::string result = exactref::to_shortest_string(result_format, result_bits[i]) + " (" +
                                   exactref::to_hex_string(result_format, result_bits[i]) + ")";
        fmt::print("{:<12} {:<30} error {:<11} bound {:<11} ratio {:<10} ulps {}{}{}\n",
                   v.covered ? "COVERED" : "NOT COVERED", result, shown(v.error, true, 3), shown(v.bound, false, 6),
                   shown(v.ratio, false, 3), shown(v.ulps, true, 6), v.reason.empty() ? "" : "  (" + v.reason + ")",
                   v.vacuous ? "  [vacuous]" : "");
    }
    for (std::size_t i = 0; i < explained.size(); ++i) {
        fmt::print("explain   {} ({}): every standard{}, covering ones first, tightest first\n",
                   exactref::to_shortest_string(result_format, result_bits[i]),
                   exactref::to_hex_string(result_format, result_bits[i]),
                   options.any_zero_sign ? " with --any-zero-sign" : "");
        for (const exactref::verdict& e : explained[i])
            fmt::print("  {:<32} {:<12} ratio {:<10} bound {}{}\n", e.standard, e.covered ? "COVERED" : "NOT COVERED",
                       shown(e.ratio, false, 3), shown(e.bound, false, 6), e.vacuous ? "  [vacuous]" : "");
    }
    fmt::print("{} of {} results covered by {}\n", covered, verdicts.size(), model.name());
}

}  // namespace

void register_covers(CLI::App& app) {
    auto options = std::make_shared<covers_options>();
    CLI::App* command = app.add_subcommand(
        "covers", "judges computed sums: is each RESULT (and each number in --results FILE) within the error model "
                  "--standard of the exact sum of FILE? Exit status 0 when every one is covered, 1 when one is not");
    exactref::cli::add_input_options(*command, options->input, true);
    command->add_option("RESULT", options->results,
                        "computed sums to judge (or --results FILE): decimal, C99 hex float (0x1.e9ab46p+4), inf "
                        "or nan; each is rounded once into the dtype");
    command->add_option("--results", options->results_file,
                        "more results to judge, read like the data (text or .npy, '-' for stdin) in the result "
                        "format; after the RESULTs given on the command line")
        ->type_name("FILE");
    command->add_option("--standard", options->standard_name,
                        "error model: any_order (default), exact, faithful, tree:H, split_k:S, split_k:S:pairwise, "
                        "levels:L1,...,Lm (the kernel's structure, e.g. levels:fold/4,any: its bound comes from the "
                        "data), mixed:ACC:OUT[:<model>], directed:<model>, ftz:<model> (flush-to-zero hardware: "
                        "subnormal inputs and results flushed), <model>+fma");
    command->add_flag("--any-zero-sign", options->any_zero_sign,
                      "either sign of an exact zero: exact and faithful take +0.0 and -0.0 when the sum is 0 (a sum "
                      "that starts from +0.0 returns +0.0 for -0.0 terms, as math.fsum and numpy do)");
    command->add_flag("--explain", options->explain,
                      "also judge each RESULT by every candidate standard (exact, faithful, trees, split_k, any_order, "
                      "directed, mixed, the --standard's structure), covering ones first, tightest first");
    command->callback([options] { run_covers(*options); });
}
