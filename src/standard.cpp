// Standards: construction, names, the parsing of their CLI spellings, and the shape of a structure.
#include "exactref/standard.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace exactref {

namespace {
constexpr std::string_view accepted_names =
    "exact, faithful, any_order, tree:H, split_k:S, split_k:S:pairwise, levels:L1,...,Lm (e.g. levels:fold/4,any or "
    "levels:fold%65536,tree:256,any), each bound standard optionally prefixed by 'ftz:', 'directed:' and "
    "'mixed:ACC:OUT:' in this order (e.g. ftz:any_order, directed:tree:8, mixed:float32:float16:levels:fold/8,any) "
    "and suffixed by '+fma'";

constexpr std::string_view level_spelling =
    "a level is ORDER followed by how its groups are formed: ORDER is fold, tree or any; ':N' groups of N consecutive "
    "items, '/N' N nearly equal consecutive chunks, '%N' N interleaved groups (item i in group i mod N); the last level "
    "has no suffix (e.g. levels:fold/4,any or levels:fold%65536,tree:256,any)";

std::uint64_t parse_count(std::string_view text, std::string_view what, std::string_view whole,
                          std::uint64_t smallest = 1) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range && end == text.data() + text.size())
        throw std::invalid_argument("bad " + std::string(what) + " '" + std::string(text) + "' in standard '" +
                                    std::string(whole) + "': too large (at most 2^64 - 1 = " +
                                    std::to_string(std::numeric_limits<std::uint64_t>::max()) + ")");
    if (ec != std::errc{} || end != text.data() + text.size() || value < smallest)
        throw std::invalid_argument("bad " + std::string(what) + " '" + std::string(text) + "' in standard '" +
                                    std::string(whole) + "': expected " +
                                    (smallest == 0 ? "a non-negative integer" : "a positive integer"));
    return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t at = text.find(separator, start);
        parts.push_back(text.substr(start, at - start));
        if (at == std::string_view::npos) break;
        start = at + 1;
    }
    return parts;
}

standard of_rule(rule r) {
    standard s;
    s.decides = r;
    if (r != rule::bound) s.levels.clear();
    return s;
}

std::string_view order_name(level_order o) {
    switch (o) {
        case level_order::fold: return "fold";
        case level_order::tree: return "tree";
        case level_order::any: return "any";
    }
    return "?";
}

void check_structure(const std::vector<level>& levels, std::string_view whole) {
    auto fail = [&](const std::string& why) {
        throw std::invalid_argument("bad structure '" + std::string(whole) + "': " + why + "; " +
                                    std::string(level_spelling));
    };
    if (levels.empty()) fail("no levels");
    for (std::size_t i = 0; i < levels.size(); ++i) {
        const level& l = levels[i];
        const bool last = i + 1 == levels.size();
        if (last && l.groups != level_groups::rest) fail("the last level combines all that is left: it has no group suffix");
        if (!last && l.groups == level_groups::rest) fail("level " + std::to_string(i + 1) + " has no group suffix");
        if (l.groups != level_groups::rest && l.size == 0) fail("a group count or size of 0");
        if (l.height && l.order != level_order::tree) fail("only a tree level has a height");
    }
}

// The legacy spelling of a flat structure, or "" when it has none.
std::string flat_name(const standard& s) {
    const std::vector<level>& lv = s.levels;
    if (lv.size() == 1 && lv[0] == level{}) return "any_order";
    if (lv.size() == 1 && lv[0].order == level_order::tree && lv[0].groups == level_groups::rest)
        return lv[0].height ? "tree:" + std::to_string(*lv[0].height) : "";
    if (lv.size() == 2 && lv[0].order == level_order::fold && lv[0].groups == level_groups::chunks &&
        lv[1].groups == level_groups::rest && !lv[1].height) {
        if (lv[1].order == level_order::any) return "split_k:" + std::to_string(lv[0].size);
        if (lv[1].order == level_order::tree) return "split_k:" + std::to_string(lv[0].size) + ":pairwise";
    }
    return "";
}

