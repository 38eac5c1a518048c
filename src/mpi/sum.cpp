// src/mpi/sum.cpp — exactref::mpi::sum and exactref::mpi::dot (include/exactref/mpi.h): each rank's exact reference,
// merged exactly over the ranks by one MPI_Allreduce (reference_wire.h).
#include "exactref/mpi.h"

#include <cstdint>
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

#define EXACTREF_MPI_INSTANTIATE(T)                                   \
    template reference sum<T>(MPI_Comm, std::span<const T>);          \
    template reference dot<T>(MPI_Comm, std::span<const T>, std::span<const T>);
EXACTREF_MPI_INSTANTIATE(double)
EXACTREF_MPI_INSTANTIATE(float)
EXACTREF_MPI_INSTANTIATE(float16)
EXACTREF_MPI_INSTANTIATE(bfloat16)
#undef EXACTREF_MPI_INSTANTIATE

}  // namespace exactref::mpi
