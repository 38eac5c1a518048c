// The thread count of every parallel path (exactref/threads.h): EXACTREF_NUM_THREADS, OMP_NUM_THREADS,
// hardware_concurrency (read once), the variables read at each call.
#include "exactref/threads.h"

#include "simd_targets.h"  // check_simd_setting: a bad EXACTREF_SIMD is reported where the environment is read

#include <cstdlib>  // std::getenv
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

namespace exactref::detail {

namespace {

std::string_view trimmed(std::string_view s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t");
    return s.substr(first, last - first + 1);
}

// The value of variable `name` as a thread count, or nullopt when it is unset or empty. `list`: OpenMP's syntax, a
// comma-separated list whose first element counts.
std::optional<unsigned> env_threads(const char* name, bool list) {
    const char* raw = std::getenv(name);
    if (raw == nullptr) return std::nullopt;
    const std::string_view all = trimmed(raw);
    if (all.empty()) return std::nullopt;
    std::string_view first = list ? trimmed(all.substr(0, all.find(','))) : all;
    if (first.size() > 1 && first.front() == '+') first.remove_prefix(1);  // "+3", as OpenMP's own parser takes it
    unsigned long value = 0;
    bool ok = !first.empty() && first.size() <= 6;
    for (char c : first) {
        if (c < '0' || c > '9') {
            ok = false;
            break;
        }
        value = value * 10 + static_cast<unsigned long>(c - '0');
    }
    if (!ok || value == 0 || value > max_env_threads)
        throw std::invalid_argument(std::string(name) + "='" + raw + "': expected a positive integer (1 to " +
                                    std::to_string(max_env_threads) + ")" +
                                    (list ? std::string(" or OpenMP's list of them ('4,2')") : std::string()) +
                                    ", the number of threads exactref may use; unset it for the default "
                                    "(all cores)");
    return static_cast<unsigned>(value);
}

}  // namespace

unsigned resolve_threads(unsigned requested) {
    if (requested != 0) return requested;
    check_simd_setting();  // a call that reads the environment reports a bad EXACTREF_SIMD too
    if (const auto n = env_threads("EXACTREF_NUM_THREADS", false)) return *n;
    if (const auto n = env_threads("OMP_NUM_THREADS", true)) return *n;
    // Read once: glibc answers hardware_concurrency from /sys (about 5 us a call, more than a short sum costs).
    static const unsigned hw = [] {
        const unsigned n = std::thread::hardware_concurrency();
        return n == 0 ? 1u : n;
    }();
    return hw;
}

}  // namespace exactref::detail
