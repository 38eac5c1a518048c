// src/mpi/reference_wire.h — a reference (reference.h) as one fixed-size buffer, and its exact merge as an MPI_Op.
//
// The buffer holds what a reference's value is made of, never a pointer: the normalized chunks of both
// superaccumulators (accumulator.h: every chunk but the top in [0, 2^32), the sign in the top chunk), their
// special-value state (NaN seen, +Inf and -Inf counts), term counts and signed-zero flags, and the reference's own
// fields (count, term format, the dot fields, the largest term). Rebuilding goes through the accumulator's own
// operations (add_lane_sum per chunk, note_special, detail::add_infinities, note_terms), so a rebuilt accumulator
// is the one that was sent: the same value, the same state. Merging two buffers rebuilds both, merges them
// (superaccumulator::merge: exact, commutative, associative) and writes the result back, normalized.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <type_traits>

#include "exactref/accumulator.h"
#include "exactref/reference.h"

namespace exactref::mpi::detail {

struct accumulator_wire {
    std::int64_t chunks[superaccumulator::chunk_count];
    std::uint64_t terms;
    std::uint64_t positive_inf;
    std::uint64_t negative_inf;
    std::uint8_t nan;
    std::uint8_t all_negative_zero;
    std::uint8_t all_positive_zero;
    std::uint8_t padding[5];
};

struct reference_wire {
    accumulator_wire sum;
    accumulator_wire abs_sum;
    std::uint64_t count;
    double largest;                    // NaN when unknown (dots); the merge takes the maximum
    std::int32_t min_product_exponent;  // the merge takes the minimum
    std::uint8_t term_format;
    std::uint8_t is_dot;
    std::uint8_t product_may_underflow;  // the merge takes the OR
    std::uint8_t has_initial;
};
static_assert(std::is_trivially_copyable_v<reference_wire> && std::is_standard_layout_v<reference_wire>,
              "the buffer travels as bytes");

/// The buffer of r (every byte written, padding zeroed, chunks normalized).
reference_wire to_wire(const reference& r) noexcept;

/// The reference a buffer holds, enclosures cached (reference::cache_enclosures).
reference from_wire(const reference_wire& w);

/// inout <- the exact merge of in and inout (the reduction of MPI_Allreduce).
void merge_wire(const reference_wire& in, reference_wire& inout);

/// Every rank's reference merged into one, on every rank: one MPI_Allreduce of one reference_wire with a
/// commutative user-defined op. Collective; the caller has checked that the ranks agree on the kind and format.
reference allreduce_reference(MPI_Comm comm, const reference& local);

}  // namespace exactref::mpi::detail