std::uint64_t ceil_log2(std::uint64_t c) { return c <= 1 ? 0 : static_cast<std::uint64_t>(std::bit_width(c - 1)); }

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
    return a > std::numeric_limits<std::uint64_t>::max() - b ? std::numeric_limits<std::uint64_t>::max() : a + b;
}
}  // namespace

standard exact() { return of_rule(rule::exact); }
standard faithful() { return of_rule(rule::faithful); }
standard any_order() { return of_rule(rule::bound); }

standard tree(std::uint64_t height) {
    standard s = of_rule(rule::bound);
    s.levels = {level{level_order::tree, level_groups::rest, 0, height}};
    return s;
}

standard split_k(std::uint64_t chunks, split_combine how) {
    if (chunks == 0) throw std::invalid_argument("split_k(s) needs s >= 1 chunks");
    standard s = of_rule(rule::bound);
    s.levels = {level{level_order::fold, level_groups::chunks, chunks, {}},
                level{how == split_combine::pairwise ? level_order::tree : level_order::any, level_groups::rest, 0, {}}};
    return s;
}

standard mixed(dtype accumulate, dtype output) { return mixed(accumulate, output, any_order()); }

standard mixed(dtype accumulate, dtype output, standard base) {
    if (base.decides != rule::bound)
        throw std::invalid_argument("mixed() applies to bound standards (any_order, tree, split_k, levels), not to '" +
                                    base.name() + "'");
    if (base.is_mixed()) throw std::invalid_argument("mixed() of '" + base.name() + "': it is mixed already");
    base.accumulate = accumulate;
    base.output = output;
    return base;
}

standard directed(standard base) {
    if (base.decides != rule::bound)
        throw std::invalid_argument("directed() applies to bound standards (any_order, tree, split_k, mixed, levels), "
                                    "not to '" + base.name() + "'");
    base.directed = true;
    return base;
}

standard ftz(standard base) {
    if (base.decides != rule::bound)
        throw std::invalid_argument("ftz() applies to bound standards (any_order, tree, split_k, mixed, directed, "
                                    "levels), not to '" + base.name() + "': under flush-to-zero the correctly rounded "
                                    "sum is not what the hardware computes; use ftz:any_order, or test on data "
                                    "without subnormal values or partial sums");
    base.ftz = true;
    return base;
}

standard levels(std::vector<level> structure) {
    standard s = of_rule(rule::bound);
    std::string spelled = "levels:";
    for (std::size_t i = 0; i < structure.size(); ++i) {
        if (i) spelled += ",";
        spelled += order_name(structure[i].order);
    }
    check_structure(structure, spelled);
    s.levels = std::move(structure);
    s.structured = true;
    return s;
}

std::string standard::structure() const {
    std::string out = "levels:";
    for (std::size_t i = 0; i < levels.size(); ++i) {
        const level& l = levels[i];
        if (i) out += ",";
        out += order_name(l.order);
        if (l.height) {
            out += '@';
            out += std::to_string(*l.height);
        }
        switch (l.groups) {
            case level_groups::rest: break;
            case level_groups::consecutive: out += ':'; break;
            case level_groups::chunks: out += '/'; break;
            case level_groups::interleaved: out += '%'; break;
        }
        if (l.groups != level_groups::rest) out += std::to_string(l.size);
    }
    return out;
}

std::string standard::name() const {
    std::string out = ftz ? "ftz:" : "";
    if (directed) out += "directed:";
    switch (decides) {
        case rule::exact: out += "exact"; break;
        case rule::faithful: out += "faithful"; break;
        case rule::bound: {
            const std::string flat = structured ? std::string() : flat_name(*this);
            if (is_mixed()) {
                out += "mixed:" + std::string(info(*accumulate).name) + ":" +
                       std::string(info(output.value_or(*accumulate)).name);
                if (flat != "any_order") out += ":";
            }
            if (structured) out += structure();
            else if (flat.empty()) out += "flat(" + structure() + ")";  // only by editing the fields by hand
            else if (!(is_mixed() && flat == "any_order")) out += flat;
            break;
        }
    }
    if (fma) out += "+fma";
    return out;
}

