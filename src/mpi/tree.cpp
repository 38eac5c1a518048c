// src/mpi/tree.cpp — the canonical trees across ranks (include/exactref/mpi.h, docs/mpi.md "The tree across ranks").
//
// The node at level k, index i of a tree over m leaves is the reduction of the leaves [i·2^k, min((i+1)·2^k, m))
// (tree.h), and the tree restricted to such an aligned block is the tree over that block alone. So:
//   Step 1. Every rank learns every rank's length (one MPI_Allgather): the global offsets, n, m = ceil(n / L).
//   Step 2. Leaf j belongs to the rank holding its first element j·L. A rank whose range starts inside a leaf
//           (offset mod L != 0) sends its elements of that leaf — fewer than L — to the leaf's owner; the owner
//           receives them in rank order and appends them to its last leaf.
//   Step 3. Each rank cuts its whole leaves into maximal aligned blocks (greedy: at leaf i the largest 2^k with
//           2^k | i that stays inside its range) and reduces each with exactref::tree_reduce — the node (k, i / 2^k)
//           of the global tree, bit for bit — and its last leaf, when cut, from the gathered elements: O(log n) nodes.
//   Step 4. Rank 0 gathers every node and evaluates the root top-down: a node present in the list is its value, a
//           node past the last leaf is absent, any other node combines its two children — or carries the left one up
//           unchanged when the right is absent (tree.h). The combine is exactref::tree_reduce over the two values with
//           halving(2): the library's own op, rounded as every pairwise level rounds. The root is broadcast.
#include "exactref/mpi.h"

#include <algorithm>
#include <cstdint>
#include <cstring>  // std::memcpy
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "call_check.h"

namespace exactref::mpi::detail {
namespace {

std::string describe_op(std::int64_t v) { return std::string(to_string(static_cast<reduce_op>(v))); }
std::string describe_kind(std::int64_t v) {
    return static_cast<tree_kind>(v) == tree_kind::halving ? "halving" : "fold";
}
std::string describe_leaf(std::int64_t v) { return std::to_string(v); }

// A subtree root as it travels: its place in the tree and its value's bytes.
template <class Acc>
struct node {
    std::uint64_t level;
    std::uint64_t index;
    unsigned char value[sizeof(Acc)];
};

template <class Acc>
node<Acc> make_node(std::uint64_t level, std::uint64_t index, Acc value) {
    node<Acc> n{level, index, {}};
    std::memcpy(n.value, &value, sizeof(Acc));
    return n;
}

// Step 4: the value of node (k, i), or nothing when it lies past the last of m leaves.
template <class Acc>
std::optional<Acc> evaluate(const std::map<std::pair<std::uint64_t, std::uint64_t>, Acc>& nodes, std::uint64_t k,
                            std::uint64_t i, std::uint64_t m, reduce_op op) {
    if ((i << k) >= m) return std::nullopt;  // no overflow: every node asked has i·2^k < 2m
    if (auto it = nodes.find({k, i}); it != nodes.end()) return it->second;
    if (k == 0) throw std::logic_error("exactref::mpi::tree_reduce: leaf " + std::to_string(i) + " was not reduced");
    const std::optional<Acc> left = evaluate(nodes, k - 1, 2 * i, m, op);
    const std::optional<Acc> right = evaluate(nodes, k - 1, 2 * i + 1, m, op);
    if (!right) return left;  // an odd last node is carried up unchanged
    // Which of two different NaNs survives a combine is not specified by IEEE 754 (§6.2.3) and differs between the
    // engine's kernels: a NaN root may differ from the one-process tree's in sign and payload (docs/mpi.md).
    const Acc pair[2] = {*left, *right};
    return exactref::tree_reduce(std::span<const Acc>(pair, 2), op, halving(2));
}

// The tree's own communicator: its point-to-point messages (the elements of cut leaves) must never meet a receive the
// application has posted on the user's communicator (MPI_ANY_SOURCE, MPI_ANY_TAG), so they travel on a duplicate.
class duplicate_comm {
public:
    explicit duplicate_comm(MPI_Comm comm) { MPI_Comm_dup(comm, &comm_); }
    ~duplicate_comm() { MPI_Comm_free(&comm_); }
    duplicate_comm(const duplicate_comm&) = delete;
    duplicate_comm& operator=(const duplicate_comm&) = delete;
    MPI_Comm get() const noexcept { return comm_; }

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

template <class T, class Acc>
Acc tree_reduce(MPI_Comm user_comm, std::span<const T> local, reduce_op op, const tree_shape& shape) {
    check_same_call(user_comm, "exactref::mpi::tree_reduce",
                    {{"dtype", static_cast<std::int64_t>(format_traits<T>::info.id), &describe_dtype},
                     {"accumulation dtype", static_cast<std::int64_t>(format_traits<Acc>::info.id), &describe_dtype},
                     {"op", static_cast<std::int64_t>(op), &describe_op},
                     {"shape", static_cast<std::int64_t>(shape.kind), &describe_kind},
                     {"leaf size", static_cast<std::int64_t>(shape.leaf), &describe_leaf}});
    const duplicate_comm own(user_comm);
    const MPI_Comm comm = own.get();
    int rank = 0, ranks = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    const auto P = static_cast<std::size_t>(ranks);
    const auto me = static_cast<std::size_t>(rank);

    // Step 1: lengths and offsets of every rank.
    const std::uint64_t len = local.size();
    std::vector<std::uint64_t> lengths(P), offsets(P + 1, 0);
    MPI_Allgather(&len, 1, MPI_UINT64_T, lengths.data(), 1, MPI_UINT64_T, comm);
    for (std::size_t r = 0; r < P; ++r) offsets[r + 1] = offsets[r] + lengths[r];
    const std::uint64_t n = offsets[P], L = shape.leaf, m = leaf_count(shape, n);
    if (n == 0) return exactref::tree_reduce<Acc>(std::span<const T>(), op, shape);  // the op's identity
    const std::uint64_t begin = offsets[me], end = begin + len;
    // The rank holding element e < n: the last rank whose range starts at or before e (empty ranks never win,
    // since a non-empty one with the same offset follows them).
    const auto holder = [&](std::uint64_t e) {
        return static_cast<int>(std::upper_bound(offsets.begin(), offsets.begin() + ranks, e) - offsets.begin() - 1);
    };
    const int tag = 0x6578;  // "ex"
    // One element as an MPI type: counts stay below L <= 2^30 elements, where bytes could pass INT_MAX.
    MPI_Datatype element;
    MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &element);
    MPI_Type_commit(&element);

