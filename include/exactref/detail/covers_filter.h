// exactref/detail/covers_filter.h — the array engine of covers() (src/covers.cpp) for the library's own faces and
// tests: the Python extension judges its references through it, and tests read how many elements the exact path
// decided (docs/algorithms/covers-filter.md). Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "exactref/format.h"
#include "exactref/reference.h"
#include "exactref/scatter.h"
#include "exactref/standard.h"

namespace exactref::detail {

/// covered[i] = covers_bits(format, bits[i], *refs[i], model).covered for every i < bits.size(), decided by the
/// binary64 filter where it can and by the exact comparison elsewhere (the same verdicts). refs[i] and refs[j] that
/// are the same pointer must be the same reference. Throws like covers_bits (the first element whose reference or
/// format the standard does not apply to), std::invalid_argument when the sizes differ.
void covers_flags(const format_info& format, std::span<const std::uint64_t> bits,
                  std::span<const reference* const> refs, const standard& model, std::span<std::uint8_t> covered);

/// The same for the elements of a compact reference array (scatter.h): covered[i] for bits[i] against element i.
void covers_flags(const format_info& format, std::span<const std::uint64_t> bits, const compact_reference_array& refs,
                  const standard& model, std::span<std::uint8_t> covered);

/// The same over results held in their own storage (raw bytes of `format` values, e.g. a numpy buffer), one per
/// element of refs, read block by block in place: no copy of the results is made. Throws std::invalid_argument when
/// results.size() is not refs.size() values of format or covered.size() differs from refs.size().
void covers_flags(const format_info& format, std::span<const std::byte> results, const compact_reference_array& refs,
                  const standard& model, std::span<std::uint8_t> covered);

/// Elements of covers() over arrays (and covers_flags) whose verdict the exact path decided, since the process
/// started, in all threads: the filter's undecided elements, non-finite results, -0.0, references it cannot enclose.
std::uint64_t covers_exact_path_count() noexcept;
/// Elements whose ratio the exact path computed to find the worst element of an array_verdict (ties of the filter's
/// ratio enclosures).
std::uint64_t covers_exact_ratio_count() noexcept;

/// For tests: caps the binary64 lanes of the block filter over compact arrays (docs/algorithms/covers-filter.md,
/// Step K5): 8 (AVX-512, the default), 4 (AVX2), 1 (the portable version), 0 (off: the element-by-element fused
/// filter decides every element). The CPU's widest version (after EXACTREF_SIMD) is the most that runs. Verdicts,
/// ratio enclosures and both counters above are the same at every setting. Returns the previous cap; process-wide.
int set_covers_block_lanes(int lanes) noexcept;

}  // namespace exactref::detail
