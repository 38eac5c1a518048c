// examples/demo_table.h — aligned text tables and number formatting for atomic_sum_demo.
//
// Display only: every number printed here comes from an exact computation elsewhere (the superaccumulator, covers());
// the doubles formatted below are the verdict's display fields.
#pragma once

#include <algorithm>  // std::max
#include <cmath>      // std::isfinite
#include <cstddef>
#include <cstdio>     // std::snprintf
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace exactref::demo {

/// printf-style formatting into a std::string (examples do not link fmt, and GCC 12 has no <format>).
template <class... Args>
std::string format(const char* spec, Args... args) {
    char buffer[256];
    const int n = std::snprintf(buffer, sizeof buffer, spec, args...);
    if (n < 0) return {};
    if (static_cast<std::size_t>(n) < sizeof buffer) return std::string(buffer, static_cast<std::size_t>(n));
    std::string out(static_cast<std::size_t>(n) + 1, '\0');
    std::snprintf(out.data(), out.size(), spec, args...);
    out.resize(static_cast<std::size_t>(n));
    return out;
}

/// A signed number in short scientific form for error columns ("+1.121e-04", "-3.500e+00", "0").
inline std::string signed_sci(double x) {
    if (x == 0) return "0";
    if (!std::isfinite(x)) return format("%+g", x);
    return format("%+.3e", x);
}

/// A ratio error/bound: scientific when small, fixed when near 1 ("2.37e-05", "3.41").
inline std::string ratio_text(double x) {
    if (x == 0) return "0";
    if (!std::isfinite(x)) return format("%g", x);
    if (x < 0.01) return format("%.2e", x);
    return format("%.3f", x);
}

/// "10000" -> "10,000".
inline std::string grouped(std::size_t n) {
    std::string digits = std::to_string(n);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

/// A table printed with columns as wide as their widest cell. Numeric columns are right-aligned.
class table {
public:
    enum class align { left, right };
    struct column {
        std::string header;
        align how = align::left;
    };

    explicit table(std::vector<column> columns) : columns_(std::move(columns)) {}

    void add_row(std::vector<std::string> cells) {
        cells.resize(columns_.size());
        rows_.push_back(std::move(cells));
    }

    /// Prints the header, a rule and the rows, each line starting with `indent`.
    void print(std::ostream& out, std::string_view indent = "  ") const {
        std::vector<std::size_t> width(columns_.size());
        for (std::size_t c = 0; c < columns_.size(); ++c) {
            width[c] = columns_[c].header.size();
            for (const auto& row : rows_) width[c] = std::max(width[c], display_width(row[c]));
        }
        auto line = [&](const std::vector<std::string>& cells) {
            std::string text(indent);
            for (std::size_t c = 0; c < columns_.size(); ++c) {
                const std::size_t pad = width[c] - display_width(cells[c]);
                if (c != 0) text += "  ";
                if (columns_[c].how == align::right) text.append(pad, ' ');
                text += cells[c];
                if (columns_[c].how == align::left && c + 1 != columns_.size()) text.append(pad, ' ');
            }
            while (!text.empty() && text.back() == ' ') text.pop_back();
            out << text << '\n';
        };
        std::vector<std::string> headers;
        std::vector<std::string> rules;
        for (std::size_t c = 0; c < columns_.size(); ++c) {
            headers.push_back(columns_[c].header);
            rules.emplace_back(width[c], '-');
        }
        line(headers);
        line(rules);
        for (const auto& row : rows_) line(row);
    }

private:
    // Counts code points, not bytes, so "Σ" or "≤" in a cell does not skew the alignment (UTF-8 continuation bytes
    // are 10xxxxxx).
    static std::size_t display_width(const std::string& s) {
        std::size_t n = 0;
        for (unsigned char ch : s) n += (ch & 0xC0u) != 0x80u;
        return n;
    }

    std::vector<column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

}  // namespace exactref::demo
