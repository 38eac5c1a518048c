// src/mpi/sum.cpp — exactref::mpi::sum and exactref::mpi::dot (include/exactref/mpi.h): each rank's exact reference,
// merged exactly over the ranks by one MPI_Allreduce (reference_wire.h).
#include "exactref/mpi.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>
#include <string>

#include "call_check.h"
#include "exactref/dot.h"
#include "reference_wire.h"

namespace exactref::mpi {
namespace {

std::string describe_length_difference(std::int64_t d) {
    return d == 0 ? std::string("x and y of one length")
                  : "x and y whose lengths differ (x.size() - y.size() = " + std::to_string(d) + ")";
}

std::string describe_count(std::int64_t n) { return std::to_string(n); }

}  // namespace

template <floating_format T>
reference sum(MPI_Comm comm, std::span<const T> local) {
    detail::check_same_call(comm, "exactref::mpi::sum",
                            {{"dtype", static_cast<std::int64_t>(format_traits<T>::info.id), &detail::describe_dtype}});
    return detail::allreduce_reference(comm, exactref::sum(local));
}

template <floating_format T>
reference dot(MPI_Comm comm, std::span<const T> x, std::span<const T> y) {
    const auto difference = static_cast<std::int64_t>(x.size()) - static_cast<std::int64_t>(y.size());
    detail::check_same_call(
        comm, "exactref::mpi::dot",
        {{"dtype", static_cast<std::int64_t>(format_traits<T>::info.id), &detail::describe_dtype},
         {"", difference, &describe_length_difference, std::int64_t{0}}});
    return detail::allreduce_reference(comm, exactref::dot(x, y));
}

template <floating_format T>
compact_reference_array sum_elementwise(MPI_Comm comm, std::span<const T> local) {
    detail::check_same_call(comm, "exactref::mpi::sum_elementwise",
                            {{"dtype", static_cast<std::int64_t>(format_traits<T>::info.id), &detail::describe_dtype},
                             {"array length", static_cast<std::int64_t>(local.size()), &describe_count}});
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    const std::size_t m = local.size();
    compact_reference_array out({m}, format_traits<T>::info.id);
    if (m == 0) return out;
    const std::size_t bytes = m * sizeof(T);
    if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw std::invalid_argument("exactref::mpi::sum_elementwise: an array of " + std::to_string(bytes) +
                                    " bytes per rank exceeds one MPI message (2^31 - 1 bytes): split it");
    std::vector<T> all(m * static_cast<std::size_t>(ranks));
    MPI_Allgather(local.data(), static_cast<int>(bytes), MPI_BYTE, all.data(), static_cast<int>(bytes), MPI_BYTE, comm);
    for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r)
        for (std::size_t j = 0; j < m; ++j) out.add(j, all[r * m + j]);  // rank order (the value does not depend on it)
    return out;
}

#define EXACTREF_MPI_INSTANTIATE(T)                                   \
    template reference sum<T>(MPI_Comm, std::span<const T>);          \
    template compact_reference_array sum_elementwise<T>(MPI_Comm, std::span<const T>); \
    template reference dot<T>(MPI_Comm, std::span<const T>, std::span<const T>);
EXACTREF_MPI_INSTANTIATE(double)
EXACTREF_MPI_INSTANTIATE(float)
EXACTREF_MPI_INSTANTIATE(float16)
EXACTREF_MPI_INSTANTIATE(bfloat16)
#undef EXACTREF_MPI_INSTANTIATE

}  // namespace exactref::mpi
