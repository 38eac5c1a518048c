// tests/mpi/test_mpi_sum.cpp — exactref::mpi::sum and exactref::mpi::dot give, on every rank, the reference that
// exactref::sum / exactref::dot give in one process for the concatenated data, bit for bit (every field, the
// accumulators compared normalized), for random contiguous distributions (ranks often empty), the four formats,
// and special values held by one rank only. A rank that drops its part must give a different reference (the
// comparison can fail). Run under mpirun (tests/cmake/mpi.cmake); seeds and offsets are printed on failure.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "exactref/dot.h"
#include "exactref/mpi.h"
#include "mpi_checks.h"

namespace er = exactref;
using namespace exactref::mpi_test;

namespace {

template <class T>
int binades_for() {
    return std::is_same_v<T, er::float16> ? 12 : 40;  // float16 keeps every term and product finite
}

template <class T>
void check_distributions(checker& c, const char* name) {
    const int rank = rank_of(MPI_COMM_WORLD), p = size_of(MPI_COMM_WORLD);
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        const std::uint64_t n = seed == 1 ? 0 : seed * 997;  // n = 0 too: s = +0.0 on every rank
        const std::vector<T> x = seeded_values<T>(n, seed, binades_for<T>());
        const std::vector<T> y = seeded_values<T>(n, seed + 100, binades_for<T>());
        const er::reference want_sum = er::sum(std::span<const T>(x));
        const er::reference want_dot = er::dot(std::span<const T>(x), std::span<const T>(y));
        for (int kind = 0; kind < 4; ++kind) {
            const auto offsets = distribution(n, p, kind, seed * 31 + static_cast<std::uint64_t>(kind));
            const std::string where = std::string(name) + ", " + describe_case(seed, kind, offsets);
            const er::reference got = er::mpi::sum(MPI_COMM_WORLD, slice(x, offsets, rank));
            const std::string d = reference_difference(got, want_sum);
            c.expect(d.empty(), "mpi::sum differs from exactref::sum (" + d + "): " + where);
            const er::reference got_dot = er::mpi::dot(MPI_COMM_WORLD, slice(x, offsets, rank), slice(y, offsets, rank));
            const std::string dd = reference_difference(got_dot, want_dot);
            c.expect(dd.empty(), "mpi::dot differs from exactref::dot (" + dd + "): " + where);
            c.expect(bits_of(got.nearest<T>()) == bits_of(want_sum.nearest<T>()), "nearest differs: " + where);
        }
    }
}

// Planted: the last non-empty rank drops its part; the comparison must see it (when that part is not all zeros).
void check_dropped_part_differs(checker& c) {
    const int rank = rank_of(MPI_COMM_WORLD), p = size_of(MPI_COMM_WORLD);
    const std::vector<double> x = seeded_values<double>(5000, 77);
    const auto offsets = distribution(x.size(), p, 0, 0);
    std::span<const double> mine = slice(x, offsets, rank);
    if (rank == p - 1) mine = mine.first(0);
    const er::reference got = er::mpi::sum(MPI_COMM_WORLD, mine);
    c.expect(!reference_difference(got, er::sum(std::span<const double>(x))).empty(),
             "planted: a rank that dropped its part still gave the reference of all the data");
}

// Special values on one rank only: the whole reference still matches, so NaN / Inf / -0.0 reach every rank.
template <class T>
void check_specials(checker& c, const char* name) {
    const int rank = rank_of(MPI_COMM_WORLD), p = size_of(MPI_COMM_WORLD);
    const T inf = T(std::numeric_limits<float>::infinity()), nan = T(std::numeric_limits<float>::quiet_NaN());
    const T neg_zero = T(-0.0f), pos_zero = T(0.0f), one = T(1.0f);
    struct special_case {
        const char* what;
        std::vector<T> data;
        double expect;  // the rounded sum of the whole data (NaN: a NaN)
    };
    const std::size_t n = 2 * static_cast<std::size_t>(p) + 3;
    std::vector<special_case> cases;
    cases.push_back({"all -0.0", std::vector<T>(n, neg_zero), -0.0});
    auto one_pos_zero = std::vector<T>(n, neg_zero);
    one_pos_zero[n - 1] = pos_zero;  // on the last rank only
    cases.push_back({"-0.0 and one +0.0 at the end", one_pos_zero, 0.0});
    auto with_inf = std::vector<T>(n, one);
    with_inf[n - 1] = inf;
    cases.push_back({"+Inf on the last rank", with_inf, std::numeric_limits<double>::infinity()});
    auto with_nan = std::vector<T>(n, one);
    with_nan[n / 2] = nan;
    cases.push_back({"NaN in the middle", with_nan, std::numeric_limits<double>::quiet_NaN()});
    auto both_inf = std::vector<T>(n, one);
    both_inf[0] = inf;
    both_inf[n - 1] = T(-std::numeric_limits<float>::infinity());
    cases.push_back({"+Inf on the first rank, -Inf on the last", both_inf, std::numeric_limits<double>::quiet_NaN()});
    for (const special_case& sc : cases) {
        for (int kind = 0; kind < 3; ++kind) {
            const auto offsets = distribution(n, p, kind, 5 + static_cast<std::uint64_t>(kind));
            const std::string where = std::string(name) + ", " + sc.what + ", " + describe_case(5, kind, offsets);
            const er::reference got = er::mpi::sum(MPI_COMM_WORLD, slice(sc.data, offsets, rank));
            const std::string d = reference_difference(got, er::sum(std::span<const T>(sc.data)));
            c.expect(d.empty(), "mpi::sum differs (" + d + "): " + where);
            const double r = static_cast<double>(static_cast<float>(got.nearest<T>()));
            const bool ok = std::isnan(sc.expect) ? std::isnan(r)
                                                  : bits_of(r) == bits_of(sc.expect);  // -0.0 vs +0.0 by the bits
            c.expect(ok, "rounded sum " + std::to_string(r) + ", expected " + std::to_string(sc.expect) + ": " + where);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    return run_program(argc, argv, "test_mpi_sum", [&](checker& c) {
        check_distributions<double>(c, "float64");
        check_distributions<float>(c, "float32");
        check_distributions<er::float16>(c, "float16");
        check_distributions<er::bfloat16>(c, "bfloat16");
        check_specials<double>(c, "float64");
        check_specials<float>(c, "float32");
        check_specials<er::float16>(c, "float16");
        check_specials<er::bfloat16>(c, "bfloat16");
        check_dropped_part_differs(c);
    });
}
