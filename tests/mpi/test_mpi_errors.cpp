// tests/mpi/test_mpi_errors.cpp — a call whose ranks disagree (dtype, accumulation dtype, op, shape, leaf size) or a
// dot whose x and y differ in length on one rank throws std::invalid_argument on every rank — no rank hangs — and
// the message names the rank and what differed. After each error a correct call still works. Run under mpirun
// (tests/cmake/mpi.cmake); on one rank only the dot-length case can disagree.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "exactref/mpi.h"
#include "mpi_checks.h"

namespace er = exactref;
using namespace exactref::mpi_test;

namespace {

// Runs `call` on this rank and checks that it threw std::invalid_argument whose message holds every `needle`.
void expect_error(checker& c, const std::string& what, const std::function<void()>& call,
                  const std::vector<std::string>& needles) {
    try {
        call();
        c.expect(false, what + ": no exception");
    } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        for (const std::string& needle : needles)
            c.expect(msg.find(needle) != std::string::npos, what + ": message '" + msg + "' lacks '" + needle + "'");
    }
    // The ranks are still in step: a correct collective call right after gives the right answer on every rank.
    const std::vector<double> all{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0};
    const auto offsets = distribution(all.size(), size_of(MPI_COMM_WORLD), 0, 0);
    const er::reference r = er::mpi::sum(MPI_COMM_WORLD, slice(all, offsets, rank_of(MPI_COMM_WORLD)));
    c.expect(r.nearest<double>() == 36.0 && r.count == 8, what + ": the next call went wrong");
}

}  // namespace

int main(int argc, char** argv) {
    return run_program(argc, argv, "test_mpi_errors", [&](checker& c) {
        const int rank = rank_of(MPI_COMM_WORLD), p = size_of(MPI_COMM_WORLD);
        const int last = p - 1;
        const std::string last_rank = "rank " + std::to_string(last);
        const std::vector<double> d{1.0, 2.0};
        const std::vector<float> f{1.0f, 2.0f};
        const std::vector<er::float16> h{er::float16(1.0f)};

        expect_error(c, "dot with x and y of different lengths on the last rank", [&] {
            const std::vector<double> y(rank == last ? 1 : 2, 1.0);
            er::mpi::dot(MPI_COMM_WORLD, std::span<const double>(d), std::span<const double>(y));
        }, {"exactref::mpi::dot", last_rank, "lengths differ", "x.size() - y.size() = 1"});

        for (const char* call : {"sum", "dot", "tree_sum", "sum_elementwise"}) {  // a communicator of no ranks
            const std::string name = call;
            expect_error(c, name + " on MPI_COMM_NULL", [&] {
                if (name == "sum") er::mpi::sum(MPI_COMM_NULL, d);
                if (name == "dot") er::mpi::dot(MPI_COMM_NULL, std::span<const double>(d), std::span<const double>(d));
                if (name == "tree_sum") er::mpi::tree_sum(MPI_COMM_NULL, std::span<const double>(d));
                if (name == "sum_elementwise") er::mpi::sum_elementwise(MPI_COMM_NULL, std::span<const double>(d));
            }, {"exactref::mpi::", "MPI_COMM_NULL", "a communicator of no ranks"});
        }

        if (p >= 2) {
            expect_error(c, "another function on the last rank (tree_sum there, sum elsewhere)", [&] {
                if (rank == last) er::mpi::tree_sum(MPI_COMM_WORLD, std::span<const double>(d));
                else er::mpi::sum(MPI_COMM_WORLD, d);
            }, {"calls another exactref::mpi function (every rank must make the same call)"});
            expect_error(c, "dot on rank 0, sum_elementwise elsewhere", [&] {
                if (rank == 0) er::mpi::dot(MPI_COMM_WORLD, std::span<const double>(d), std::span<const double>(d));
                else er::mpi::sum_elementwise(MPI_COMM_WORLD, std::span<const double>(d));
            }, {"calls another exactref::mpi function"});
            expect_error(c, "sum: float32 on the last rank, float64 elsewhere", [&] {
                if (rank == last) er::mpi::sum(MPI_COMM_WORLD, f);
                else er::mpi::sum(MPI_COMM_WORLD, d);
            }, {"exactref::mpi::sum", last_rank + " has dtype float32 but rank 0 has float64"});
            expect_error(c, "dot: float32 on rank 0, float64 elsewhere", [&] {
                if (rank == 0) er::mpi::dot(MPI_COMM_WORLD, std::span<const float>(f), std::span<const float>(f));
                else er::mpi::dot(MPI_COMM_WORLD, std::span<const double>(d), std::span<const double>(d));
            }, {"exactref::mpi::dot", "rank 1 has dtype float64 but rank 0 has float32"});
            expect_error(c, "tree: op max on the last rank", [&] {
                er::mpi::tree_reduce(MPI_COMM_WORLD, std::span<const double>(d),
                                     rank == last ? er::reduce_op::max : er::reduce_op::sum);
            }, {"exactref::mpi::tree_reduce", last_rank + " has op max but rank 0 has sum"});
            expect_error(c, "tree: fold on the last rank", [&] {
                er::mpi::tree_sum(MPI_COMM_WORLD, std::span<const double>(d), rank == last ? er::fold(256) : er::halving(256));
            }, {last_rank + " has shape fold but rank 0 has halving"});
            expect_error(c, "tree: leaf 128 on the last rank", [&] {
                er::mpi::tree_sum(MPI_COMM_WORLD, std::span<const double>(d), er::halving(rank == last ? 128 : 256));
            }, {last_rank + " has leaf size 128 but rank 0 has 256"});
            expect_error(c, "tree: float16 accumulated in float on the last rank", [&] {
                if (rank == last) er::mpi::tree_sum<float>(MPI_COMM_WORLD, std::span<const er::float16>(h));
                else er::mpi::tree_sum(MPI_COMM_WORLD, std::span<const er::float16>(h));
            }, {last_rank + " has accumulation dtype float32 but rank 0 has float16"});
        }
    });
}
