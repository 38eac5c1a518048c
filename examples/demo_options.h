// examples/demo_options.h — the command line of atomic_sum_demo, parsed by hand (a handful of flags).
#pragma once

#include <charconv>   // std::from_chars
#include <cstddef>
#include <filesystem>
#include <stdexcept>  // std::invalid_argument
#include <string>
#include <string_view>
#include <system_error>

#ifndef EXACTREF_SHARED_DATA
#error "atomic_sum_demo needs EXACTREF_SHARED_DATA, the path of shared/data (set by examples/CMakeLists.txt)"
#endif

namespace exactref::demo {

inline constexpr std::string_view usage_text =
    "usage: atomic_sum_demo [--input FILE] [--data-dir DIR] [--runs N] [--threads N] [--quick] [--plant-fault]\n"
    "  --input FILE     the 10,000 float32 values of part A (default: " EXACTREF_SHARED_DATA "/gauss10k_f32.txt)\n"
    "  --data-dir DIR   where part B writes its generated values (default: demo-data/ beside the executable)\n"
    "  --runs N         runs of each atomic sum, 1..1000 (default 8; 4 with --quick)\n"
    "  --threads N      worker threads, 1..256 (default 4)\n"
    "  --quick          short version for tests: 10^5 values in part B instead of 10^6, 4 runs, 3 rounds of\n"
    "                   part D's racy windows instead of 5\n"
    "  --plant-fault    for tests of the self-check: in part A's first run, worker 0 skips its terms, so that run\n"
    "                   must be rejected and the demo must exit 1\n"
    "  --help           this text\n"
    "Exit status: 0 every self-check passed, 1 a self-check failed, 2 bad usage or unreadable input.\n";

struct options {
    std::filesystem::path input;      // part A's values
    std::filesystem::path data_dir;   // part B's generated file goes here
    unsigned runs = 8;
    unsigned threads = 4;
    bool quick = false;
    bool plant_fault = false;         // part A's run 1 drops worker 0's terms (tests that the self-check bites)
    bool help = false;
    std::size_t large_n = 1'000'000;  // part B's size
};

/// The directory of the running executable (Linux /proc/self/exe), or the current directory when unknown.
inline std::filesystem::path executable_dir(const char* argv0) {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec && argv0 != nullptr) exe = std::filesystem::absolute(argv0, ec);
    if (ec || exe.empty()) return std::filesystem::current_path();
    return exe.parent_path();
}

/// Parses the command line. Throws std::invalid_argument with a message that names the flag and what it accepts.
inline options parse_options(int argc, char** argv) {
    options opt;
    opt.input = (std::filesystem::path(EXACTREF_SHARED_DATA) / "gauss10k_f32.txt").lexically_normal();
    opt.data_dir = executable_dir(argc > 0 ? argv[0] : nullptr) / "demo-data";
    bool runs_given = false;

    auto value_of = [&](int& i, std::string_view flag) -> std::string_view {
        if (i + 1 >= argc) throw std::invalid_argument(std::string(flag) + " needs a value (see --help)");
        return argv[++i];
    };
    auto count_of = [&](int& i, std::string_view flag, unsigned lo, unsigned hi) {
        const std::string_view text = value_of(i, flag);
        unsigned v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc{} || end != text.data() + text.size() || v < lo || v > hi) {
            throw std::invalid_argument(std::string(flag) + " takes a whole number from " + std::to_string(lo) +
                                        " to " + std::to_string(hi) + ", not '" + std::string(text) + "'");
        }
        return v;
    };

    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--input") {
            opt.input = std::string(value_of(i, arg));
        } else if (arg == "--data-dir") {
            opt.data_dir = std::string(value_of(i, arg));
        } else if (arg == "--runs") {
            opt.runs = count_of(i, arg, 1, 1000);
            runs_given = true;
        } else if (arg == "--threads") {
            opt.threads = count_of(i, arg, 1, 256);
        } else if (arg == "--quick") {
            opt.quick = true;
        } else if (arg == "--plant-fault") {
            opt.plant_fault = true;
        } else if (arg == "--help" || arg == "-h") {
            opt.help = true;
        } else {
            throw std::invalid_argument("unknown argument '" + std::string(arg) + "' (see --help)");
        }
    }
    if (opt.quick) {
        opt.large_n = 100'000;
        if (!runs_given) opt.runs = 4;
    }
    return opt;
}

}  // namespace exactref::demo
