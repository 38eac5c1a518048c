// Tree shapes, heights, op names and the argument checks of tree.h (the kernels live in detail/tree_engine.h and are
// instantiated in src/tree_float.cpp and src/tree_integer.cpp).
#include "exactref/tree.h"

#include <charconv>  // std::from_chars
#include <string>

#include "exactref/detail/tree_engine.h"

namespace exactref {

namespace detail {

void throw_bad_leaf(std::string_view kind, std::size_t leaf) {
    throw std::invalid_argument(std::string(kind) + "(" + std::to_string(leaf) +
                                "): the leaf size must be a power of two between 2 and 2^30 (e.g. " +
                                std::string(kind) + "(" + (kind == "fold" ? "16" : "256") + "))");
}

void check_tree_arguments(const tree_shape& shape, bool has_mask, bool check_overflow, bool integer_type, reduce_op op,
                          const char* function) {
    if (has_mask && shape.kind != tree_kind::fold)
        throw std::invalid_argument(std::string(function) + ": a mask needs a fold shape (fold(L)); " + shape.name() +
                                    " has no masked form");
    if (check_overflow && !integer_type)
        throw std::invalid_argument(std::string(function) +
                                    ": check_overflow applies to integer types; floating-point overflow gives ±Inf");
    if (check_overflow && op != reduce_op::sum && op != reduce_op::product)
        throw std::invalid_argument(std::string(function) + ": check_overflow applies to sum and product, not " +
                                    std::string(to_string(op)) + " (which cannot overflow)");
}

void check_mask_size(std::size_t mask_size, std::size_t n, const char* function) {
    if (mask_size != n)
        throw std::invalid_argument(std::string(function) + ": the mask has " + std::to_string(mask_size) +
                                    " elements but the data has " + std::to_string(n) + "; give one flag per element");
}

unsigned check_chunking(const tree_shape& shape, std::span<const std::size_t> sizes,
                        std::span<const std::size_t> mask_sizes, bool has_masks) {
    if (has_masks && mask_sizes.size() != sizes.size())
        throw std::invalid_argument("reduce_chunked: " + std::to_string(mask_sizes.size()) + " masks for " +
                                    std::to_string(sizes.size()) + " chunks; give one mask per chunk");
    for (std::size_t c = 0; c < mask_sizes.size(); ++c)
        if (mask_sizes[c] != sizes[c])
            throw std::invalid_argument("reduce_chunked: mask " + std::to_string(c) + " has " +
                                        std::to_string(mask_sizes[c]) + " elements but chunk " + std::to_string(c) +
                                        " has " + std::to_string(sizes[c]));
    if (sizes.size() <= 1) return 0;
    const std::size_t c0 = sizes[0];
    const std::size_t leaves = c0 / shape.leaf;
    const std::string accepted = "every chunk but the last must hold L·2^q elements (" + std::to_string(shape.leaf) +
                                 ", " + std::to_string(2 * shape.leaf) + ", " + std::to_string(4 * shape.leaf) +
                                 ", ... for " + shape.name() + "), the same for all, and the last 1 to that many";
    if (c0 == 0 || c0 % shape.leaf != 0 || (leaves & (leaves - 1)) != 0)
        throw std::invalid_argument("reduce_chunked: chunk 0 has " + std::to_string(c0) +
                                    " elements, which is not a subtree of " + shape.name() + ": " + accepted);
    for (std::size_t c = 1; c + 1 < sizes.size(); ++c)
        if (sizes[c] != c0)
            throw std::invalid_argument("reduce_chunked: chunk " + std::to_string(c) + " has " +
                                        std::to_string(sizes[c]) + " elements but chunk 0 has " + std::to_string(c0) +
                                        ": " + accepted);
    const std::size_t last = sizes.back();
    if (last == 0 || last > c0)
        throw std::invalid_argument("reduce_chunked: the last chunk (" + std::to_string(sizes.size() - 1) + ") has " +
                                    std::to_string(last) + " elements; it must have 1 to " + std::to_string(c0) +
                                    ": " + accepted);
    return floor_log2(leaves);
}

}  // namespace detail

std::string tree_shape::name() const {
    return (kind == tree_kind::halving ? "halving" : "fold") + std::to_string(leaf);
}

tree_shape parse_tree_shape(std::string_view text) {
    const auto fail = [&]() -> tree_shape {
        throw std::invalid_argument("unknown tree shape '" + std::string(text) +
                                    "': use halving256, halving, fold16, fold, or halvingL / foldL / halving:L / "
                                    "fold:L with L a power of two >= 2");
    };
    std::string_view rest;
    tree_kind kind;
    if (text.starts_with("halving")) {
        kind = tree_kind::halving;
        rest = text.substr(7);
    } else if (text.starts_with("fold")) {
        kind = tree_kind::fold;
        rest = text.substr(4);
    } else {
        return fail();
    }
    if (rest.starts_with(':')) {
        rest.remove_prefix(1);
        if (rest.empty()) return fail();  // "fold:" names no leaf size
    }
    if (rest.empty()) return kind == tree_kind::halving ? halving() : fold();
    std::size_t leaf = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), leaf);
    if (ec != std::errc{} || end != rest.data() + rest.size()) return fail();
    return kind == tree_kind::halving ? halving(leaf) : fold(leaf);
}

std::uint64_t tree_height(const tree_shape& shape, std::uint64_t n) noexcept {
    if (n <= 1) return 0;
    const std::uint64_t in_leaf = n < shape.leaf ? n : shape.leaf;
    const std::uint64_t leaf_depth = shape.kind == tree_kind::halving ? detail::ceil_log2(in_leaf) : in_leaf - 1;
    return leaf_depth + detail::ceil_log2(leaf_count(shape, n));
}

std::string_view to_string(reduce_op op) noexcept {
    switch (op) {
        case reduce_op::sum: return "sum";
        case reduce_op::product: return "product";
        case reduce_op::min: return "min";
        case reduce_op::max: return "max";
        case reduce_op::any: return "any";
        case reduce_op::all: return "all";
    }
    return "?";
}

reduce_op parse_reduce_op(std::string_view text) {
    for (reduce_op op : {reduce_op::sum, reduce_op::product, reduce_op::min, reduce_op::max, reduce_op::any,
                         reduce_op::all})
        if (text == to_string(op)) return op;
    throw std::invalid_argument("unknown reduction op '" + std::string(text) +
                                "': use sum, product, min, max, any or all");
}

}  // namespace exactref
