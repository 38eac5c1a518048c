// tests/mpi/test_mpi_allreduce.cpp — which standards cover MPI's own MPI_Allreduce(MPI_SUM) (docs/mpi.md, "Judging
// MPI_Allreduce"). Each rank folds its part left to right and MPI_Allreduce sums the partial results, in float and
// in double. On every rank the result must be covered by
//   any_order over all n terms (the reference from exactref::mpi::sum), for every distribution;
//   levels:fold/P,any (built on one rank from all the data) when the ranks hold nearly equal consecutive chunks;
//   tree:H with H = (longest part - 1) + (P - 1) for any distribution (a left fold of the part, then any chain MPI
//   may combine the P partial results in: ring algorithms are chains, so ceil(log2 P) is not safe in general).
// Planted faults, which every standard must reject: the last rank drops its contribution (sends +0.0), rank 0
// doubles its own. The data is positive, so every part moves the sum far beyond the bounds.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "exactref/covers.h"
#include "exactref/scatter.h"
#include "exactref/mpi.h"
#include "exactref/orders.h"
#include "exactref/standard.h"
#include "mpi_checks.h"

namespace er = exactref;
using namespace exactref::mpi_test;

namespace {

template <class T>
MPI_Datatype mpi_type() {
    return std::is_same_v<T, double> ? MPI_DOUBLE : MPI_FLOAT;
}

template <class T>
T allreduce_sum(T partial) {
    T out{};
    MPI_Allreduce(&partial, &out, 1, mpi_type<T>(), MPI_SUM, MPI_COMM_WORLD);
    return out;
}

template <class T>
void check(checker& c, const char* name) {
    const int rank = rank_of(MPI_COMM_WORLD), p = size_of(MPI_COMM_WORLD);
    const er::standard structured = er::parse_standard("levels:fold/" + std::to_string(p) + ",any");
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        const std::size_t n = 1000 * seed + 7;
        std::vector<T> x = seeded_values<T>(n, seed, 30);
        if (seed % 2 == 0)  // positive data: a dropped or doubled part is far outside every bound
            for (T& v : x) v = std::abs(v);
        for (int kind = 0; kind < 2; ++kind) {
            const auto offsets = distribution(n, p, kind, seed);
            const std::string where = std::string(name) + ", " + describe_case(seed, kind, offsets);
            const std::span<const T> mine = slice(x, offsets, rank);
            const T partial = er::fold_sum(mine);
            const T result = allreduce_sum(partial);
            const er::reference ref = er::mpi::sum(MPI_COMM_WORLD, mine);
            c.expect(ref.covers(result, er::any_order()).covered, "any_order does not cover MPI's sum: " + where);
            std::uint64_t longest = 0;
            for (std::size_t r = 0; r + 1 < offsets.size(); ++r) longest = std::max(longest, offsets[r + 1] - offsets[r]);
            const er::standard flat = er::tree((longest > 0 ? longest - 1 : 0) + static_cast<std::uint64_t>(p - 1));
            c.expect(ref.covers(result, flat).covered, "tree:H does not cover MPI's sum: " + where);
            if (kind == 0) {  // nearly equal consecutive chunks: the structured standard describes the reduction
                const er::reference whole = er::sum(std::span<const T>(x), {structured});
                c.expect(whole.covers(result, structured).covered,
                         structured.name() + " does not cover MPI's sum: " + where);
            }
            if (seed % 2 != 0) continue;
            // Planted faults: the last rank drops its part; rank 0 doubles its own.
            const T dropped = allreduce_sum(rank == p - 1 ? T(0) : partial);
            const T doubled = allreduce_sum(rank == 0 ? T(partial + partial) : partial);
            const bool dropped_moves = offsets[p] > offsets[p - 1], doubled_moves = offsets[1] > offsets[0];
            if (dropped_moves) {
                c.expect(!ref.covers(dropped, er::any_order()).covered, "a dropped part is covered: " + where);
                c.expect(!ref.covers(dropped, flat).covered, "a dropped part is covered by tree:H: " + where);
            }
            if (doubled_moves) {
                c.expect(!ref.covers(doubled, er::any_order()).covered, "a doubled part is covered: " + where);
                c.expect(!ref.covers(doubled, flat).covered, "a doubled part is covered by tree:H: " + where);
            }
            if (kind == 0) {
                const er::reference whole = er::sum(std::span<const T>(x), {structured});
                c.expect(!whole.covers(dropped, structured).covered, "a dropped part is covered by levels: " + where);
                c.expect(!whole.covers(doubled, structured).covered, "a doubled part is covered by levels: " + where);
            }
        }
    }
}

// MPI_Allreduce(MPI_SUM) of arrays, element by element: every element covered by any_order over its P terms
// (mpi::sum_elementwise), each element's reference equal to exactref::sum of that element's values over the ranks;
// the last rank dropping its array, or rank 0 doubling its, rejected.
template <class T>
void check_elementwise(checker& c, const char* name) {
    const int rank = rank_of(MPI_COMM_WORLD), p = size_of(MPI_COMM_WORLD);
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        const std::size_t m = 200 * seed + 3;
        std::vector<T> all = seeded_values<T>(m * static_cast<std::size_t>(p), seed, 20);
        for (T& v : all) v = std::abs(v) + T(1);  // positive, >= 1: a missing or doubled rank moves every element
        const std::vector<T> mine(all.begin() + static_cast<std::ptrdiff_t>(m) * rank,
                                  all.begin() + static_cast<std::ptrdiff_t>(m) * (rank + 1));
        std::vector<T> got(m), dropped(m), doubled(m);
        std::vector<T> zero(m, T(0)), twice(mine);
        for (T& v : twice) v = v + v;
        MPI_Allreduce(mine.data(), got.data(), static_cast<int>(m), mpi_type<T>(), MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(rank == p - 1 ? zero.data() : mine.data(), dropped.data(), static_cast<int>(m), mpi_type<T>(),
                      MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(rank == 0 ? twice.data() : mine.data(), doubled.data(), static_cast<int>(m), mpi_type<T>(),
                      MPI_SUM, MPI_COMM_WORLD);
        const er::compact_reference_array refs = er::mpi::sum_elementwise(MPI_COMM_WORLD, std::span<const T>(mine));
        const std::string where = std::string(name) + ", element-wise, seed " + std::to_string(seed);
        c.expect(refs.size() == m, "sum_elementwise has the wrong size: " + where);
        for (std::size_t j = 0; j < m; j += 17) {
            std::vector<T> column;
            for (int r = 0; r < p; ++r) column.push_back(all[static_cast<std::size_t>(r) * m + j]);
            c.expect(refs.exact(j) == er::sum(std::span<const T>(column)).exact() &&
                         refs.count(j) == static_cast<std::uint64_t>(p),
                     "element " + std::to_string(j) + " differs from exactref::sum: " + where);
        }
        c.expect(er::covers(std::span<const T>(got), refs, er::any_order()).covered,
                 "any_order does not cover MPI's element-wise sum: " + where);
        if (p > 1) {
            c.expect(er::covers(std::span<const T>(dropped), refs, er::any_order()).violations == m,
                     "a dropped array is covered somewhere: " + where);
            c.expect(er::covers(std::span<const T>(doubled), refs, er::any_order()).violations == m,
                     "a doubled array is covered somewhere: " + where);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    return run_program(argc, argv, "test_mpi_allreduce", [&](checker& c) {
        check<double>(c, "float64");
        check<float>(c, "float32");
        check_elementwise<double>(c, "float64");
        check_elementwise<float>(c, "float32");
    });
}
