// Bindings of the error models (standard.h) and of covers()' verdict (covers.h). The Python layer
// (exactref/_standards.py) turns `standard="tree", height=5` into these factories.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <new>  // placement new in __setstate__
#include <string>
#include <tuple>

#include "exactref/covers.h"
#include "exactref/standard.h"
#include "references.h"

namespace exactref::python {


namespace {

std::string kind_name(standard_kind k) {
    switch (k) {
        case standard_kind::exact: return "exact";
        case standard_kind::faithful: return "faithful";
        case standard_kind::any_order: return "any_order";
        case standard_kind::tree: return "tree";
        case standard_kind::split_k: return "split_k";
        case standard_kind::mixed: return "mixed";
    }
    return "?";
}

std::optional<std::string> dtype_name(const std::optional<dtype>& d) {
    if (!d) return std::nullopt;
    return std::string(info(*d).name);
}

split_combine parse_combine(const std::string& how) {
    if (how == "any_order") return split_combine::any_order;
    if (how == "pairwise") return split_combine::pairwise;
    throw nb::value_error(("combine='" + how + "': expected 'any_order' (atomics, any order) or 'pairwise'").c_str());
}

// A standard's pickled state: every field, by name (kind, height, chunks, combine, acc, out, directed, fma,
// allow_negative_zero).
using standard_state = std::tuple<std::string, std::uint64_t, std::uint64_t, std::string, std::optional<std::string>,
                                  std::optional<std::string>, bool, bool, bool>;

standard_state state_of(const standard& s) {
    return {kind_name(s.kind),        s.height,           s.chunks,
            s.combine == split_combine::pairwise ? "pairwise" : "any_order",
            dtype_name(s.accumulate), dtype_name(s.output), s.directed, s.fma, s.allow_negative_zero};
}

// Rebuilds a standard through the factories, so only a standard they can make comes out, and checks that it reads
// back the same state (a field the factories would not set, such as chunks on a tree, is refused).
standard standard_from(const standard_state& st) {
    const auto& [kind, height, chunks, combine, acc, out, is_directed, fma, allow_negative_zero] = st;
    standard s;
    if (kind == "exact") s = exactref::exact();
    else if (kind == "faithful") s = exactref::faithful();
    else if (kind == "any_order") s = exactref::any_order();
    else if (kind == "tree") s = exactref::tree(height);
    else if (kind == "split_k") s = exactref::split_k(chunks, parse_combine(combine));
    else if (kind == "mixed" && acc && out) s = exactref::mixed(parse_dtype(*acc), parse_dtype(*out));
    else throw nb::value_error(("not the state of an exactref.Standard: kind '" + kind + "'").c_str());
    if (is_directed) s = exactref::directed(s);
    s.fma = fma;
    s.allow_negative_zero = allow_negative_zero;
    if (state_of(s) != st)
        throw nb::value_error(("not the state of an exactref.Standard (it would read back as '" + s.name() + "')").c_str());
    return s;
}

}  // namespace

void bind_standards(nb::module_& m) {
    nb::class_<standard>(m, "Standard",
                         "An error model: which results a correct implementation may return (exactref/standard.h). "
                         "Build one with exactref.standard(name, **params).")
        .def_prop_ro("kind", [](const standard& s) { return kind_name(s.kind); })
        .def_ro("height", &standard::height)
        .def_ro("chunks", &standard::chunks)
        .def_prop_ro("combine",
                     [](const standard& s) {
                         return std::string(s.combine == split_combine::pairwise ? "pairwise" : "any_order");
                     })
        .def_prop_ro("acc", [](const standard& s) { return dtype_name(s.accumulate); })
        .def_prop_ro("out", [](const standard& s) { return dtype_name(s.output); })
        .def_ro("directed", &standard::directed)
        .def_ro("fma", &standard::fma)
        .def_ro("allow_negative_zero", &standard::allow_negative_zero)
        .def_prop_ro("name", &standard::name, "The CLI spelling: 'tree:5', 'split_k:4:pairwise', 'directed:any_order'.")
        .def("__repr__", [](const standard& s) { return "exactref.standard('" + s.name() + "')"; })
        .def("__eq__", [](const standard& a, const standard& b) { return state_of(a) == state_of(b); })
        // Pickling (multiprocessing, pytest-xdist): every field, rebuilt through the factories.
        .def("__getstate__", &state_of)
        .def("__setstate__", [](standard& s, const standard_state& st) { new (&s) standard(standard_from(st)); });

    m.def("exact", &exactref::exact);
    m.def("faithful", &exactref::faithful);
    m.def("any_order", &exactref::any_order);
    m.def("tree", &exactref::tree, nb::arg("height"));
    m.def("split_k",
          [](std::uint64_t chunks, const std::string& combine) { return exactref::split_k(chunks, parse_combine(combine)); },
          nb::arg("chunks"), nb::arg("combine"));
    m.def("mixed",
          [](const std::string& acc, const std::string& out) {
              return exactref::mixed(parse_dtype(acc), parse_dtype(out));
          },
          nb::arg("acc"), nb::arg("out"));
    m.def("directed", &exactref::directed, nb::arg("base"));
    m.def("parse_standard", [](const std::string& text) { return exactref::parse_standard(text); }, nb::arg("text"));
    m.def("with_options",
          [](standard s, bool allow_negative_zero, bool fma) {
              s.allow_negative_zero = allow_negative_zero;
              s.fma = fma;
              return s;
          },
          nb::arg("standard"), nb::arg("allow_negative_zero"), nb::arg("fma"));

    nb::class_<verdict>(m, "Verdict",
                        "The decision of covers() for one result and the exact numbers behind it (exactref/covers.h).")
        .def_ro("covered", &verdict::covered)
        .def_ro("standard", &verdict::standard)
        .def_prop_ro("result_dtype", [](const verdict& v) { return std::string(info(v.result_format).name); })
        .def_ro("result", &verdict::result, "r: shortest round-trip decimal and C99 hex float")
        .def_ro("exact", &verdict::exact, "s: the exact sum, every decimal digit")
        .def_ro("error_exact", &verdict::error_exact, "r - s exactly, as a decimal ('' when r or s is not finite)")
        .def_ro("error", &verdict::error, "r - s rounded to nearest binary64")
        .def_ro("bound", &verdict::bound, "B rounded upward to binary64 (never below the exact bound)")
        .def_ro("ratio", &verdict::ratio, "|r - s| / B (0 when both are 0, inf when B = 0 < |r - s|)")
        .def_ro("ulps", &verdict::ulps, "(r - s) / ulp(RN(s)) in the result's format")
        .def_ro("reason", &verdict::reason)
        .def("__bool__", [](const verdict& v) { return v.covered; })
        .def("message", &verdict::message)
        .def("__str__", &verdict::message)
        .def("__repr__", [](const verdict& v) {
            return std::string("<exactref.Verdict ") + (v.covered ? "covered" : "NOT covered") + " by " + v.standard +
                   ": result " + v.result + ", ratio " + std::to_string(v.ratio) + ">";
        });
}

}  // namespace exactref::python