namespace {
std::vector<level> parse_levels(std::string_view text, std::string_view whole) {
    std::vector<level> out;
    for (std::string_view item : split(text, ',')) {
        level l;
        std::size_t cut = item.find_first_of(":/%@");
        const std::string_view order = item.substr(0, cut);
        if (order == "fold") l.order = level_order::fold;
        else if (order == "tree") l.order = level_order::tree;
        else if (order == "any") l.order = level_order::any;
        else
            throw std::invalid_argument("unknown level order '" + std::string(order) + "' in standard '" +
                                        std::string(whole) + "': " + std::string(level_spelling));
        std::string_view rest = cut == std::string_view::npos ? std::string_view() : item.substr(cut);
        if (rest.starts_with("@")) {  // tree@H: a tree of height at most H (the structure of tree(H))
            const std::size_t next = rest.find_first_of(":/%", 1);
            l.height = parse_count(rest.substr(1, next == std::string_view::npos ? rest.size() - 1 : next - 1),
                                   "tree height", whole, 0);
            rest = next == std::string_view::npos ? std::string_view() : rest.substr(next);
        }
        if (!rest.empty()) {
            switch (rest[0]) {
                case ':': l.groups = level_groups::consecutive; break;
                case '/': l.groups = level_groups::chunks; break;
                case '%': l.groups = level_groups::interleaved; break;
                default:
                    throw std::invalid_argument("bad level '" + std::string(item) + "' in standard '" +
                                                std::string(whole) + "': " + std::string(level_spelling));
            }
            l.size = parse_count(rest.substr(1), "group count", whole);
        }
        out.push_back(l);
    }
    check_structure(out, whole);
    return out;
}

standard parse_base(std::string_view text, std::string_view whole) {
    const std::vector<std::string_view> parts = split(text, ':');
    const std::string_view head = parts[0];
    if (head == "exact" && parts.size() == 1) return exact();
    if (head == "faithful" && parts.size() == 1) return faithful();
    if (head == "any_order" && parts.size() == 1) return any_order();
    if (head == "tree" && parts.size() == 2) return tree(parse_count(parts[1], "height", whole, 0));
    if (head == "split_k" && (parts.size() == 2 || parts.size() == 3)) {
        split_combine how = split_combine::any_order;
        if (parts.size() == 3) {
            if (parts[2] == "pairwise") how = split_combine::pairwise;
            else if (parts[2] != "any_order")
                throw std::invalid_argument("unknown split_k combine '" + std::string(parts[2]) +
                                            "': use any_order or pairwise");
        }
        return split_k(parse_count(parts[1], "chunk count", whole), how);
    }
    if (head == "levels") {
        if (text.size() <= 7)
            throw std::invalid_argument("standard '" + std::string(whole) + "' has no levels: " +
                                        std::string(level_spelling));
        standard s = of_rule(rule::bound);
        s.levels = parse_levels(text.substr(7), whole);
        s.structured = true;
        return s;
    }
    throw std::invalid_argument("unknown standard '" + std::string(whole) + "': use " + std::string(accepted_names));
}
}  // namespace

standard parse_standard(std::string_view text) {
    const std::string_view whole = text;
    bool is_ftz = false;
    if (text.starts_with("ftz:")) {
        is_ftz = true;
        text.remove_prefix(4);
    }
    bool is_directed = false;
    if (text.starts_with("directed:")) {
        is_directed = true;
        text.remove_prefix(9);
    }
    bool with_fma = false;
    if (text.ends_with("+fma")) {
        with_fma = true;
        text.remove_suffix(4);
    }
    std::optional<std::pair<dtype, dtype>> mix;
    if (text.starts_with("mixed:")) {
        const std::vector<std::string_view> parts = split(text, ':');
        if (parts.size() < 3)
            throw std::invalid_argument("standard '" + std::string(whole) + "': mixed needs ACC and OUT: mixed:ACC:OUT "
                                        "(e.g. mixed:float32:float16) or mixed:ACC:OUT:BASE (e.g. "
                                        "mixed:float32:float16:levels:fold/4,any)");
        mix = std::pair{parse_dtype(parts[1]), parse_dtype(parts[2])};
        const std::size_t skip = parts[0].size() + parts[1].size() + parts[2].size() + 3;
        text = skip > text.size() ? std::string_view("any_order") : text.substr(skip);
        if (text.empty())
            throw std::invalid_argument("standard '" + std::string(whole) + "': nothing after 'mixed:ACC:OUT:': "
                                        "use mixed:ACC:OUT or mixed:ACC:OUT:BASE");
    }
    standard out = parse_base(text, whole);
    if (out.decides != rule::bound && (mix || is_directed || is_ftz))
        throw std::invalid_argument("standard '" + std::string(whole) + "': exact and faithful compare encodings and take "
                                    "no structure, 'ftz:', 'mixed:' or 'directed:' (use those with any_order, tree:H, "
                                    "split_k:S or levels:...)");
    if (mix) out = mixed(mix->first, mix->second, out);
    out.fma = with_fma;
    if (is_directed) out = directed(out);
    return is_ftz ? ftz(out) : out;
}

