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

namespace exactref::python {

namespace nb = nanobind;

/// Sums and dot products keep their references in `items`. Matrix products keep the compact exact product
/// (gemm.h: a few words per element instead of ~2.3 KB) and build an element's reference when it is asked for:
/// flat index i is element i % block of products[i / block], row-major.
struct reference_list {
    std::vector<reference> items;
    std::vector<std::shared_ptr<const product_reference>> products;
    std::size_t block = 0;
    dtype term_format = dtype::float64;
    bool is_dot = false;

    std::size_t size() const noexcept { return products.empty() ? items.size() : products.size() * block; }
    /// The reference at flat index i: items[i], or the product element built into `scratch`.
    /// Throws nb::index_error when i is out of range.
    const reference& get(std::int64_t i, reference& scratch) const;
};

void bind_references(nanobind::module_& m);
void bind_standards(nanobind::module_& m);
void bind_orders(nanobind::module_& m);
void bind_products(nanobind::module_& m);
void bind_bench(nanobind::module_& m);
void bind_testing(nanobind::module_& m);

}  // namespace exactref::python
