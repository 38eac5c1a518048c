// exactref/threads.h — how many threads a parallel path of exactref uses: the one place that reads the environment.
//
// Every parallel path (exactref::sum and exactref::dot with options, the exact GEMM, the Python calls' threads=)
// asks resolve_threads(). The result never changes a value: sums and dot products split their input into contiguous
// chunks, one exact superaccumulator per chunk, merged exactly (integer additions), so every thread count gives the
// same bits.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <algorithm>
#include <cstddef>

namespace exactref::detail {

/// The number of threads for a parallel path, given what the caller asked for:
///   requested > 0                  requested;
///   else EXACTREF_NUM_THREADS      when set and not empty: a positive decimal integer ("4");
///   else OMP_NUM_THREADS           when set and not empty: OpenMP's list of positive integers ("4" or "4,2"), the
///                                  first element (the outermost level, as OpenMP reads it);
///   else std::thread::hardware_concurrency() (1 when it is unknown; asked once per process).
/// The variables are read at every call (tests and users may set them between calls, setenv / os.environ).
/// Surrounding spaces and one leading '+' are ignored (libgomp reads OMP_NUM_THREADS with strtoul, which takes
/// both); an empty value counts as unset.
/// Throws std::invalid_argument, naming the variable and its value, for anything else: 0, a negative number, junk
/// ("four", "4x"), or a value above 65536 (surely a mistake). Callers then cap the result by the work there is
/// (small inputs stay on one thread). With requested = 0 it also throws std::invalid_argument for an EXACTREF_SIMD
/// other than "avx2", "base" or unset/empty (the cap on the kernels' instruction sets, src/simd_targets.h).
///   // EXACTREF_NUM_THREADS=2 OMP_NUM_THREADS=8
///   exactref::detail::resolve_threads(0);   // -> 2
///   exactref::detail::resolve_threads(3);   // -> 3
unsigned resolve_threads(unsigned requested);

/// The largest value resolve_threads accepts from the environment.
inline constexpr unsigned max_env_threads = 65536;

/// A thread of a parallel sum or dot product takes at least this many terms (a chunk of about 16 us of work on one
/// core, well above the few microseconds a parallel region costs to start): shorter inputs run on the calling thread
/// alone, with no parallel region at all (n = 10^3 costs what it did single-threaded). Valid for any value >= 1.
inline constexpr std::size_t min_chunk_terms = std::size_t{1} << 15;
static_assert(min_chunk_terms >= 1);

/// How many contiguous chunks (and threads) a parallel pass over n terms uses with `threads` threads available:
/// between 1 and threads, and never a chunk below min_chunk_terms.
inline std::size_t chunk_count(std::size_t n, unsigned threads) noexcept {
    return std::max<std::size_t>(1, std::min<std::size_t>(threads, n / min_chunk_terms));
}

/// The length of each of the `chunks` chunks of n terms (the last may be shorter), a multiple of `align` so that
/// chunks start on the blocks a one-thread pass would use.
inline std::size_t chunk_length(std::size_t n, std::size_t chunks, std::size_t align) noexcept {
    const std::size_t even = (n + chunks - 1) / chunks;
    return (even + align - 1) / align * align;
}

}  // namespace exactref::detail
