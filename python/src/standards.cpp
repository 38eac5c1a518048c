// Bindings of the error models (standard.h) and of covers()' verdict (covers.h). The Python layer
// (exactref/_standards.py) turns `standard="tree", height=5` and `standard="levels:fold/4,any"` into these factories.
//
// A Standard is one record (rule, levels, structured, acc, out, directed, fma, any_zero_sign); the classic
// names (kind, height, chunks, combine) are derived from it, read-only, for the code written before the levels model.
// Pickled state: (name(), any_zero_sign): parse_standard reads name() back, the flag is not part of the name.
// The state of the earlier model (kind, height, chunks, combine, acc, out, directed, fma, any_zero_sign) is
// still read, so pickles written before the levels model load.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <new>  // placement new in __setstate__
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "exactref/covers.h"
#include "exactref/standard.h"
#include "references.h"

namespace exactref::python {

namespace {

std::optional<std::string> dtype_name(const std::optional<dtype>& d) {
    if (!d) return std::nullopt;
    return std::string(info(*d).name);
}

std::string rule_name(rule r) {
    switch (r) {
        case rule::exact: return "exact";
        case rule::faithful: return "faithful";
        case rule::bound: return "bound";
    }
    return "?";
}

std::string order_name(level_order o) {
    switch (o) {
        case level_order::fold: return "fold";
        case level_order::tree: return "tree";
        case level_order::any: return "any";
    }
    return "?";
}

std::string groups_name(level_groups g) {
    switch (g) {
        case level_groups::rest: return "rest";
        case level_groups::consecutive: return "consecutive";
        case level_groups::chunks: return "chunks";
        case level_groups::interleaved: return "interleaved";
    }
    return "?";
}

// ---- the classic names, derived from the structure -----------------------------------------------------------------

bool is_flat_tree(const standard& s) {
    return s.decides == rule::bound && !s.structured && s.levels.size() == 1 &&
           s.levels[0].order == level_order::tree && s.levels[0].groups == level_groups::rest && s.levels[0].height;
}

bool is_flat_split_k(const standard& s) {
    const std::vector<level>& lv = s.levels;
    return s.decides == rule::bound && !s.structured && lv.size() == 2 && lv[0].order == level_order::fold &&
           lv[0].groups == level_groups::chunks && !lv[1].height &&
           (lv[1].order == level_order::any || lv[1].order == level_order::tree);
}

bool is_flat_any(const standard& s) {
    return s.decides == rule::bound && !s.structured && s.levels.size() == 1 && s.levels[0] == level{};
}

/// "exact", "faithful", "any_order", "tree", "split_k", "mixed" (any structure accumulated in acc, rounded to out),
/// "levels" (a structured standard, or a flat structure without a classic name).
std::string kind_name(const standard& s) {
    if (s.decides == rule::exact) return "exact";
    if (s.decides == rule::faithful) return "faithful";
    if (s.is_mixed()) return "mixed";
    if (is_flat_any(s)) return "any_order";
    if (is_flat_tree(s)) return "tree";
    if (is_flat_split_k(s)) return "split_k";
    return "levels";
}

std::uint64_t tree_height_of(const standard& s) { return is_flat_tree(s) ? *s.levels[0].height : 0; }
std::uint64_t chunks_of(const standard& s) { return is_flat_split_k(s) ? s.levels[0].size : 0; }
std::string combine_of(const standard& s) {
    return is_flat_split_k(s) && s.levels[1].order == level_order::tree ? "pairwise" : "any_order";
}

split_combine parse_combine(const std::string& how) {
    if (how == "any_order") return split_combine::any_order;
    if (how == "pairwise") return split_combine::pairwise;
    throw nb::value_error(("combine='" + how + "': expected 'any_order' (atomics, any order) or 'pairwise'").c_str());
}

using level_tuple = std::tuple<std::string, std::string, std::uint64_t, std::optional<std::uint64_t>>;

std::vector<level_tuple> levels_of(const standard& s) {
    std::vector<level_tuple> out;
    for (const level& l : s.levels) out.emplace_back(order_name(l.order), groups_name(l.groups), l.size, l.height);
    return out;
}

// ---- pickling --------------------------------------------------------------------------------------------------------

using standard_state = std::tuple<std::string, bool>;  // (name(), any_zero_sign)

standard_state state_of(const standard& s) { return {s.name(), s.any_zero_sign}; }

[[noreturn]] void not_a_state(const std::string& why) {
    throw nb::value_error(("not the state of an exactref.Standard: " + why).c_str());
}

standard from_state(const standard_state& st) {
    const auto& [name, any_zero_sign] = st;
    standard s;
    try {
        s = parse_standard(name);
    } catch (const std::invalid_argument& e) {
        not_a_state(std::string("name '") + name + "' does not parse: " + e.what());
    }
    s.any_zero_sign = any_zero_sign;
    if (s.name() != name) not_a_state("name '" + name + "' is not canonical (it reads back as '" + s.name() + "')");
    return s;
}

// The state of the model before levels: (kind, height, chunks, combine, acc, out, directed, fma,
// any_zero_sign), rebuilt through the factories and checked to read back the same (a field the factories would
// not set, such as chunks on a tree, is refused).
using legacy_state = std::tuple<std::string, std::uint64_t, std::uint64_t, std::string, std::optional<std::string>,
                                std::optional<std::string>, bool, bool, bool>;

legacy_state legacy_state_of(const standard& s) {
    return {kind_name(s),         tree_height_of(s),   chunks_of(s),
            combine_of(s),        dtype_name(s.accumulate), dtype_name(s.output),
            s.directed,           s.fma,               s.any_zero_sign};
}

standard from_legacy_state(const legacy_state& st) {
    const auto& [kind, height, chunks, combine, acc, out, is_directed, fma, any_zero_sign] = st;
    standard s;
    if (kind == "exact") s = exactref::exact();
    else if (kind == "faithful") s = exactref::faithful();
    else if (kind == "any_order") s = exactref::any_order();
    else if (kind == "tree") s = exactref::tree(height);
    else if (kind == "split_k") s = exactref::split_k(chunks, parse_combine(combine));
    else if (kind == "mixed" && acc && out) s = exactref::mixed(parse_dtype(*acc), parse_dtype(*out));
    else not_a_state("kind '" + kind + "'");
    if (is_directed) s = exactref::directed(s);
    s.fma = fma;
    s.any_zero_sign = any_zero_sign;
    if (legacy_state_of(s) != st) not_a_state("it would read back as '" + s.name() + "'");
    return s;
}

standard standard_from(const nb::tuple& st) {
    if (st.size() == 2) {
        standard_state typed;
        if (!nb::try_cast(st, typed)) not_a_state("expected (name: str, any_zero_sign: bool)");
        return from_state(typed);
    }
    if (st.size() == 9) {
        legacy_state typed;
        if (!nb::try_cast(st, typed)) not_a_state("a 9-field state of the wrong types");
        return from_legacy_state(typed);
    }
    not_a_state("expected (name: str, any_zero_sign: bool), got " + std::to_string(st.size()) + " fields");
}

}  // namespace

void bind_standards(nb::module_& m) {
    nb::class_<standard>(m, "Standard",
                         "An error model: which results a correct implementation may return (exactref/standard.h). "
                         "Build one with exactref.standard(name, **params).")
        .def_prop_ro("name", &standard::name,
                     "The CLI spelling, which exactref.standard() reads back: 'tree:5', 'split_k:4:pairwise', "
                     "'directed:any_order', 'levels:fold/4,any', 'mixed:float32:float16:levels:fold/8,any+fma'.")
        .def_prop_ro("rule", [](const standard& s) { return rule_name(s.decides); },
                     "How it decides: 'exact' (r == RN(s)), 'faithful' (RD(s) or RU(s)) or 'bound' (|r - s| <= B).")
        .def_prop_ro("levels", &levels_of,
                     "The reduction's structure from the leaves up, one (order, groups, size, height) per level: "
                     "order 'fold', 'tree' or 'any'; groups 'consecutive' (':N'), 'chunks' ('/N'), 'interleaved' "
                     "('%N') or 'rest' (the last level); size the N (0 for rest); height a tree level's height, or "
                     "None. [] for exact and faithful. 'levels:fold/4,any' -> [('fold', 'chunks', 4, None), "
                     "('any', 'rest', 0, None)].")
        .def_prop_ro("structure",
                     [](const standard& s) -> std::optional<std::string> {
                         if (s.decides != rule::bound) return std::nullopt;
                         return s.structure();
                     },
                     "The structure alone in the levels spelling ('levels:fold/4,any'; any_order is 'levels:any'), "
                     "None for exact and faithful.")
        .def_ro("structured", &standard::structured,
                "True when the bound comes from the data's group sums (levels:...): the reference must be built with "
                "it, er.sum(x, structure=...).")
        .def_prop_ro("kind", &kind_name,
                     "The classic name, derived: 'exact', 'faithful', 'any_order', 'tree', 'split_k', 'mixed' or "
                     "'levels' (a structured standard).")
        .def_prop_ro("height", &tree_height_of, "tree:H: H; 0 for every other standard.")
        .def_prop_ro("chunks", &chunks_of, "split_k:S: S; 0 for every other standard.")
        .def_prop_ro("combine", &combine_of, "split_k: 'pairwise' or 'any_order'; 'any_order' for the others.")
        .def_prop_ro("acc", [](const standard& s) { return dtype_name(s.accumulate); },
                     "mixed: the accumulation dtype name, else None.")
        .def_prop_ro("out", [](const standard& s) { return dtype_name(s.output); },
                     "mixed: the output (result) dtype name, else None.")
        .def_ro("directed", &standard::directed)
        .def_ro("ftz", &standard::ftz,
                "True for ftz: (flush-to-zero hardware: subnormal inputs and results flushed; sums only).")
        .def_ro("fma", &standard::fma)
        .def_ro("any_zero_sign", &standard::any_zero_sign)
        .def("__repr__", [](const standard& s) {
            return "exactref.standard('" + s.name() + "'" + (s.any_zero_sign ? ", any_zero_sign=True" : "") +
                   ")";
        })
        .def("__eq__", [](const standard& a, const standard& b) { return a == b; })
        // Pickling (multiprocessing, pytest-xdist): the name and the one flag it does not spell.
        .def("__getstate__", &state_of)
        .def("__setstate__", [](standard& s, const nb::tuple& st) { new (&s) standard(standard_from(st)); });

    m.def("exact", &exactref::exact);
    m.def("faithful", &exactref::faithful);
    m.def("any_order", &exactref::any_order);
    m.def("tree", &exactref::tree, nb::arg("height"));
    m.def("split_k",
          [](std::uint64_t chunks, const std::string& combine) { return exactref::split_k(chunks, parse_combine(combine)); },
          nb::arg("chunks"), nb::arg("combine"));
    m.def("mixed",
          [](const std::string& acc, const std::string& out, const std::optional<standard>& base) {
              return exactref::mixed(parse_dtype(acc), parse_dtype(out), base.value_or(exactref::any_order()));
          },
          nb::arg("acc"), nb::arg("out"), nb::arg("base").none());
    m.def("directed", &exactref::directed, nb::arg("base"));
    m.def("ftz", &exactref::ftz, nb::arg("base"));
    m.def("parse_standard", [](const std::string& text) { return exactref::parse_standard(text); }, nb::arg("text"));
    m.def("with_options",
          [](standard s, bool any_zero_sign, bool fma) {
              s.any_zero_sign = any_zero_sign;
              s.fma = fma;
              return s;
          },
          nb::arg("standard"), nb::arg("any_zero_sign"), nb::arg("fma"));

    nb::class_<verdict_sensitivity>(m, "Sensitivity",
                                    "What a check can see (exactref/covers.h): the bound B relative to |s|, to "
                                    "S = Σ|t_i| (T for dots) and to the largest term.")
        .def_ro("of_sum", &verdict_sensitivity::of_sum, "B / |s| (inf when s = 0 < B)")
        .def_ro("of_abs_sum", &verdict_sensitivity::of_abs_sum, "B / S (>= 1: the check is vacuous)")
        .def_ro("of_largest", &verdict_sensitivity::of_largest,
                "B / max|t_i|; nan when the reference does not know its largest term (dots, matrix products)")
        .def("__repr__", [](const verdict_sensitivity& s) {
            return "<exactref.Sensitivity of_sum=" + std::to_string(s.of_sum) +
                   " of_abs_sum=" + std::to_string(s.of_abs_sum) + " of_largest=" + std::to_string(s.of_largest) + ">";
        });

    nb::class_<verdict>(m, "Verdict",
                        "The decision of covers() for one result and the exact numbers behind it (exactref/covers.h).")
        .def_ro("covered", &verdict::covered)
        .def_ro("standard", &verdict::standard, "the standard's name")
        .def_prop_ro("result_dtype", [](const verdict& v) { return std::string(info(v.result_format).name); })
        .def_ro("result", &verdict::result, "r: shortest round-trip decimal and C99 hex float")
        .def_ro("exact", &verdict::exact, "s: the exact sum, every decimal digit")
        .def_ro("error_exact", &verdict::error_exact, "r - s exactly, as a decimal ('' when r or s is not finite)")
        .def_ro("error", &verdict::error, "r - s rounded to nearest binary64")
        .def_ro("bound", &verdict::bound, "B rounded upward to binary64 (never below the exact bound)")
        .def_ro("ratio", &verdict::ratio, "|r - s| / B (0 when both are 0, inf when B = 0 < |r - s|)")
        .def_ro("ulps", &verdict::ulps, "(r - s) / ulp(RN(s)) in the result's format")
        .def_ro("reason", &verdict::reason)
        .def_ro("vacuous", &verdict::vacuous,
                "B >= S (or B infinite): no lost or doubled part of the terms can be seen, not even a result of 0 "
                "(never for exact and faithful)")
        .def_ro("sensitivity", &verdict::sensitivity, "B against |s|, S and the largest term (exactref.Sensitivity)")
        .def_ro("advice", &verdict::advice, "when vacuous: a tighter standard or a smaller n that would see something")
        .def("__bool__", [](const verdict& v) { return v.covered; })
        .def("message", &verdict::message)
        .def("__str__", &verdict::message)
        .def("__repr__", [](const verdict& v) {
            return std::string("<exactref.Verdict ") + (v.covered ? "covered" : "NOT covered") + " by " + v.standard +
                   ": result " + v.result + ", ratio " + std::to_string(v.ratio) + (v.vacuous ? ", VACUOUS" : "") +
                   ">";
        });
}

}  // namespace exactref::python
