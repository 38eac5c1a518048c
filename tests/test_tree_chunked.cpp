// reduce_chunked: chunks of L·2^q elements (the last shorter) give the bits of one tree_reduce over all the data;
// every other chunking is refused with a message that says what would be accepted. Two wrong ways of combining
// chunks are planted on inputs crafted so that they must change the bits: chunk results folded left to right, and
// chunks of 3 leaves; the tests require the difference, so a reduce_chunked that did either would fail.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "exactref/io.h"
#include "exactref/tree.h"
#include "test_tree_oracle.h"

namespace {
using namespace exactref;

template <class T>
std::vector<std::span<const T>> cut(const std::vector<T>& xs, std::size_t chunk) {
    std::vector<std::span<const T>> out;
    for (std::size_t begin = 0; begin < xs.size(); begin += chunk)
        out.emplace_back(xs.data() + begin, std::min(chunk, xs.size() - begin));
    return out;
}

template <class Acc>
std::uint64_t bits_of(Acc v) {
    if constexpr (floating_format<Acc>) return static_cast<std::uint64_t>(format_traits<Acc>::to_bits(v));
    else return static_cast<std::uint64_t>(v);
}

template <class T, class Acc = T>
void expect_chunked_equals_whole(const std::vector<T>& xs, reduce_op op, const tree_shape& shape, std::size_t chunk,
                                 const std::vector<bool>* mask_bits = nullptr) {
    const auto chunks = cut(xs, chunk);
    std::unique_ptr<bool[]> mask;
    std::vector<std::span<const bool>> masks;
    tree_options whole_options;
    chunk_options chunk_opts;
    if (mask_bits != nullptr) {
        mask.reset(new bool[xs.size() + 1]);
        for (std::size_t i = 0; i < xs.size(); ++i) mask[i] = (*mask_bits)[i];
        whole_options.mask = std::span<const bool>(mask.get(), xs.size());
        for (std::size_t begin = 0; begin < xs.size(); begin += chunk)
            masks.emplace_back(mask.get() + begin, std::min(chunk, xs.size() - begin));
        chunk_opts.masks = masks;
    }
    const Acc whole = tree_reduce<Acc>(std::span<const T>(xs), op, shape, whole_options);
    const Acc chunked = reduce_chunked<Acc>(std::span<const std::span<const T>>(chunks), op, shape, chunk_opts);
    EXPECT_EQ(bits_of(chunked), bits_of(whole)) << chunks.size() << " chunks of " << chunk;
}

TEST(ReduceChunked, SameBitsAsOneReductionForEverySubtreeChunking) {
    std::mt19937_64 rng(0xc4c);
    for (const tree_shape& shape : {halving(), fold(), halving(4), fold(2)}) {
        for (int round = 0; round < 12; ++round) {
            const std::uint64_t seed = rng();
            std::mt19937_64 case_rng(seed);
            const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 50000)(case_rng);
            const unsigned q = static_cast<unsigned>(case_rng() % 7);
            const std::size_t chunk = shape.leaf << q;
            SCOPED_TRACE(shape.name() + " n=" + std::to_string(n) + " chunk=" + std::to_string(chunk) + " seed=" +
                         std::to_string(seed));
            const auto d = oracle::from_bits<double>(oracle::random_terms(binary64_info, n, oracle::term_mix::cancelling, case_rng));
            expect_chunked_equals_whole<double>(d, reduce_op::sum, shape, chunk);
            expect_chunked_equals_whole<double>(d, reduce_op::max, shape, chunk);
            const auto h = oracle::from_bits<float16>(oracle::random_terms(binary16_info, n, oracle::term_mix::ties, case_rng));
            expect_chunked_equals_whole<float16>(h, reduce_op::sum, shape, chunk);
            expect_chunked_equals_whole<float16, float>(h, reduce_op::sum, shape, chunk);
            std::vector<std::int16_t> ints(n);
            for (auto& v : ints) v = static_cast<std::int16_t>(case_rng());
            expect_chunked_equals_whole<std::int16_t>(ints, reduce_op::sum, shape, chunk);
            if (shape.kind == tree_kind::fold) {
                std::vector<bool> mask(n);
                for (std::size_t i = 0; i < n; ++i) mask[i] = (case_rng() % 4) != 0 && (i / chunk) % 3 != 1;
                expect_chunked_equals_whole<double>(d, reduce_op::sum, shape, chunk, &mask);
            }
        }
    }
}

