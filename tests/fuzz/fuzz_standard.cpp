// fuzz_standard: parse_standard (standard.h) on arbitrary strings.
// Properties: a rejected string throws std::invalid_argument with a message; an accepted one round-trips through
// its spelling (parse_standard(s.name()) == s, and name() is a fixed point), and its structure() spelling parses to
// a standard with the same levels.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "exactref/standard.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    exactref::standard s;
    try {
        s = exactref::parse_standard(text);
    } catch (const std::invalid_argument& e) {
        EXACTREF_FUZZ_CHECK(std::string_view(e.what()).size() > 0, "empty message");
        return 0;
    }
    const std::string name = s.name();
    exactref::standard again;
    try {
        again = exactref::parse_standard(name);
    } catch (const std::invalid_argument& e) {
        EXACTREF_FUZZ_CHECK(false, "'" + std::string(text) + "' prints as '" + name + "', which is refused: " + e.what());
    }
    EXACTREF_FUZZ_CHECK(again == s, "'" + std::string(text) + "' prints as '" + name + "', which parses differently ('" +
                                        again.name() + "')");
    EXACTREF_FUZZ_CHECK(again.name() == name, name + " -> " + again.name());
    if (s.decides == exactref::rule::bound) {
        const std::string structure = s.structure();
        exactref::standard shape;
        try {
            shape = exactref::parse_standard(structure);
        } catch (const std::invalid_argument& e) {
            EXACTREF_FUZZ_CHECK(false, "'" + name + "' has the structure '" + structure + "', which is refused: " + e.what());
        }
        EXACTREF_FUZZ_CHECK(shape.levels == s.levels, "'" + name + "': structure '" + structure + "' has other levels");
    }
    return 0;
}
