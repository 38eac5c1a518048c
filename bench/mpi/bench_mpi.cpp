// The MPI face's speed targets (run under mpirun; `make bench` does not start it, docs/performance.md says how):
//   exact distributed sum (mpi::sum)      vs  a local binary64 sum + MPI_Allreduce of it
//   distributed canonical tree (tree_sum) vs  MPI_Allreduce of local exactref::tree_sum results
// 10^7 float64 N(0,1) per rank (argv[1] overrides), medians of 7 interleaved rounds, MPI_Wtime after a barrier; rank
// 0 prints the medians and the ratios.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <vector>

#include "exactref/mpi.h"
#include "exactref/tree.h"

namespace {

template <class F>
double timed(MPI_Comm comm, F&& f) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    f();
    MPI_Barrier(comm);
    return MPI_Wtime() - t0;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000'000;
    std::mt19937_64 rng(1234 + static_cast<unsigned>(rank));
    std::normal_distribution<double> normal;
    std::vector<double> x(n);
    for (double& v : x) v = normal(rng);
    const std::span<const double> local(x);
    volatile double sink = 0;
    std::vector<double> plain, exact, local_trees, tree;
    for (int round = 0; round < 7; ++round) {
        plain.push_back(timed(MPI_COMM_WORLD, [&] {
            double s = 0;
            for (double v : x) s += v;
            double total = 0;
            MPI_Allreduce(&s, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            sink = total;
        }));
        exact.push_back(timed(MPI_COMM_WORLD, [&] { sink = exactref::mpi::sum(MPI_COMM_WORLD, local).nearest<double>(); }));
        local_trees.push_back(timed(MPI_COMM_WORLD, [&] {
            const double s = exactref::tree_sum(local);
            double total = 0;
            MPI_Allreduce(&s, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            sink = total;
        }));
        tree.push_back(timed(MPI_COMM_WORLD, [&] { sink = exactref::mpi::tree_sum(MPI_COMM_WORLD, local); }));
    }
    (void)sink;
    if (rank == 0) {
        std::printf("%d ranks, %zu float64 per rank, medians of 7 rounds (wall, MPI_Wtime)\n", size, n);
        std::printf("  local sum + MPI_Allreduce        %8.2f ms\n", median(plain) * 1e3);
        std::printf("  mpi::sum (exact)                 %8.2f ms   %.2fx (target <= 1.5x)\n", median(exact) * 1e3,
                    median(exact) / median(plain));
        std::printf("  local tree_sum + MPI_Allreduce   %8.2f ms\n", median(local_trees) * 1e3);
        std::printf("  mpi::tree_sum (canonical tree)   %8.2f ms   %.2fx (target <= 2x)\n", median(tree) * 1e3,
                    median(tree) / median(local_trees));
    }
    MPI_Finalize();
    return 0;
}
