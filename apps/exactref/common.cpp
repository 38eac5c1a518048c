// What the subcommands share: input options, loading an array, its exact reference, the exit status.
#include <charconv>  // std::to_chars
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

void add_input_options(CLI::App& command, input_options& options) {
    command.add_option("FILE", options.file, "input: .npy (float16/32/64, C order) or text; '-' reads stdin")
        ->required();
    options.dtype_option =
        command.add_option("--dtype", options.dtype_name,
                           "format of the data and results: float64 (default), float32, float16, bfloat16; "
                           "a .npy file's own dtype when not given");
    command.add_flag("--json", options.json, "print one JSON object instead of text");
}

loaded_input load_input(const input_options& options) {
    const bool given = options.dtype_option != nullptr && options.dtype_option->count() > 0;
    const dtype type = parse_dtype(options.dtype_name);  // throws std::invalid_argument listing the names
    loaded_input in{load_array(as_given(options.file), type, given), nullptr};
    in.format = &info(in.data.type());
    return in;
}

reference reference_of(const data_array& data, const std::vector<standard>& structures) {
    return std::visit(
        [&structures](const auto& values) {
            using T = typename std::decay_t<decltype(values)>::value_type;
            return exactref::sum(std::span<const T>(values.data(), values.size()), structures);
        },
        data.values);
}

std::string shortest(double x) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, r.ptr);
}

}  // namespace exactref::cli
