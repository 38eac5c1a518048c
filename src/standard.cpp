// Standards: construction, names, and parsing of their CLI spellings.
#include "exactref/standard.h"

#include <charconv>
#include <stdexcept>
#include <string>
#include <vector>

namespace exactref {

namespace {
constexpr std::string_view accepted_names =
    "exact, faithful, any_order, tree:H, split_k:S, split_k:S:pairwise, mixed:ACC:OUT (e.g. mixed:float32:float16), "
    "each optionally prefixed by 'directed:' (e.g. directed:tree:8)";

std::uint64_t parse_count(std::string_view text, std::string_view what, std::string_view whole,
                          std::uint64_t smallest = 1) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || value < smallest)
        throw std::invalid_argument("bad " + std::string(what) + " '" + std::string(text) + "' in standard '" +
                                    std::string(whole) + "': expected " +
                                    (smallest == 0 ? "a non-negative integer" : "a positive integer"));
    return value;
}

std::vector<std::string_view> split_colons(std::string_view text) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t colon = text.find(':', start);
        parts.push_back(text.substr(start, colon - start));
        if (colon == std::string_view::npos) break;
        start = colon + 1;
    }
    return parts;
}
}  // namespace

namespace {
standard of_kind(standard_kind kind) {
    standard s;
    s.kind = kind;
    return s;
}
}  // namespace

standard exact() { return of_kind(standard_kind::exact); }
standard faithful() { return of_kind(standard_kind::faithful); }
standard any_order() { return of_kind(standard_kind::any_order); }

standard tree(std::uint64_t height) {
    standard s = of_kind(standard_kind::tree);
    s.height = height;
    return s;
}

standard split_k(std::uint64_t chunks, split_combine how) {
    if (chunks == 0) throw std::invalid_argument("split_k(s) needs s >= 1 chunks");
    standard s = of_kind(standard_kind::split_k);
    s.chunks = chunks;
    s.combine = how;
    return s;
}

standard mixed(dtype accumulate, dtype output) {
    standard s = of_kind(standard_kind::mixed);
    s.accumulate = accumulate;
    s.output = output;
    return s;
}

standard directed(standard base) {
    if (base.kind == standard_kind::exact || base.kind == standard_kind::faithful)
        throw std::invalid_argument("directed() applies to bound standards (any_order, tree, split_k, mixed), not to '" +
                                    base.name() + "'");
    base.directed = true;
    return base;
}

std::string standard::name() const {
    std::string out = directed ? "directed:" : "";
    switch (kind) {
        case standard_kind::exact: out += "exact"; break;
        case standard_kind::faithful: out += "faithful"; break;
        case standard_kind::any_order: out += "any_order"; break;
        case standard_kind::tree: out += "tree:" + std::to_string(height); break;
        case standard_kind::split_k:
            out += "split_k:" + std::to_string(chunks);
            if (combine == split_combine::pairwise) out += ":pairwise";
            break;
        case standard_kind::mixed:
            out += "mixed:" + std::string(info(accumulate.value_or(dtype::float32)).name) + ":" +
                   std::string(info(output.value_or(dtype::float32)).name);
            break;
    }
    if (fma) out += "+fma";
    return out;
}

standard parse_standard(std::string_view text) {
    const std::string_view whole = text;
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
    const std::vector<std::string_view> parts = split_colons(text);
    standard out;
    const std::string_view head = parts[0];
    if (head == "exact" && parts.size() == 1) out = exact();
    else if (head == "faithful" && parts.size() == 1) out = faithful();
    else if (head == "any_order" && parts.size() == 1) out = any_order();
    else if (head == "tree" && parts.size() == 2) out = tree(parse_count(parts[1], "height", whole, 0));
    else if (head == "split_k" && (parts.size() == 2 || parts.size() == 3)) {
        split_combine how = split_combine::any_order;
        if (parts.size() == 3) {
            if (parts[2] == "pairwise") how = split_combine::pairwise;
            else if (parts[2] != "any_order")
                throw std::invalid_argument("unknown split_k combine '" + std::string(parts[2]) +
                                            "': use any_order or pairwise");
        }
        out = split_k(parse_count(parts[1], "chunk count", whole), how);
    } else if (head == "mixed" && parts.size() == 3) {
        out = mixed(parse_dtype(parts[1]), parse_dtype(parts[2]));
    } else {
        throw std::invalid_argument("unknown standard '" + std::string(whole) + "': use " + std::string(accepted_names));
    }
    out.fma = with_fma;
    return is_directed ? directed(out) : out;
}

}  // namespace exactref
