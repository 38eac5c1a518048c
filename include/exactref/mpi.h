// exactref/mpi.h — exact references and the canonical trees of data distributed over MPI ranks (docs/mpi.md).
//
// The data of a call is the concatenation, in rank order, of every rank's `local` span (contiguous ranges; a rank
// may hold none). Every function here is collective over `comm`: every rank calls it, with the same element type,
// accumulation type, op and shape, and every rank gets the same result.
//
//   mpi::sum, mpi::dot      the exactref::reference of the whole data, bit for bit the one exactref::sum /
//                           exactref::dot gives for the concatenated data in one process. Each rank builds the
//                           reference of its part; the two superaccumulators (s and S), the special-value state,
//                           the term counts and the dot fields travel in one fixed-size buffer and are merged
//                           exactly by a commutative user-defined MPI_Op inside one MPI_Allreduce. The merge is
//                           exact, so the result does not depend on the rank count, the distribution or the order
//                           MPI's algorithm merges in.
//   mpi::tree_reduce,       the bits of exactref::tree_reduce / tree_sum (tree.h: halving(L), fold(L)) over the
//   mpi::tree_sum           concatenated data, for every distribution. Each rank reduces the whole leaves and maximal
//                           aligned subtrees inside its range; the elements of a leaf cut by a rank boundary (fewer
//                           than L per boundary) go to the rank that holds the leaf's first element; the O(log n)
//                           subtree roots of each rank are gathered on rank 0, combined in tree order (an odd last
//                           node carried up unchanged) and the root broadcast. The tree's messages travel on a
//                           duplicate of comm. A NaN root may differ in sign and payload from the one-process
//                           tree's when different NaNs meet (IEEE 754 does not say which survives).
//
// Errors: a call whose ranks disagree on the element type, accumulation type, op or shape, or a dot whose x and y
// differ in length on some rank, throws std::invalid_argument on every rank (never a hang): one small MPI_Allreduce
// checks the call's header first, and the message names the rank and what differed ("exactref::mpi::sum: rank 2
// has dtype float32 but rank 0 has float64"). MPI_COMM_NULL (a communicator of no ranks) is std::invalid_argument on
// the rank that passes it. MPI errors follow comm's error handler (by default MPI aborts).
//
// Which standard covers MPI's own MPI_Allreduce(MPI_SUM) results: docs/mpi.md ("Judging MPI_Allreduce").
//
// Needs MPI (the CMake target exactref::mpi, built when find_package(MPI COMPONENTS CXX) succeeds; MPI's C API).
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <mpi.h>

#include <ranges>
#include <span>

#include "exactref/format.h"
#include "exactref/reference.h"
#include "exactref/scatter.h"
#include "exactref/tree.h"

