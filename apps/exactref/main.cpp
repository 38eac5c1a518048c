// exactref — the command-line face of the library (shared/DESIGN.md §6, docs/cli.md).
//
//   exactref sum    [--dtype D] [--json] [--skip-rows N] FILE|-
//   exactref covers [--dtype D] [--json] [--skip-rows N] [--standard S] [--any-zero-sign] [--explain]
//                   FILE|- [RESULT...] [--results FILE|-]
//   exactref ulp    [--dtype D] [--json] [--skip-rows N] FILE|-
//   exactref --help | --version      (--version: the CMake project's version, given as EXACTREF_VERSION)
//
// Exit status: 0 success (every result covered), 1 some result not covered, 2 bad input or usage, 3 internal error.
#include <CLI/CLI.hpp>

#include <algorithm>  // std::reverse, std::any_of
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
/// surrounding blanks, and cli::as_given takes the blank off again wherever the text itself is shown.
std::vector<std::string> protect_negative_numbers(int argc, char** argv) {
    std::vector<std::string> args(argv, argv + argc);
    for (std::size_t i = 1; i < args.size(); ++i) {
        if (args[i].size() < 2 || args[i][0] != '-' || args[i][1] == '-') continue;
        try {
            exactref::parse_number_bits(args[i], exactref::binary64_info);
            args[i].insert(0, " ");
            exactref::cli::remember_protected(args[i]);
        } catch (const std::invalid_argument&) {
            // not a number: leave it to CLI11
        }
    }
    return args;
}

bool is_subcommand(const CLI::App& app, const std::string& name) {
    const auto all = app.get_subcommands([](const CLI::App*) { return true; });
    return std::any_of(all.begin(), all.end(), [&](const CLI::App* sub) { return sub->get_name() == name; });
}

/// Usage errors CLI11 would misreport, found before it parses (args without the program name; "--" ends the
/// options): a first word that is no subcommand (CLI11 says "A subcommand is required" for "exactref frob"), and an
/// option with an empty value ("--dtype=": CLI11 then takes the next word as the value and says "FILE is
/// required"). Returns the message, or "" when there is none.
std::string early_usage_error(const CLI::App& app, const std::vector<std::string>& args) {
    if (!args.empty() && !args.front().empty() && args.front()[0] != '-' && !is_subcommand(app, args.front())) {
        std::string names;
        for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
            names += (names.empty() ? "" : ", ") + sub->get_name();
        return "unknown subcommand '" + args.front() + "': use one of " + names;
    }
    for (const std::string& a : args) {
        if (a == "--") break;
        if (a.size() > 3 && a.starts_with("--") && a.back() == '=' && a.find('=') == a.size() - 1) {
            const std::string name = a.substr(0, a.size() - 1);
            const std::string example = name == "--dtype"      ? ", e.g. --dtype=float32"
                                        : name == "--standard" ? ", e.g. --standard=tree:14"
                                                               : "";
            return "the value of " + name + " is empty: give one after the '='" + example;
        }
    }
    return "";
}

}  // namespace

int main(int argc, char** argv) {
    namespace cli = exactref::cli;
    CLI::App app{"exactref: exact sums of floating-point data and the error models their computed results must meet",
                 "exactref"};
    app.require_subcommand(1);
    app.footer("Exit status: 0 success (covers: every result covered), 1 covers: some result not covered, 2 bad "
               "input or usage.\n"
               "Documentation: docs/cli.md");
    // Usage errors in the same form as every other error: "exactref: error: WHAT", then where to look.
    app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
        const std::vector<CLI::App*> chosen = failed->get_subcommands();  // the subcommand given, if any
        const std::string where = chosen.empty() ? "" : chosen.front()->get_name() + " ";
        return "exactref: error: " + std::string(e.what()) + "\nRun 'exactref " + where + "--help' for the usage.\n";
    });
#ifdef EXACTREF_VERSION
    app.set_version_flag("--version", std::string("exactref ") + EXACTREF_VERSION, "print the version and exit");
#else
    // The version is the CMake project's; this build was not given it (apps/CMakeLists.txt defines EXACTREF_VERSION
    // when it does), so say so rather than print a made-up one.
    app.add_flag_callback(
        "--version",
        [] {
            throw std::invalid_argument(
                "this build of exactref does not know its version (compiled without EXACTREF_VERSION); the "
                "version is the project's, in CMakeLists.txt or in the installed exactrefConfigVersion.cmake");
        },
        "print the version and exit");
#endif
    register_sum(app);
    register_covers(app);
    register_ulp(app);
    try {
        std::vector<std::string> args = protect_negative_numbers(argc, argv);
        args.erase(args.begin());
        if (const std::string error = early_usage_error(app, args); !error.empty()) {
            const std::string where = !args.empty() && is_subcommand(app, args.front()) ? args.front() + " " : "";
            std::cerr << "exactref: error: " << error << "\nRun 'exactref " << where << "--help' for the usage.\n";
            return cli::exit_bad_input;
        }
        std::reverse(args.begin(), args.end());  // CLI11 takes the arguments in reverse order
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
