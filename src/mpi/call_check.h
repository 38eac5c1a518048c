// src/mpi/call_check.h — the collective check that every rank makes the same call (include/exactref/mpi.h, "Errors").
//
// Before any data moves, every rank contributes a small header (the element type, the kind of call, the op, ...) to
// one MPI_Allreduce(MPI_MAX) of (v, -v) per field: the maximum and the minimum of each field on every rank at once.
// When they differ, or some field misses its required value on some rank, every rank learns it from that same
// result, so every rank takes the error path together: one MPI_Allgather of the headers names the first rank that
// differs, and every rank throws the same std::invalid_argument. A mismatch can never leave a rank waiting in a
// collective the others skipped.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

namespace exactref::mpi::detail {

/// One field of a call's header.
struct call_field {
    const char* what;                            // "dtype", "op", "shape"
    std::int64_t value;                          // this rank's value
    std::string (*describe)(std::int64_t value);  // its words: "float32"
    std::optional<std::int64_t> required{};      // every rank must have this value (else: every rank rank 0's)
};

/// Collective over comm: returns when every rank passed the same fields (and each field its required value), else
/// throws std::invalid_argument on every rank: "<function>: rank 2 has dtype float32 but rank 0 has float64".
void check_same_call(MPI_Comm comm, const char* function, std::initializer_list<call_field> fields);

/// describe functions for the common fields.
std::string describe_dtype(std::int64_t value);

}  // namespace exactref::mpi::detail