    // Step 2: send the head of a range that starts inside a leaf; receive the tail of my last leaf.
    MPI_Request send = MPI_REQUEST_NULL;
    std::uint64_t head = 0;  // my elements that belong to a leaf owned by a lower rank
    if (len > 0 && begin % L != 0) {
        head = std::min(end, (begin / L + 1) * L) - begin;
        MPI_Isend(local.data(), static_cast<int>(head), element, holder(begin / L * L), tag, comm, &send);
    }
    const std::uint64_t first_leaf = (begin + L - 1) / L;                // the leaves whose first element I hold:
    const std::uint64_t end_leaf = len > 0 ? (end - 1) / L + 1 : 0;      // [first_leaf, end_leaf)
    std::vector<node<Acc>> nodes;
    if (first_leaf < end_leaf) {
        const std::uint64_t last_end = std::min(end_leaf * L, n);  // where my last leaf ends
        std::uint64_t whole_end = end_leaf;                          // leaves [first_leaf, whole_end) are all mine
        std::vector<T> cut;                                         // my last leaf, when other ranks hold its tail
        if (last_end > end) {
            whole_end = end_leaf - 1;
            const std::uint64_t start = whole_end * L;
            cut.assign(local.begin() + static_cast<std::ptrdiff_t>(start - begin), local.end());
            cut.resize(last_end - start);
            for (std::size_t q = me + 1; q < P && offsets[q] < last_end; ++q) {
                if (lengths[q] == 0) continue;
                const std::uint64_t count = std::min(last_end, offsets[q + 1]) - offsets[q];
                MPI_Recv(cut.data() + (offsets[q] - start), static_cast<int>(count), element,
                         static_cast<int>(q), tag, comm, MPI_STATUS_IGNORE);
            }
        }
        // Step 3: maximal aligned blocks of whole leaves, then the cut leaf.
        for (std::uint64_t i = first_leaf; i < whole_end;) {
            std::uint64_t k = 0;
            while (k < 63 && i % (std::uint64_t{2} << k) == 0 && i + (std::uint64_t{2} << k) <= whole_end) ++k;
            const std::uint64_t lo = i * L, hi = std::min((i + (std::uint64_t{1} << k)) * L, n);
            const Acc v = exactref::tree_reduce<Acc>(local.subspan(lo - begin, hi - lo), op, shape);
            nodes.push_back(make_node(k, i >> k, v));
            i += std::uint64_t{1} << k;
        }
        if (!cut.empty())
            nodes.push_back(make_node(0, whole_end, exactref::tree_reduce<Acc>(std::span<const T>(cut), op, shape)));
    }
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    MPI_Type_free(&element);

    // Step 4: gather the nodes on rank 0, evaluate the root, broadcast it.
    const int bytes = static_cast<int>(nodes.size() * sizeof(node<Acc>));
    std::vector<int> counts(P), displacements(P, 0);
    MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
    std::vector<node<Acc>> all;
    if (rank == 0) {
        std::size_t total = 0;
        for (std::size_t r = 0; r < P; ++r) {
            displacements[r] = static_cast<int>(total);
            total += static_cast<std::size_t>(counts[r]);
        }
        all.resize(total / sizeof(node<Acc>));
    }
    MPI_Gatherv(nodes.data(), bytes, MPI_BYTE, all.data(), counts.data(), displacements.data(), MPI_BYTE, 0, comm);
    Acc root{};
    if (rank == 0) {
        std::map<std::pair<std::uint64_t, std::uint64_t>, Acc> values;
        for (const node<Acc>& x : all) {
            Acc v;
            std::memcpy(&v, x.value, sizeof(Acc));
            values.emplace(std::pair{x.level, x.index}, v);
        }
        std::uint64_t top = 0;  // the root's level: the least K with 2^K >= m
        while (top < 63 && (std::uint64_t{1} << top) < m) ++top;
        root = *evaluate(values, top, 0, m, op);
    }
    MPI_Bcast(&root, static_cast<int>(sizeof(Acc)), MPI_BYTE, 0, comm);
    return root;
}

// The floating-point tree_accumulation pairs (tree.h).
template double tree_reduce<double, double>(MPI_Comm, std::span<const double>, reduce_op, const tree_shape&);
template float tree_reduce<float, float>(MPI_Comm, std::span<const float>, reduce_op, const tree_shape&);
template float16 tree_reduce<float16, float16>(MPI_Comm, std::span<const float16>, reduce_op, const tree_shape&);
template bfloat16 tree_reduce<bfloat16, bfloat16>(MPI_Comm, std::span<const bfloat16>, reduce_op, const tree_shape&);
template float tree_reduce<float16, float>(MPI_Comm, std::span<const float16>, reduce_op, const tree_shape&);
template float tree_reduce<bfloat16, float>(MPI_Comm, std::span<const bfloat16>, reduce_op, const tree_shape&);

}  // namespace exactref::mpi::detail
