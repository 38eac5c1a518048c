// tests/mpi/test_mpi_tree.cpp — exactref::mpi::tree_reduce gives, on every rank, the bits of exactref::tree_reduce
// over the concatenated data in one process: halving and fold shapes (the defaults and small leaves, so that leaves
// are cut by many rank boundaries), the four formats and float16/bfloat16 accumulated in float, sum and the other
// ops, random contiguous distributions (ranks often empty, many tiny ranks inside one leaf), n = 0 and n = 1, and a
// lone -0.0. A planted wrong order — each rank's own tree, the rank results added in rank order — must differ for
// some distribution on two or more ranks. Run under mpirun (tests/cmake/mpi.cmake); seeds printed on failure.
#include <string>
#include <vector>

#include "exactref/mpi.h"
#include "exactref/orders.h"
#include "exactref/tree.h"
#include "mpi_checks.h"

namespace er = exactref;
using namespace exactref::mpi_test;

namespace {

const er::tree_shape shapes[] = {er::halving(), er::fold(), er::halving(4), er::fold(2), er::halving(32)};
const std::uint64_t lengths[] = {0, 1, 3, 100, 257, 1000, 4096, 5003};

template <class T, class Acc = er::same_as_input>
void check_tree(checker& c, const char* name, er::reduce_op op, int binades) {
    const int rank = rank_of(MPI_COMM_WORLD), p = size_of(MPI_COMM_WORLD);
    std::uint64_t seed = 0;
    for (const er::tree_shape& shape : shapes) {
        for (std::uint64_t n : lengths) {
            ++seed;
            std::vector<T> x = seeded_values<T>(n, seed, binades);
            if (op == er::reduce_op::product)  // values near 1: a long product stays finite and non-zero
                for (T& v : x) v = T(1.0f + static_cast<float>(v) / 1024.0f);
            const auto want = er::tree_reduce<Acc>(std::span<const T>(x), op, shape);
            for (int kind = 0; kind < 4; ++kind) {
                const auto offsets = distribution(n, p, kind, seed * 7 + static_cast<std::uint64_t>(kind));
                const auto got = er::mpi::tree_reduce<Acc>(MPI_COMM_WORLD, slice(x, offsets, rank), op, shape);
                c.expect(bits_of(got) == bits_of(want),
                         std::string(name) + " " + std::string(er::to_string(op)) + " " + shape.name() + ", n " +
                             std::to_string(n) + ": got bits " + std::to_string(bits_of(got)) + ", want " +
                             std::to_string(bits_of(want)) + ", " + describe_case(seed, kind, offsets));
            }
        }
    }
}

// The tree's messages travel on its own communicator: a receive the application posted on MPI_COMM_WORLD for any
// source and tag must not take them (it would hang the call).
void check_foreign_receive(checker& c) {
    const int rank = rank_of(MPI_COMM_WORLD), p = size_of(MPI_COMM_WORLD);
    if (p < 2) return;
    std::vector<double> x(10);
    for (int i = 0; i < 10; ++i) x[static_cast<std::size_t>(i)] = 1.0 + i;
    const auto offsets = distribution(x.size(), p, 0, 0);
    double inbox[64];
    MPI_Request request = MPI_REQUEST_NULL;
    if (rank == 0) MPI_Irecv(inbox, 64, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &request);
    const double got = er::mpi::tree_sum(MPI_COMM_WORLD, slice(x, offsets, rank), er::halving(4));
    c.expect(got == er::tree_sum(std::span<const double>(x), er::halving(4)), "a foreign receive changed the tree");
    const double message = 42;
    if (rank == 1) MPI_Send(&message, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        c.expect(inbox[0] == 42, "the application's receive got the tree's message");
    }
}

// -0.0 alone, on one rank among empty ones: halving keeps it (absent slots are not zeros), fold gives +0.0.
void check_lone_negative_zero(checker& c) {
    const int rank = rank_of(MPI_COMM_WORLD), p = size_of(MPI_COMM_WORLD);
    const std::vector<double> x{-0.0};
    for (int kind = 1; kind < 3; ++kind) {
        const auto offsets = distribution(1, p, kind, 3);
        const double h = er::mpi::tree_sum(MPI_COMM_WORLD, slice(x, offsets, rank));
        const double f = er::mpi::tree_sum(MPI_COMM_WORLD, slice(x, offsets, rank), er::fold());
        c.expect(bits_of(h) == bits_of(-0.0), "lone -0.0, halving: not -0.0, " + describe_case(3, kind, offsets));
        c.expect(bits_of(f) == bits_of(0.0), "lone -0.0, fold: not +0.0, " + describe_case(3, kind, offsets));
    }
}

// Planted: each rank's own halving tree, the rank results folded in rank order. Not the canonical tree: on two or
// more ranks some distribution must give other bits, or the bit-for-bit checks above could not see a wrong order.
void check_planted_order_differs(checker& c) {
    const int rank = rank_of(MPI_COMM_WORLD), p = size_of(MPI_COMM_WORLD);
    if (p < 2) return;
    bool differed = false;
    for (std::uint64_t seed = 1; seed <= 20 && !differed; ++seed) {
        const std::vector<double> x = seeded_values<double>(3001, 500 + seed);
        const auto offsets = distribution(x.size(), p, 1, seed);
        const double mine = er::tree_sum(slice(x, offsets, rank));
        std::vector<double> all(static_cast<std::size_t>(p));
        MPI_Allgather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD);
        const double planted = er::fold_sum(std::span<const double>(all));
        differed = bits_of(planted) != bits_of(er::tree_sum(std::span<const double>(x)));
    }
    c.expect(differed, "planted: rank-local trees combined in rank order gave the canonical bits for 20 seeds");
}

}  // namespace

int main(int argc, char** argv) {
    return run_program(argc, argv, "test_mpi_tree", [&](checker& c) {
        check_tree<double>(c, "float64", er::reduce_op::sum, 40);
        check_tree<float>(c, "float32", er::reduce_op::sum, 40);
        check_tree<er::float16>(c, "float16", er::reduce_op::sum, 12);
        check_tree<er::bfloat16>(c, "bfloat16", er::reduce_op::sum, 40);
        check_tree<er::float16, float>(c, "float16 in float", er::reduce_op::sum, 12);
        check_tree<er::bfloat16, float>(c, "bfloat16 in float", er::reduce_op::sum, 40);
        check_tree<double>(c, "float64", er::reduce_op::product, 4);
        check_tree<float>(c, "float32", er::reduce_op::max, 40);
        check_tree<double>(c, "float64", er::reduce_op::min, 40);
        check_lone_negative_zero(c);
        check_foreign_receive(c);
        check_planted_order_differs(c);
    });
}
