// examples/mpi/allreduce.cpp — MPI_Allreduce(MPI_SUM) judged by covers(), and the canonical tree across ranks.
//
// One data set of n terms (the same on every rank, from a fixed seed) is summed on 1, 2, ..., P ranks of the job
// (sub-communicators of the first p ranks), each rank holding a nearly equal consecutive chunk:
//   Part A  MPI's way: each rank folds its chunk left to right, MPI_Allreduce(MPI_SUM) adds the partial sums. The
//           bits change with the rank count. Every result must be covered by any_order over the n terms (the
//           reference from exactref::mpi::sum, built on the p ranks) and by levels:fold/p,any (each rank a left
//           fold of its chunk, the chunks combined in any order), in float64 and float32.
//   Part B  a rank that drops its contribution (the last rank sends +0.0): levels:fold/p,any must reject it. So does
//           any_order in float64; in float32 its bound (n-1)·u·Σ|x_i| is wider than the lost part of this data, and
//           only the structured standard — which knows each rank folded its own chunk — sees the fault.
//   Part C  the canonical tree across ranks, exactref::mpi::tree_sum (halving(256)): one set of bits for every
//           rank count, the bits of exactref::tree_sum in one process.
// The example checks itself and exits 1 when a check fails.
// Usage: mpirun -np P allreduce [--n N]   (N terms, default 100000; P of 8 shows the most distinct results)
#include <mpi.h>

#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "exactref/covers.h"
#include "exactref/mpi.h"
#include "exactref/orders.h"
#include "exactref/standard.h"
#include "exactref/tree.h"

namespace er = exactref;

namespace {

int failures = 0;
void check(bool ok, const char* what) {
    if (!ok) {
        ++failures;
        std::printf("CHECK FAILED: %s\n", what);
    }
}

template <class T>
std::uint64_t bits_of(T x) {
    std::uint64_t b = 0;
    std::memcpy(&b, &x, sizeof(T));
    return b;
}

// Random signs and magnitudes over 40 binades: partial sums round differently for every chunking.
template <class T>
std::vector<T> data(std::size_t n) {
    std::mt19937_64 gen(20261202);
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    std::uniform_int_distribution<int> exponent(-20, 20), coin(0, 1);
    std::vector<T> x(n);
    for (T& v : x) v = static_cast<T>(std::ldexp(mantissa(gen), exponent(gen)) * (coin(gen) ? 1 : -1));
    return x;
}

// This rank's nearly equal consecutive chunk among p (OpenMP static: the first n mod p ranks hold one more).
template <class T>
std::span<const T> chunk(const std::vector<T>& x, int rank, int p) {
    const std::size_t q = x.size() / static_cast<std::size_t>(p), r = x.size() % static_cast<std::size_t>(p);
    const auto k = static_cast<std::size_t>(rank);
    const std::size_t begin = k * q + std::min(k, r);
    return std::span<const T>(x).subspan(begin, q + (k < r ? 1 : 0));
}

template <class T>
void run(const char* name, MPI_Datatype type, std::size_t n, int rank, int ranks) {
    const std::vector<T> x = data<T>(n);
    const T canonical = er::tree_sum(std::span<const T>(x));  // one process
    const er::reference whole = er::sum(std::span<const T>(x));
    if (rank == 0) {
        std::printf("\n%s: %zu terms, exact sum %s, nearest %.17g\n", name, n, whole.exact().substr(0, 24).c_str(),
                    static_cast<double>(whole.nearest<T>()));
        std::printf("  ranks  MPI_Allreduce(MPI_SUM)   any_order (error/bound)   levels:fold/p,any   "
                    "mpi::tree_sum (halving256)\n");
    }
    std::set<std::uint64_t> mpi_bits, tree_bits;
    for (int p = 1; p <= ranks; ++p) {
        MPI_Comm sub;
        MPI_Comm_split(MPI_COMM_WORLD, rank < p ? 0 : MPI_UNDEFINED, rank, &sub);
        if (sub == MPI_COMM_NULL) continue;  // ranks p .. P-1 sit this one out
        const std::span<const T> mine = chunk(x, rank, p);
        // Part A: MPI's sum, judged.
        const T partial = er::fold_sum(mine);
        T result{};
        MPI_Allreduce(&partial, &result, 1, type, MPI_SUM, sub);
        const er::reference ref = er::mpi::sum(sub, mine);
        const er::verdict flat = ref.covers(result, er::any_order());
        const er::standard levels = er::parse_standard("levels:fold/" + std::to_string(p) + ",any");
        // Part C: the canonical tree over the p ranks.
        const T tree = er::mpi::tree_sum(sub, mine);
        check(bits_of(tree) == bits_of(canonical), "mpi::tree_sum differs from exactref::tree_sum");
        check(flat.covered, "an honest MPI_Allreduce result is not covered by any_order");
        // Part B, on all P ranks: the last rank drops its contribution.
        T dropped{};
        const T sent = rank == p - 1 ? T(0) : partial;
        MPI_Allreduce(&sent, &dropped, 1, type, MPI_SUM, sub);
        if (rank == 0) {
            const er::reference structured = er::sum(std::span<const T>(x), {levels});
            const bool covered = structured.covers(result, levels).covered;
            check(covered, "an honest MPI_Allreduce result is not covered by levels:fold/p,any");
            mpi_bits.insert(bits_of(result));
            tree_bits.insert(bits_of(tree));
            std::printf("  %5d  %-23.17g  %-11s (%8.3g)     %-18s  %.17g\n", p, static_cast<double>(result),
                        flat.covered ? "covered" : "NOT COVERED", flat.ratio, covered ? "covered" : "NOT COVERED",
                        static_cast<double>(tree));
            if (p == ranks) {
                const er::verdict lost = ref.covers(dropped, er::any_order());
                const bool lost_levels = structured.covers(dropped, levels).covered;
                check(!lost_levels, "a dropped contribution is covered by levels:fold/p,any");
                check(!lost.covered || sizeof(T) == 4, "a dropped float64 contribution is covered by any_order");
                std::printf("  %5d  %-23.17g  %-11s (%8.3g)     %-18s  <- rank %d dropped its %zu terms\n", p,
                            static_cast<double>(dropped), lost.covered ? "covered" : "NOT COVERED", lost.ratio,
                            lost_levels ? "covered" : "NOT COVERED", p - 1, mine.size());
                if (lost.covered)
                    std::printf("         any_order's bound %.3g is wider than the lost part (%.3g): only the "
                                "structured standard sees it\n", lost.bound, std::fabs(lost.error));
            }
        }
        MPI_Comm_free(&sub);
    }
    if (rank == 0) {
        std::printf("  MPI_Allreduce: %zu distinct results over 1..%d ranks, every one covered; "
                    "mpi::tree_sum: %zu (the bits of exactref::tree_sum in one process)\n",
                    mpi_bits.size(), ranks, tree_bits.size());
        check(tree_bits.size() == 1, "the canonical tree gave more than one set of bits");
    }
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    std::size_t n = 100000;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) n = std::strtoull(argv[++i], nullptr, 10);
        else {
            std::fprintf(stderr, "usage: mpirun -np P allreduce [--n N]\n");
            MPI_Finalize();
            return 2;
        }
    }
    int rank = 0, ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    run<double>("float64", MPI_DOUBLE, n, rank, ranks);
    run<float>("float32", MPI_FLOAT, n, rank, ranks);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("\n%s\n", all == 0 ? "OK: every check passed" : "FAILED: see the checks above");
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}
