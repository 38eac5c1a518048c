// fuzz_npy: read_npy and load_array (io.h) on arbitrary bytes (an in-memory file, memfd_create).
// Properties: no crash or out-of-bounds read (ASan); only std::invalid_argument is thrown; an accepted file's values
// are its last size·width bytes decoded little-endian (nothing may follow the data), load_array reads the same
// bits, and each value reads back bit for bit from to_hex_string.
#include <sys/mman.h>  // memfd_create
#include <unistd.h>    // write, ftruncate, lseek, close

#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>

#include "exactref/io.h"
#include "fuzz_check.h"
#include "oracle.h"

namespace {

int memory_file() {
    static const int fd = memfd_create("fuzz.npy", 0);
    return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const int fd = memory_file();
    EXACTREF_FUZZ_CHECK(fd >= 0, "memfd_create failed");
    EXACTREF_FUZZ_CHECK(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0, "cannot reset the memory file");
    EXACTREF_FUZZ_CHECK(size == 0 || write(fd, data, size) == static_cast<ssize_t>(size), "short write");
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    exactref::data_array array;
    try {
        array = exactref::read_npy(path);
    } catch (const std::invalid_argument& e) {
        EXACTREF_FUZZ_CHECK(std::string(e.what()).find(path) != std::string::npos, e.what());
        return 0;
    }
    const exactref::format_info& f = exactref::info(array.type());
    const std::size_t width = f.storage_bits / 8;
    EXACTREF_FUZZ_CHECK(array.size() * width <= size, "more values than bytes");
    const std::uint8_t* payload = data + size - array.size() * width;
    exactref::data_array again = exactref::load_array(path, array.type(), true);
    EXACTREF_FUZZ_CHECK(again.type() == array.type() && again.size() == array.size(), "load_array differs");
    std::visit(
        [&](const auto& values) {
            using T = typename std::decay_t<decltype(values)>::value_type;
            const auto& other = std::get<std::decay_t<decltype(values)>>(again.values);
            for (std::size_t i = 0; i < values.size(); ++i) {
                std::uint64_t stored = 0;
                for (std::size_t b = 0; b < width; ++b) stored |= std::uint64_t{payload[i * width + b]} << (8 * b);
                const std::uint64_t bits = exactref::format_traits<T>::to_bits(values[i]);
                EXACTREF_FUZZ_CHECK(bits == stored, "value " + std::to_string(i) + ": " +
                                                        exactref::oracle::describe(bits, f) + ", file holds " +
                                                        exactref::oracle::describe(stored, f));
                EXACTREF_FUZZ_CHECK(exactref::format_traits<T>::to_bits(other[i]) == bits, "load_array differs");
                const std::uint64_t back = exactref::parse_number_bits(exactref::to_hex_string(f, bits), f);
                EXACTREF_FUZZ_CHECK(exactref::oracle::is_nan_bits(f, bits) ? exactref::oracle::is_nan_bits(f, back)
                                                                           : back == bits,
                                    exactref::to_hex_string(f, bits));
            }
        },
        array.values);
    return 0;
}