// The value is also the literal spec tree's (so "same as tree_reduce" is not two copies of one mistake).
TEST(ReduceChunked, MatchesTheLiteralTree) {
    std::mt19937_64 rng(0x5bec);
    const auto xs = oracle::from_bits<float>(oracle::random_terms(binary32_info, 7777, oracle::term_mix::cancelling, rng));
    for (const tree_shape& shape : {halving(), fold()}) {
        const std::uint64_t want = test::spec_float_tree<float, float>(std::span<const float>(xs), reduce_op::sum, shape);
        for (std::size_t chunk : {shape.leaf, 4 * shape.leaf, 8 * shape.leaf, std::size_t{8192}}) {
            const auto chunks = cut(xs, chunk);
            EXPECT_EQ(bits_of(reduce_chunked(std::span<const std::span<const float>>(chunks), reduce_op::sum, shape)),
                      want)
                << shape.name() << " chunk " << chunk;
        }
    }
}

TEST(ReduceChunked, OneChunkOfAnySizeAndNoChunks) {
    const std::vector<double> xs{1.0, 2.0, 3.0};
    const std::span<const double> one[] = {std::span<const double>(xs)};
    EXPECT_EQ(reduce_chunked(std::span<const std::span<const double>>(one)), 6.0);
    EXPECT_EQ(reduce_chunked(std::span<const std::span<const double>>()), 0.0);
    EXPECT_EQ(reduce_chunked(std::span<const std::span<const double>>(), reduce_op::product), 1.0);
}

