// What the subcommands share: input options, loading an array, its exact reference, the exit status.
#include <fmt/core.h>
#include <unistd.h>  // isatty: the progress line only on a terminal

#include <algorithm>
#include <charconv>  // std::to_chars, std::from_chars
#include <chrono>
#include <cstdio>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "commands.h"

namespace exactref::cli {

namespace {
int status = exit_ok;
std::set<std::string> protected_arguments;  // see remember_protected
}  // namespace

void remember_protected(const std::string& protected_argument) { protected_arguments.insert(protected_argument); }

std::string as_given(const std::string& argument) {
    return protected_arguments.contains(argument) ? argument.substr(1) : argument;
}

void set_exit_status(int s) noexcept { status = s; }
int exit_status() noexcept { return status; }

void add_input_options(CLI::App& command, input_options& options, bool judges_results) {
    command.add_option("FILE", options.file, "input: .npy (float16/32/64, C order) or text; '-' reads stdin")
        ->required();
    options.dtype_option =
        command.add_option("--dtype", options.dtype_name,
                           std::string(judges_results ? "format of the data and of the results"
                                                      : "format the data is read into") +
                               ": float64 (default for text), float32, float16, bfloat16; a .npy file's own dtype "
                               "when not given")
            ->type_name("D");
    command.add_flag("--json", options.json, "print one JSON object instead of text");
    // Read as text and checked here: CLI11 reads "-1" into an unsigned count as 2^64 - 1 (skipping everything), and
    // a count past 2^64 - 1 deserves "too large", not a conversion error.
    command.add_option_function<std::string>(
        "--skip-rows", [&options](const std::string& text) { options.skip_rows = parse_skip_rows(as_given(text)); },
        "text input: pass over the first N lines unread (a CSV header: --skip-rows 1)")
        ->type_name("N");
}

std::uint64_t parse_skip_rows(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    const std::string shown(text);
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool whole = end == text.data() + text.size() && !text.empty();
    if (whole && ec == std::errc::result_out_of_range)
        throw CLI::ValidationError("--skip-rows " + shown + " is too large (at most 2^64 - 1 = " +
                                       std::to_string(std::numeric_limits<std::uint64_t>::max()) + " lines)",
                                   CLI::ExitCodes::ValidationError);
    if (!whole || ec != std::errc{})
        throw CLI::ValidationError("--skip-rows takes a non-negative count of lines, not '" + shown +
                                       "' (a CSV header: --skip-rows 1)",
                                   CLI::ExitCodes::ValidationError);
    return value;
}

namespace {

bool dtype_given(const input_options& options) {
    return options.dtype_option != nullptr && options.dtype_option->count() > 0;
}

/// A malformed number before any value was read is most often a header line: say how to pass it.
[[noreturn]] void rethrow_with_advice(const text_parse_error& e) {
    std::string what = e.what();
    if (e.values_read == 0)
        what += "; if line " + std::to_string(e.line) + " is a header, skip it with --skip-rows " +
                std::to_string(e.line);
    throw std::invalid_argument(what);
}

/// "exactref: 123.4 MB of 400.0 MB (31%), 250 MB/s" on stderr, rewritten in place, only when stderr is a terminal
/// and the work has taken over a second; erased when done.
class progress_line {
public:
    explicit progress_line(const array_reader& reader)
        : reader_(reader), terminal_(isatty(STDERR_FILENO) == 1), start_(clock::now()), last_(start_) {}
    ~progress_line() {
        if (shown_) std::fprintf(stderr, "\r%*s\r", 72, "");
    }
    progress_line(const progress_line&) = delete;
    progress_line& operator=(const progress_line&) = delete;
    void update() {
        if (!terminal_) return;
        const auto now = clock::now();
        if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(200)) return;
        last_ = now;
        shown_ = true;
        const double mb = static_cast<double>(reader_.bytes_read()) / 1e6;
        const double seconds = std::chrono::duration<double>(now - start_).count();
        std::string line = fmt::format("exactref: read {:.1f} MB", mb);
        if (const std::uint64_t total = reader_.total_bytes(); total > 0)
            line += fmt::format(" of {:.1f} MB ({:.0f}%)", static_cast<double>(total) / 1e6,
                                100.0 * static_cast<double>(reader_.bytes_read()) / static_cast<double>(total));
        line += fmt::format(", {:.0f} MB/s, {} values", mb / seconds, reader_.values_read());
        std::fprintf(stderr, "\r%-72s", line.c_str());
        std::fflush(stderr);
    }

private:
    using clock = std::chrono::steady_clock;
    const array_reader& reader_;
    bool terminal_;
    clock::time_point start_, last_;
    bool shown_ = false;
};

}  // namespace

