// exactref._core — the nanobind extension behind `import exactref as er` (python/exactref/__init__.py).
//
// Layout: arrays.{h,cpp} read numpy/DLPack arrays as typed host views; references.cpp sums them and answers the
// per-element queries of exactref.Reference; products.cpp binds the exact dot and matrix products; scatter.cpp the
// scatter-adds and scans (compact reference arrays); standards.cpp the error models and verdicts; orders.cpp the
// deterministic trees and comparison orders; testing.cpp the order-free test data; bench.cpp a timer for
// bench/bench_python.py. The Python package adds shapes, broadcasting and the keyword-argument spelling of standards;
// this module only ever sees flat index arrays and one-dimensional result arrays.
#include <nanobind/nanobind.h>

#include "references.h"

NB_MODULE(_core, m) {
    m.doc() = "exactref._core: the C++ exact references, covers() and error models (internal; use exactref).";
    exactref::python::bind_standards(m);
    exactref::python::bind_references(m);
    exactref::python::bind_products(m);
    exactref::python::bind_scatter(m);
    exactref::python::bind_orders(m);
    exactref::python::bind_testing(m);
    exactref::python::bind_bench(m);
}