std::string refusal(const std::vector<std::size_t>& sizes, const tree_shape& shape) {
    std::vector<double> storage(1 << 16, 1.0);
    std::vector<std::span<const double>> chunks;
    std::size_t begin = 0;
    for (std::size_t s : sizes) {
        chunks.emplace_back(storage.data() + begin, s);
        begin += s;
    }
    try {
        (void)reduce_chunked(std::span<const std::span<const double>>(chunks), reduce_op::sum, shape);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "accepted";
}

TEST(ReduceChunked, OtherChunkingsAreRefusedWithWhatWouldBeAccepted) {
    const std::string three_leaves = refusal({768, 768, 10}, halving());
    EXPECT_NE(three_leaves.find("chunk 0 has 768 elements, which is not a subtree of halving256"), std::string::npos)
        << three_leaves;
    EXPECT_NE(three_leaves.find("256, 512, 1024"), std::string::npos) << three_leaves;
    EXPECT_NE(refusal({100, 100}, fold()).find("chunk 0 has 100 elements"), std::string::npos);
    const std::string middle = refusal({512, 256, 512}, halving());
    EXPECT_NE(middle.find("chunk 1 has 256 elements but chunk 0 has 512"), std::string::npos) << middle;
    const std::string last = refusal({512, 513}, halving());
    EXPECT_NE(last.find("the last chunk (1) has 513 elements; it must have 1 to 512"), std::string::npos) << last;
    EXPECT_NE(refusal({512, 0}, halving()).find("the last chunk (1) has 0 elements"), std::string::npos);
    EXPECT_NE(refusal({0, 16}, fold()).find("chunk 0 has 0 elements"), std::string::npos);
    EXPECT_EQ(refusal({512, 512, 7}, halving()), "accepted");
    EXPECT_EQ(refusal({16, 16, 16}, fold()), "accepted");
    EXPECT_EQ(refusal({3}, fold()), "accepted");
    // masks: one per chunk, each its chunk's size, fold only
    std::vector<double> xs(32, 1.0);
    const std::span<const double> chunks[] = {{xs.data(), 16}, {xs.data() + 16, 16}};
    const bool flags[16] = {};
    const std::span<const bool> one_mask[] = {std::span<const bool>(flags, 16)};
    chunk_options options;
    options.masks = one_mask;
    EXPECT_THROW((void)reduce_chunked(std::span<const std::span<const double>>(chunks), reduce_op::sum, fold(), options),
                 std::invalid_argument);
    const std::span<const bool> short_masks[] = {std::span<const bool>(flags, 16), std::span<const bool>(flags, 15)};
    options.masks = short_masks;
    EXPECT_THROW((void)reduce_chunked(std::span<const std::span<const double>>(chunks), reduce_op::sum, fold(), options),
                 std::invalid_argument);
    const std::span<const bool> good_masks[] = {std::span<const bool>(flags, 16), std::span<const bool>(flags, 16)};
    options.masks = good_masks;
    EXPECT_THROW((void)reduce_chunked(std::span<const std::span<const double>>(chunks), reduce_op::sum, halving(16), options),
                 std::invalid_argument);
    EXPECT_EQ(reduce_chunked(std::span<const std::span<const double>>(chunks), reduce_op::sum, fold(), options), 0.0);
}

// ---- planted wrong orders ---------------------------------------------------------------------------------------------

// Chunk results [2^53, 0, 1, 1] (each chunk's first element, the rest zeros): pairwise (2^53 + 0) + (1 + 1) = 2^53 + 2
// exactly, while a left-to-right fold of the chunk results gives ((2^53 + 0) + 1) + 1 = 2^53 (each +1 is a tie that
// rounds to the even 2^53).
TEST(ReduceChunkedPlanted, ChunkResultsFoldedLeftToRightDiffer) {
    for (const tree_shape& shape : {halving(), fold(), halving(2)}) {
        const std::size_t chunk = shape.leaf * 2;
        std::vector<double> xs(4 * chunk, 0.0);
        xs[0] = 0x1p53;
        xs[2 * chunk] = 1.0;
        xs[3 * chunk] = 1.0;
        const auto chunks = cut(xs, chunk);
        const double right = reduce_chunked(std::span<const std::span<const double>>(chunks), reduce_op::sum, shape);
        double wrong = 0;
        for (std::size_t c = 0; c < chunks.size(); ++c) {
            const double r = tree_sum(chunks[c], shape);
            wrong = c == 0 ? r : wrong + r;  // the planted order: chunk results folded left to right
        }
        EXPECT_EQ(right, 0x1p53 + 2) << shape.name();
        EXPECT_EQ(right, tree_sum(xs, shape)) << shape.name();
        EXPECT_EQ(wrong, 0x1p53) << shape.name();
        EXPECT_NE(right, wrong) << shape.name() << ": the left-to-right chunk fold must change these bits";
    }
}

// Leaves [2^53, 0, 1, 1, 0, 0] (leaf j's first element, the rest zeros): the tree is ((l0 + l1) + (l2 + l3)) + (l4 + l5)
// = 2^53 + 2, while chunks of 3 leaves give ((l0 + l1) + l2) + ((l3 + l4) + l5) = (2^53 + 1) + 1 = 2^53.
TEST(ReduceChunkedPlanted, ChunksOfThreeLeavesDifferAndAreRefused) {
    for (const tree_shape& shape : {halving(), fold(), halving(8), fold(4)}) {
        std::vector<double> xs(6 * shape.leaf, 0.0);
        xs[0] = 0x1p53;
        xs[2 * shape.leaf] = 1.0;
        xs[3 * shape.leaf] = 1.0;
        const double right = tree_sum(xs, shape);
        const auto chunks = cut(xs, 3 * shape.leaf);
        // The planted order: each chunk of 3 leaves reduced as its own tree, chunk results combined pairwise.
        const double wrong = tree_sum(chunks[0], shape) + tree_sum(chunks[1], shape);
        EXPECT_EQ(right, 0x1p53 + 2) << shape.name();
        EXPECT_EQ(wrong, 0x1p53) << shape.name();
        EXPECT_NE(right, wrong) << shape.name() << ": chunks of 3 leaves must change these bits";
        EXPECT_THROW((void)reduce_chunked(std::span<const std::span<const double>>(chunks), reduce_op::sum, shape),
                     std::invalid_argument);
        // The accepted chunking of the same data (2 leaves per chunk) gives the tree's bits.
        const auto good = cut(xs, 2 * shape.leaf);
        EXPECT_EQ(reduce_chunked(std::span<const std::span<const double>>(good), reduce_op::sum, shape), right);
    }
}

// An overflow between chunks is named in the whole tree's numbering, as tree_reduce names it.
TEST(ReduceChunked, OverflowNamesTheNodeOfTheWholeTree) {
    constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
    std::vector<std::int64_t> xs(16 * 8, 0);
    xs[16 * 4] = max;  // leaf 4, in chunk 2 of 2-leaf chunks
    xs[16 * 6] = 1;    // leaf 6, in chunk 3: level 2 node 1 = (leaves 4..5) + (leaves 6..7) overflows
    const auto chunks = cut(xs, 32);
    chunk_options checked;
    checked.check_overflow = true;
    tree_options whole;
    whole.check_overflow = true;
    std::uint64_t level = 0, index = 0, whole_level = 9, whole_index = 9;
    try {
        (void)reduce_chunked(std::span<const std::span<const std::int64_t>>(chunks), reduce_op::sum, fold(), checked);
        ADD_FAILURE() << "no overflow reported";
    } catch (const tree_overflow_error& e) {
        level = e.level();
        index = e.index();
        EXPECT_NE(std::string(e.what()).find("pairwise level 2, node 1 (leaves 4..7)"), std::string::npos) << e.what();
    }
    try {
        (void)tree_reduce(std::span<const std::int64_t>(xs), reduce_op::sum, fold(), whole);
    } catch (const tree_overflow_error& e) {
        whole_level = e.level();
        whole_index = e.index();
    }
    EXPECT_EQ(level, 2u);
    EXPECT_EQ(index, 1u);
    EXPECT_EQ(level, whole_level);
    EXPECT_EQ(index, whole_index);
    // Inside a later chunk's leaf: the element index is the whole input's.
    std::vector<std::int64_t> ys(16 * 4, 0);
    ys[16 * 3 + 2] = max;
    ys[16 * 3 + 5] = max;
    const auto ychunks = cut(ys, 32);
    try {
        (void)reduce_chunked(std::span<const std::span<const std::int64_t>>(ychunks), reduce_op::sum, fold(), checked);
        ADD_FAILURE() << "no overflow reported";
    } catch (const tree_overflow_error& e) {
        EXPECT_EQ(e.level(), 0u);
        EXPECT_EQ(e.index(), 3u);
        EXPECT_NE(std::string(e.what()).find("folding in element 53"), std::string::npos) << e.what();
    }
}

TEST(ReduceChunked, SameBitsForEveryThreadCount) {
    std::mt19937_64 rng(0x7c);
    const auto xs = oracle::from_bits<double>(oracle::random_terms(binary64_info, 300001, oracle::term_mix::clustered, rng));
    const auto chunks = cut(xs, 256 * 64);
    const double want = tree_sum(xs);
    for (int threads : {1, 2, 3, 8, 64}) {
        const int saved = omp_get_max_threads();
        omp_set_num_threads(threads);
        const double got = reduce_chunked(std::span<const std::span<const double>>(chunks));
        omp_set_num_threads(saved);
        EXPECT_EQ(bits_of(got), bits_of(want)) << threads << " threads";
    }
}

}  // namespace
