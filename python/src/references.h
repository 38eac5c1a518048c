// python/src/references.h — the extension's container of exact references and its bindings. Internal.
//
// Python's exactref.Reference holds one reference_list (the C++ references, flat) and a numpy index array whose
// shape is the Reference's shape: indexing, slicing and broadcasting happen on the index in numpy, and every query
// below takes a flat int64 index into `items`.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "exactref/format.h"
#include "exactref/gemm.h"
#include "exactref/reference.h"
#include "exactref/scatter.h"
#include "exactref/standard.h"

namespace exactref::python {

namespace nb = nanobind;

/// Sums and dot products keep their references in `items`. Matrix products keep the compact exact product
/// (gemm.h: a few words per element instead of ~2.3 KB) and build an element's reference when it is asked for:
/// flat index i is element i % block of products[i / block], row-major (block = m·n); a lone product is read
/// row-major as a whole (a batch of small products shares one, whose rows stack the batch: exact_matmul_batched). Scatter-adds and scans (scatter.cpp) keep a
/// compact_reference_array (48 bytes per element, scatter.h): flat index i is its element i; covers() judges it with
/// the array's own filter and nearest() rounds its cells directly, so only the per-element detail queries (exact,
/// bound, verdict, ratios, pickling) build an element's reference. Sums over axes without structured standards keep
/// a compact_reference_array too, with each element's largest term beside it (references.cpp).
struct reference_list {
    std::vector<reference> items;
    std::vector<std::shared_ptr<const product_reference>> products;
    std::size_t block = 0;
    std::shared_ptr<const compact_reference_array> compact;
    /// Axis sums (er.sum without structure=) only: max|x_i| over the finite terms of each compact element, which the
    /// cells do not keep, so that every reference an axis sum gives out has its `largest` (Verdict.sensitivity).
    std::shared_ptr<const std::vector<double>> largest;
    dtype term_format = dtype::float64;
    bool is_dot = false;

    std::size_t size() const noexcept {
        if (compact) return compact->size();
        if (products.size() == 1) return products[0]->rows() * products[0]->cols();  // one product, or a shared batch
        return products.empty() ? items.size() : products.size() * block;
    }
    /// Throws nb::index_error when i is not a flat index of this list.
    void check(std::int64_t i) const;
    /// The reference at flat index i: items[i], or the product or compact element built into `scratch`.
    /// Throws nb::index_error when i is out of range.
    const reference& get(std::int64_t i, reference& scratch) const;
    /// The same, as covers() judges it under `model`: a compact element carries a structured model's flat bound
    /// (compact_reference_array::element(i, model, out)); the other kinds are get(i, scratch).
    const reference& get(std::int64_t i, reference& scratch, const standard& model) const;
};

void bind_references(nanobind::module_& m);
void bind_standards(nanobind::module_& m);
void bind_orders(nanobind::module_& m);
void bind_products(nanobind::module_& m);
void bind_scatter(nanobind::module_& m);
void bind_bench(nanobind::module_& m);
void bind_testing(nanobind::module_& m);

}  // namespace exactref::python
