// fuzz_text: read_text (io.h) on arbitrary bytes, the format chosen by the first byte.
// Properties: only std::invalid_argument is thrown, its message naming the source; an accepted input holds exactly
// the tokens of an independent tokenizer (BOM, '#' comments to the end of a line ending at \n or \r, blanks and
// commas as separators), each value is parse_number_bits of its token, and every value reads back bit for bit
// from to_shortest_string and to_hex_string.
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "exactref/io.h"
#include "fuzz_check.h"
#include "oracle.h"

namespace {

std::vector<std::string> tokens_of(std::string_view s) {
    if (s.starts_with("\xEF\xBB\xBF")) s.remove_prefix(3);
    std::vector<std::string> out;
    std::string current;
    bool comment = false;
    for (char c : s) {
        if (comment) {
            if (c == '\n' || c == '\r') comment = false;
            continue;
        }
        const bool separator = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == ',';
        if (c == '#' || separator) {
            if (!current.empty()) out.push_back(current);
            current.clear();
            comment = c == '#';
            continue;
        }
        current += c;
    }
    if (!current.empty()) out.push_back(current);
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const auto type = static_cast<exactref::dtype>(data[0] % 4);
    const exactref::format_info& f = exactref::info(type);
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    std::istringstream in(text);
    exactref::data_array array;
    try {
        array = exactref::read_text(in, type, "fuzz.txt");
    } catch (const std::invalid_argument& e) {
        EXACTREF_FUZZ_CHECK(std::string_view(e.what()).starts_with("fuzz.txt"), e.what());
        return 0;
    }
    EXACTREF_FUZZ_CHECK(array.type() == type, "wrong dtype");
    const std::vector<std::string> tokens = tokens_of(text);
    EXACTREF_FUZZ_CHECK(array.size() == tokens.size(),
                        std::to_string(array.size()) + " values, " + std::to_string(tokens.size()) + " tokens");
    std::visit(
        [&](const auto& values) {
            using T = typename std::decay_t<decltype(values)>::value_type;
            for (std::size_t i = 0; i < values.size(); ++i) {
                const std::uint64_t bits = exactref::format_traits<T>::to_bits(values[i]);
                const std::uint64_t alone = exactref::parse_number_bits(tokens[i], f);
                EXACTREF_FUZZ_CHECK(bits == alone, "token '" + tokens[i] + "' read as " +
                                                       exactref::oracle::describe(bits, f) + " in the array, " +
                                                       exactref::oracle::describe(alone, f) + " alone");
                for (const std::string& printed : {exactref::to_shortest_string(f, bits), exactref::to_hex_string(f, bits)}) {
                    const std::uint64_t back = exactref::parse_number_bits(printed, f);
                    if (exactref::oracle::is_nan_bits(f, bits))
                        EXACTREF_FUZZ_CHECK(exactref::oracle::is_nan_bits(f, back), printed);
                    else
                        EXACTREF_FUZZ_CHECK(back == bits, exactref::oracle::describe(bits, f) + " printed '" + printed +
                                                              "' reads back as " + exactref::oracle::describe(back, f));
                }
            }
        },
        array.values);
    return 0;
}