namespace {

[[noreturn, gnu::cold, gnu::noinline]] void throw_empty_group(const standard& model, std::size_t i,
                                                              std::uint64_t items) {
    const level& l = model.levels[i];
    if (items == 0)  // no group count fits: the sum has no terms at all
        throw std::invalid_argument("standard '" + model.name() + "': level " + std::to_string(i + 1) + " asks for " +
                                    std::to_string(l.size) +
                                    " groups of 0 items: a structured standard needs at least one term; an empty "
                                    "sum is exactly +0.0 (judge it without the structure, e.g. with exact)");
    throw std::invalid_argument(
        "standard '" + model.name() + "': level " + std::to_string(i + 1) + " asks for " + std::to_string(l.size) +
        " groups of " + std::to_string(items) + " items, so a group would be empty: give at most " +
        std::to_string(items) + " (" + std::string(order_name(l.order)) +
        (l.groups == level_groups::chunks ? "/" : "%") + std::to_string(items) +
        " describes the same kernel: an idle thread adds nothing)");
}

// Level i's shape when it receives `items` items (level_shapes, structure_depth). Throws as level_shapes documents.
inline level_shape shape_of_level(const standard& model, std::size_t i, std::uint64_t items) {
    const level& l = model.levels[i];
    level_shape sh;
    sh.items = items;
    switch (l.groups) {
        case level_groups::rest:
            sh.groups = items == 0 ? 0 : 1;
            sh.largest = items;
            break;
        case level_groups::consecutive:
            sh.groups = items / l.size + (items % l.size != 0 ? 1 : 0);
            sh.largest = std::min(items, l.size);
            break;
        case level_groups::chunks:
        case level_groups::interleaved: {
            if (model.structured && l.size > items) throw_empty_group(model, i, items);
            sh.groups = std::min(l.size, items);
            sh.largest = sh.groups == 0 ? 0 : items / sh.groups + (items % sh.groups != 0 ? 1 : 0);
            break;
        }
    }
    return sh;
}

}  // namespace

std::vector<level_shape> level_shapes(const standard& model, std::uint64_t leaves) {
    std::vector<level_shape> shapes;
    std::uint64_t items = leaves;
    for (std::size_t i = 0; i < model.levels.size(); ++i) {
        const level_shape sh = shape_of_level(model, i, items);
        shapes.push_back(sh);
        items = sh.groups;
    }
    return shapes;
}

// Level by level without building the shapes (covers() over a scan asks for every n from 1 to the scan's length).
std::uint64_t structure_depth(const standard& model, std::uint64_t leaves) {
    std::uint64_t depth = 0;
    std::uint64_t items = leaves;
    for (std::size_t i = 0; i < model.levels.size(); ++i) {
        const level& l = model.levels[i];
        const level_shape sh = shape_of_level(model, i, items);
        const std::uint64_t c = sh.largest;
        std::uint64_t d = 0;
        if (c > 0) {
            if (l.order == level_order::tree) d = l.height ? *l.height : ceil_log2(c);
            else d = c - 1;
        }
        depth = saturating_add(depth, d);
        items = sh.groups;
    }
    return depth;
}

}  // namespace exactref
