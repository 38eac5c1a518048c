// apps/exactref/commands.h — the subcommands of the `exactref` CLI and what they share (shared/DESIGN.md §6).
//
// Each subcommand lives in its own file and adds itself to the app with register_<name>(app): it declares its
// options and sets a callback that does the work. Callbacks report through the exit status (set_exit_status) and
// signal bad input by throwing std::invalid_argument; main.cpp turns that into a message on stderr and exit status 2.
//
// Exit status (contract): 0 success / every result covered, 1 some result not covered, 2 bad input or usage,
// 3 an internal error (a bug: please report it).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "exactref/format.h"
#include "exactref/io.h"
#include "exactref/reference.h"
#include "exactref/standard.h"

// The registration functions are in the global namespace (one per subcommand file), so that a file defining
// register_ulp overrides main.cpp's weak placeholder by name.

/// `exactref sum`: exact sum, nearest value in the dtype, Σ|x| and the any-order bound (sum_command.cpp).
void register_sum(CLI::App& app);
/// `exactref covers`: one verdict per result against a standard (covers_command.cpp).
void register_covers(CLI::App& app);
/// `exactref ulp`: ULP errors of the usual summation orders (ulp_command.cpp). main.cpp holds a weak, empty
/// definition so the CLI links before that file exists; ulp_command.cpp's definition overrides it.
void register_ulp(CLI::App& app);

namespace exactref::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_not_covered = 1;
inline constexpr int exit_bad_input = 2;
inline constexpr int exit_internal_error = 3;

/// The exit status main() returns after a subcommand ran (exit_ok unless a callback set another).
void set_exit_status(int status) noexcept;
int exit_status() noexcept;

/// The options every subcommand that reads an array shares: FILE (or "-" for stdin), --dtype, --json, --skip-rows.
struct input_options {
    std::string file;
    std::string dtype_name = "float64";
    bool json = false;
    std::uint64_t skip_rows = 0;  // text lines at the start passed over (a CSV header)
    CLI::Option* dtype_option = nullptr;  // set by add_input_options; counts whether --dtype was given
};

/// The count of --skip-rows: a decimal 0 .. 2^64 - 1 (blanks around it ignored). Throws CLI::ValidationError (a usage
/// error) for a negative or malformed count ("--skip-rows takes a non-negative count ...") and one past 2^64 - 1
/// ("too large").
std::uint64_t parse_skip_rows(std::string_view text);

/// Adds FILE (positional, required), --dtype, --json and --skip-rows to `command`, storing into `options` (which must
/// outlive the app: keep it in a std::shared_ptr captured by the callback). judges_results: --dtype's help says it is
/// the results' format too (covers).
void add_input_options(CLI::App& command, input_options& options, bool judges_results = false);

/// An array read from FILE and its element format.
struct loaded_input {
    data_array data;
    const format_info* format = nullptr;
};

/// Reads options.file whole: .npy by its magic (the file's dtype; --dtype, when given, must match), else text with
/// each number correctly rounded into --dtype (float64 by default). Warns on stderr about values that overflowed or
/// underflowed while parsing (warn_parse_report). Throws std::invalid_argument on bad input. For what needs every
/// value at once (ulp's orders, the structured standards' group sums); everything else streams (stream_reference).
loaded_input load_input(const input_options& options);

/// The exact reference of options.file read in chunks (exactref::array_reader): memory O(1) in the input's size,
/// the same bits as reference_of(load_input(options).data) (the superaccumulators merge exactly). A progress line on
/// stderr when it is a terminal and reading takes over a second; warnings as load_input. With structured standards
/// (their group sums need the whole array) it loads the input whole instead.
struct streamed_reference {
    reference ref;
    const format_info* format = nullptr;
};
streamed_reference stream_reference(const input_options& options, const std::vector<standard>& structures = {});

/// Warns on stderr ("exactref: warning: ...") about numbers that overflowed to ±inf or underflowed to ±0 when parsed
/// into format f: how many, the first line, what to check; and, with skip_rows > 0, when the skipped rows were every
/// line of the text ("--skip-rows 5 skipped all 3 lines of data.txt"). counted_by names what the report's first_*_line
/// counts: "line" (a file), or "RESULT" for numbers given as arguments ("the first is RESULT 2").
void warn_parse_report(const parse_report& report, const format_info& f, const std::string& source,
                       std::uint64_t skip_rows = 0, std::string_view counted_by = "line");

/// The exact reference of the whole array (superaccumulator; exact, deterministic), with the data-dependent bounds
/// of the structured standards in `structures` (standard.h, "levels:..."; one more pass over the data each, which
/// load_input already holds). Throws std::invalid_argument for a standard that is not structured or whose groups do
/// not fit the data.
reference reference_of(const data_array& data, const std::vector<standard>& structures = {});

/// Shortest round-trip decimal of a double, e.g. "4.72203014716636" ("inf", "nan" for the specials).
std::string shortest(double x);

/// main() puts a blank before each argument that is a negative number ("-inf" -> " -inf") so that CLI11 keeps it
/// positional, and notes the protected form here. as_given(argument) is the argument as the user typed it: the blank
/// taken off again for a protected one, anything else unchanged (a " -1.5" typed with its blank is shown with it
/// unless "-1.5" was given as well: then both show as typed without it, the only ambiguity).
void remember_protected(const std::string& protected_argument);
std::string as_given(const std::string& argument);

}  // namespace exactref::cli