namespace exactref::mpi {

/// The exact reference of Σ x_i over the data of every rank (collective over comm).
///
///   comm     the communicator; every rank calls sum with the same T
///   local    this rank's consecutive part of the data, in rank order (may be empty)
///   returns  on every rank the same reference, bit for bit exactref::sum of the concatenated data: s, S = Σ|x_i|
///            exactly (superaccumulators with the special-value and signed-zero state), n, the term format and the
///            largest |x_i| (reference.h). No structured bounds (reference::structures stays empty).
/// Special values as exactref::sum: a NaN on one rank makes s NaN on all; -0.0 only when every term of every rank
/// is -0.0. Memory: two superaccumulators per rank and one buffer of about 2.3 KB on the wire.
/// Throws std::invalid_argument on every rank when the ranks call it with different T.
///
///   // 3 ranks holding [0.1, 0.2], [], [0.3]:
///   exactref::mpi::sum(MPI_COMM_WORLD, std::span<const double>(local)).exact();
///   // -> on every rank "0.6000000000000000055511151231257827021181583404541015625"
template <floating_format T>
reference sum(MPI_Comm comm, std::span<const T> local);

template <std::ranges::contiguous_range R>
    requires floating_format<std::remove_cv_t<std::ranges::range_value_t<R>>>
reference sum(MPI_Comm comm, const R& local) {
    using T = std::remove_cv_t<std::ranges::range_value_t<R>>;
    return sum(comm, std::span<const T>(std::ranges::data(local), std::ranges::size(local)));
}

/// The exact reference of Σ x_i·y_i over the data of every rank (collective over comm): bit for bit exactref::dot of
/// the concatenated x and y (dot.h), with count, min_product_exponent and product_may_underflow combined over the
/// ranks. Throws std::invalid_argument on every rank when some rank's x and y differ in length (naming the rank) or
/// the ranks call it with different T.
///   exactref::mpi::dot(comm, std::span<const float>(x), std::span<const float>(y)).nearest<float>();
template <floating_format T>
reference dot(MPI_Comm comm, std::span<const T> x, std::span<const T> y);

/// The references of an element-wise MPI_SUM (MPI_Allreduce of arrays): element j is Σ over the ranks of local[j],
/// exactly, as a compact reference array (scatter.h: 48 bytes per element) of local.size() elements, the same on
/// every rank; each element has P terms (one per rank, in rank order), so covers(results, refs, any_order()) judges
/// what MPI_Allreduce(MPI_SUM) returned element by element with (P - 1)·u·S_j.
///   comm, local   every rank passes an array of the same length and T
/// Memory and traffic: every rank's array reaches every rank (one MPI_Allgather, P·m values), then each rank builds
/// the m references from them; O(P·m) transient, O(m) kept.
/// Throws std::invalid_argument on every rank when the ranks' lengths or T differ (naming the rank).
///   // 2 ranks, local = {1, 2} and {0.5, -2}:  refs.exact(0) -> "1.5", refs.exact(1) -> "0"
template <floating_format T>
compact_reference_array sum_elementwise(MPI_Comm comm, std::span<const T> local);

namespace detail {
// Defined in src/mpi/tree.cpp and instantiated there for every floating-point tree_accumulation pair.
template <class T, class Acc>
Acc tree_reduce(MPI_Comm comm, std::span<const T> local, reduce_op op, const tree_shape& shape);
}  // namespace detail

/// exactref::tree_reduce (tree.h) over the data of every rank (collective over comm).
///
///   comm     the communicator; every rank passes the same T, Acc, op and shape
///   local    this rank's consecutive part of the data, in rank order (any length, 0 included)
///   op       sum | product | min | max | any | all
///   shape    halving(L) (default halving(256)) or fold(L)
///   returns  on every rank the bits of exactref::tree_reduce<Acc>(concatenated data, op, shape), for every
///            distribution of the data over any number of ranks; the op's identity when no rank holds an element.
/// Traffic: fewer than L elements per rank boundary (to the rank holding the cut leaf's first element), then
/// O(log n) subtree roots per rank gathered on rank 0 and one broadcast. Element types: double, float, float16,
/// bfloat16, and float16/bfloat16 accumulated in float (tree.h, tree_accumulation); no masks.
/// Throws std::invalid_argument on every rank when the ranks disagree on T, Acc, op or shape.
///
///   // 2 ranks holding [a, b, c] and [d, e], halving(4):  ((a + c) + (b + d)) + e on both, as in one process
///   exactref::mpi::tree_sum(MPI_COMM_WORLD, std::span<const double>(local), exactref::halving(4));
template <class Acc = same_as_input, class T>
    requires tree_accumulation<T, accumulation_t<Acc, T>> && floating_format<T>
accumulation_t<Acc, T> tree_reduce(MPI_Comm comm, std::span<const T> local, reduce_op op = reduce_op::sum,
                                   const tree_shape& shape = halving()) {
    return detail::tree_reduce<T, accumulation_t<Acc, T>>(comm, local, op, shape);
}

/// The distributed tree sum: tree_reduce(comm, local, reduce_op::sum, shape).
template <class Acc = same_as_input, class T>
    requires tree_accumulation<T, accumulation_t<Acc, T>> && floating_format<T>
accumulation_t<Acc, T> tree_sum(MPI_Comm comm, std::span<const T> local, const tree_shape& shape = halving()) {
    return detail::tree_reduce<T, accumulation_t<Acc, T>>(comm, local, reduce_op::sum, shape);
}

template <class Acc = same_as_input, std::ranges::contiguous_range R,
          class T = std::remove_cv_t<std::ranges::range_value_t<R>>>
    requires tree_accumulation<T, accumulation_t<Acc, T>> && floating_format<T>
accumulation_t<Acc, T> tree_sum(MPI_Comm comm, const R& local, const tree_shape& shape = halving()) {
    return detail::tree_reduce<T, accumulation_t<Acc, T>>(
        comm, std::span<const T>(std::ranges::data(local), std::ranges::size(local)), reduce_op::sum, shape);
}

}  // namespace exactref::mpi
