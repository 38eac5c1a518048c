// src/mpi/call_check.cpp — every rank makes the same call, or every rank throws (call_check.h).
#include "call_check.h"

#include <stdexcept>
#include <vector>

#include "exactref/format.h"

namespace exactref::mpi::detail {

std::string describe_dtype(std::int64_t value) {
    if (value < 0 || value > static_cast<std::int64_t>(dtype::bfloat16)) return "dtype #" + std::to_string(value);
    return std::string(info(static_cast<dtype>(value)).name);
}

namespace {
// "dtype float32", or the description alone for a field without a name.
std::string words(const call_field& f, std::int64_t v) {
    return *f.what ? std::string(f.what) + " " + f.describe(v) : f.describe(v);
}
}  // namespace

void check_same_call(MPI_Comm comm, const char* function, std::initializer_list<call_field> fields) {
    // A rank that holds MPI_COMM_NULL belongs to no communicator: no collective can run, so it fails alone (the ranks
    // of a real communicator never wait for it).
    if (comm == MPI_COMM_NULL)
        throw std::invalid_argument(std::string(function) + ": comm is MPI_COMM_NULL, a communicator of no ranks (an "
                                    "MPI_Comm_split colour this rank is not in?): pass a communicator this rank belongs "
                                    "to, e.g. MPI_COMM_WORLD");
    // Step 0: every header has the same size whichever function a rank calls (a rank calling sum while the others
    // call tree_sum must get the error, not a truncated collective): slot 0 names the function (FNV-1a of its name,
    // the same on every rank), then the fields, padded to max_fields.
    constexpr std::size_t max_fields = 8;
    if (fields.size() + 1 > max_fields) throw std::logic_error("check_same_call: too many fields");
    const std::size_t k = max_fields;
    std::uint64_t id = 14695981039346656037ull;
    for (const char* c = function; *c != 0; ++c) id = (id ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
    // Step 1: (v, -v) per slot, reduced by MAX: the largest and (negated) the smallest value over the ranks.
    std::vector<std::int64_t> mine(2 * k, 0), extremes(2 * k);
    mine[0] = static_cast<std::int64_t>(id >> 2);  // non-negative, so that -v cannot overflow
    mine[k] = -mine[0];
    std::size_t i = 1;
    for (const call_field& f : fields) {
        mine[i] = f.value;
        mine[k + i] = -f.value;
        ++i;
    }
    MPI_Allreduce(mine.data(), extremes.data(), static_cast<int>(2 * k), MPI_INT64_T, MPI_MAX, comm);
    bool same = extremes[0] == -extremes[k];
    i = 1;
    for (const call_field& f : fields) {
        const std::int64_t hi = extremes[i], lo = -extremes[k + i];
        if (hi != lo || (f.required && hi != *f.required)) same = false;
        ++i;
    }
    if (same) return;  // every rank returns here, or none does: they all saw the same extremes

    // Step 2: every rank's header, to name the first rank that differs.
    int ranks = 0;
    MPI_Comm_size(comm, &ranks);
    std::vector<std::int64_t> all(k * static_cast<std::size_t>(ranks));
    MPI_Allgather(mine.data(), static_cast<int>(k), MPI_INT64_T, all.data(), static_cast<int>(k), MPI_INT64_T, comm);
    for (int r = 0; r < ranks; ++r)
        if (all[static_cast<std::size_t>(r) * k] != mine[0])
            throw std::invalid_argument(std::string(function) + ": rank " + std::to_string(r) +
                                        " calls another exactref::mpi function (every rank must make the same call)");
    i = 1;
    for (const call_field& f : fields) {
        for (int r = 0; r < ranks; ++r) {
            const std::int64_t v = all[static_cast<std::size_t>(r) * k + i];
            if (f.required && v != *f.required)
                throw std::invalid_argument(std::string(function) + ": rank " + std::to_string(r) + " has " + words(f, v) + " (every rank must have " +
                                            f.describe(*f.required) + ")");
            if (!f.required && v != all[i])
                throw std::invalid_argument(std::string(function) + ": rank " + std::to_string(r) + " has " + words(f, v) +
                                            " but rank 0 has " + f.describe(all[i]) +
                                            " (every rank must call it alike)");
        }
        ++i;
    }
    throw std::logic_error(std::string(function) + ": the ranks' call headers differ, but no rank was found");
}

}  // namespace exactref::mpi::detail