void warn_parse_report(const parse_report& report, const format_info& f, const std::string& source,
                       std::uint64_t skip_rows, std::string_view counted_by) {
    const std::string where = source == "-" ? "<stdin>" : source;
    const auto first = [counted_by](std::uint64_t k) {
        return std::string(counted_by == "line" ? "the first on line " : "the first is ") +
               (counted_by == "line" ? "" : std::string(counted_by) + " ") + std::to_string(k);
    };
    if (skip_rows > 0 && skip_rows >= report.lines)
        std::cerr << "exactref: warning: --skip-rows " << skip_rows << " skipped all " << report.lines << " line"
                  << (report.lines == 1 ? "" : "s") << " of " << where
                  << ": no number was read (n = 0); is the count right?\n";
    if (report.overflowed > 0)
        std::cerr << "exactref: warning: " << report.overflowed << " finite number" << (report.overflowed == 1 ? "" : "s")
                  << " in " << where << " overflowed to +-inf in " << f.name << " ("
                  << first(report.first_overflow_line) << "): they lie beyond " << f.name
                  << "'s largest value; is --dtype right?\n";
    if (report.underflowed > 0)
        std::cerr << "exactref: warning: " << report.underflowed << " non-zero number"
                  << (report.underflowed == 1 ? "" : "s") << " in " << where << " underflowed to 0 in " << f.name
                  << " (" << first(report.first_underflow_line) << "): they lie below half of " << f.name
                  << "'s smallest subnormal; is --dtype right?\n";
}

loaded_input load_input(const input_options& options) {
    const dtype type = parse_dtype(options.dtype_name);  // throws std::invalid_argument listing the names
    parse_report report;
    loaded_input in;
    try {
        in.data = load_array(as_given(options.file), type, dtype_given(options), {options.skip_rows}, &report);
    } catch (const text_parse_error& e) {
        rethrow_with_advice(e);
    }
    in.format = &info(in.data.type());
    warn_parse_report(report, *in.format, as_given(options.file), options.skip_rows);
    return in;
}

streamed_reference stream_reference(const input_options& options, const std::vector<standard>& structures) {
    if (!structures.empty()) {
        const loaded_input in = load_input(options);
        return {reference_of(in.data, structures), in.format};
    }
    const dtype type = parse_dtype(options.dtype_name);
    try {
        array_reader reader(as_given(options.file), type, dtype_given(options), {options.skip_rows});
        streamed_reference out{reference{}, &info(reader.type())};
        reference& total = out.ref;
        total.term_format = reader.type();
        total.largest = 0;  // max |x_i| of no terms, as exactref::sum gives for an empty span
        progress_line progress(reader);
        data_array chunk;
        while (reader.next(chunk)) {
            // Each chunk's reference (exact, on sum_options' threads), merged exactly: the same bits as one sum.
            const reference part = reference_of(chunk);
            total.sum.merge(part.sum);
            total.abs_sum.merge(part.abs_sum);
            total.count += part.count;
            total.largest = std::max(total.largest, part.largest);
            progress.update();
        }
        total.cache_enclosures();
        warn_parse_report(reader.report(), *out.format, as_given(options.file), options.skip_rows);
        return out;
    } catch (const text_parse_error& e) {
        rethrow_with_advice(e);
    }
}

reference reference_of(const data_array& data, const std::vector<standard>& structures) {
    return std::visit(
        [&structures](const auto& values) {
            using T = typename std::decay_t<decltype(values)>::value_type;
            const std::span<const T> xs(values.data(), values.size());
            return structures.empty() ? exactref::sum(xs, sum_options{}) : exactref::sum(xs, structures);
        },
        data.values);
}

std::string shortest(double x) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, r.ptr);
}

}  // namespace exactref::cli
