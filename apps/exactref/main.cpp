// exactref — the command-line face of the library (shared/DESIGN.md §6, docs/cli.md).
//
//   exactref sum    [--dtype D] [--json] FILE|-
//   exactref covers [--dtype D] [--json] [--standard S] FILE|- RESULT...
//   exactref ulp    [--dtype D] [--json] FILE|-
//
// Exit status: 0 success (every result covered), 1 some result not covered, 2 bad input or usage, 3 internal error.
#include <CLI/CLI.hpp>

#include <algorithm>  // std::reverse
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"

// Placeholder so the CLI links before ulp_command.cpp exists: ulp_command.cpp's (strong) definition of
// register_ulp overrides this weak one at link time.
__attribute__((weak)) void register_ulp(CLI::App&) {}

namespace {

/// CLI11 reads "-inf", "-nan" or "-0x1p+0" as clusters of short options. A token that starts with '-' and is a
/// number (no option of this CLI is) gets a leading blank, which keeps it positional; the number parser ignores
/// surrounding blanks. Plain negative decimals ("-1.5") are positional in CLI11 already and unaffected.
std::vector<std::string> protect_negative_numbers(int argc, char** argv) {
    std::vector<std::string> args(argv, argv + argc);
    for (std::size_t i = 1; i < args.size(); ++i) {
        if (args[i].size() < 2 || args[i][0] != '-' || args[i][1] == '-') continue;
        try {
            exactref::parse_number_bits(args[i], exactref::binary64_info);
            args[i].insert(0, " ");
        } catch (const std::invalid_argument&) {
            // not a number: leave it to CLI11
        }
    }
    return args;
}

}  // namespace

int main(int argc, char** argv) {
    namespace cli = exactref::cli;
    CLI::App app{"exactref: exact sums of floating-point data and the error models their computed results must meet",
                 "exactref"};
    app.require_subcommand(1);
    app.footer("Exit status: 0 success (all covered), 1 some result not covered, 2 bad input or usage.\n"
               "Documentation: docs/cli.md");
    // Usage errors in the same form as every other error: "exactref: error: WHAT", then where to look.
    app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
        const std::vector<CLI::App*> chosen = failed->get_subcommands();  // the subcommand given, if any
        const std::string where = chosen.empty() ? "" : chosen.front()->get_name() + " ";
        return "exactref: error: " + std::string(e.what()) + "\nRun 'exactref " + where + "--help' for the usage.\n";
    });
    register_sum(app);
    register_covers(app);
    register_ulp(app);
    try {
        std::vector<std::string> args = protect_negative_numbers(argc, argv);
        std::reverse(args.begin() + 1, args.end());  // CLI11 takes the arguments in reverse order
        args.erase(args.begin());
        app.parse(std::move(args));
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);  // prints help (code 0) or the usage error
        return code == 0 ? cli::exit_ok : cli::exit_bad_input;
    } catch (const std::invalid_argument& e) {
        std::cerr << "exactref: error: " << e.what() << "\n";
        return cli::exit_bad_input;
    } catch (const std::exception& e) {
        std::cerr << "exactref: internal error: " << e.what() << "\n";
        return cli::exit_internal_error;
    }
    return cli::exit_status();
}
