// exactref/io.h — reading and writing arrays of the four formats: text (decimal or C99 hex floats) and .npy.
//
// Text input: numbers separated by white space or commas; '#' starts a comment to the end of the line. Each number
// is decimal ("0.1", "-2.5e-3") or a C99 hex float ("0x1.8p+1"), or inf, -inf, +inf, nan (any case). Each number is
// rounded once, correctly (round-to-nearest-even, with subnormals and overflow to ±Inf), into the dtype: MPFR
// (mpfr_strtofr, mpfr_subnormalize) decides, so parsing "0.1" into float16 never passes through float64.
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include <cstdint>
#include <iosfwd>
#include <memory>     // std::unique_ptr (array_reader)
#include <stdexcept>  // std::invalid_argument (text_parse_error)
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "exactref/format.h"

namespace exactref {

/// An owned one-dimensional array of one of the four formats.
struct data_array {
    std::variant<std::vector<double>, std::vector<float>, std::vector<float16>, std::vector<bfloat16>> values;
    dtype type() const noexcept { return static_cast<dtype>(values.index()); }
    std::size_t size() const noexcept {
        return std::visit([](const auto& v) { return v.size(); }, values);
    }
};

/// Parses one number (whole string, surrounding blanks allowed) correctly rounded into format f; raw bits.
///   decimal   [sign] digits [. digits] [e [sign] digits]        "0.1", "-2.5e-3", ".5", "1."
///   hex       [sign] 0x hexdigits [. hexdigits] [p [sign] digits] "0x1.e9ab0ep+4", "0x10" (C99, p-exponent optional)
///   specials  [sign] inf | infinity | nan, any case            NaN gives the quiet NaN with that sign bit
/// Rounding is round-to-nearest-even once from the exact decimal/hex value, with gradual underflow (a tie below
/// the smallest subnormal goes to ±0) and overflow to ±Inf at (2 - 2^-p)·2^emax; "-0" and negative underflow
/// keep the sign. Decided by MPFR at precision p in f's exponent range (mpfr_strtofr, mpfr_check_range,
/// mpfr_subnormalize) and encoded with integer operations: independent of the rounding mode and FTZ/DAZ.
///   parse_number_bits("0.1", binary16_info)  // -> 0x2e66
/// Throws std::invalid_argument("not a number: '...'") for anything else (the text quoted, blanks trimmed, followed
/// by the accepted forms).
std::uint64_t parse_number_bits(std::string_view text, const format_info& f);

template <floating_format T>
T parse_number(std::string_view text) {
    using tr = format_traits<T>;
    return tr::from_bits(static_cast<typename tr::bits_type>(parse_number_bits(text, tr::info)));
}

/// Reads a text array from `in` to its end (no seeking: a pipe is fine). `source` names the input in error messages
/// ("data.txt:12: not a number: 'abc'"). Numbers are separated by blanks and commas (a comma is just a separator);
/// '#' comments to the end of the line; lines end at "\n", "\r\n" or a lone "\r", and line numbers count each;
/// a UTF-8 byte order mark (EF BB BF) at the start of the input is skipped; no numbers at all gives an empty array.
/// Throws std::invalid_argument on a malformed number (with source:line and the text), and when `in` cannot be
/// read to its end: already failed on entry ("data.txt: read error before the first line ..."), a read error
/// (badbit, with strerror(errno) when set) or failbit without eofbit ("... read error after line 12 ...").
data_array read_text(std::istream& in, dtype type, std::string_view source);

/// Reads a .npy file (format 1.0/2.0/3.0, little-endian float16/float32/float64 — descr '<f2', '<f4', '<f8' —,
/// C order, any shape: flattened in C order; shape () is one value). Data is assembled from little-endian bytes
/// (host byte order does not matter). Format: numpy.lib.format (NEP 1). numpy's other spellings of these dtypes
/// are the same dtypes and are read: '<d', '<f', '<e'; '=f8', '|f8', 'f8', 'd' and the like (the host's byte order,
/// as np.load reads them: little-endian on a little-endian host); 'float64', 'double', 'float', 'float32',
/// 'single', 'float16', 'half'. The header is read only as far as the file holds it and at most 10000 bytes long
/// (numpy's limit, np.load's default max_header_size).
/// Throws std::invalid_argument, naming the file and what to do, for another dtype (integers, big-endian '>f4',
/// structured; the 2-byte void '<V2' of ml_dtypes' bfloat16 files, which only load_array with bfloat16 given
/// reads), Fortran order, a header over 10000 bytes ("header too large"), a truncated header or data, bytes after
/// the data, a bad header (text after the dict's closing '}' included; control bytes shown as \xHH), a read
/// error, or a file that cannot be opened ("cannot open 'x.npy': No such file or directory").
data_array read_npy(const std::string& path);

/// Reads FILE, or standard input for "-" (std::cin, named "<stdin>" in messages): .npy (read_npy's rules) when the
/// first byte is 0x93, the start of the .npy magic "\x93NUMPY" (never the first byte of text), else text in `type`
/// (read_text's rules). The byte is looked at without being taken and nothing seeks, so pipes, FIFOs, /dev/stdin
/// and /dev/fd/N (bash's process substitution) read like files. For .npy input, a `type` that differs from the
/// file's dtype is an error unless type_given is false; a 2-byte void descr ('<V2', how ml_dtypes' bfloat16 arrays
/// are saved) is read as little-endian bfloat16 only when type_given and type is bfloat16, and refused otherwise
/// with a message that says so.
/// Throws std::invalid_argument for a file that cannot be opened ("cannot open 'x': <reason>"), for input that
/// cannot be read to its end (a read error; for "-", a read error of stdin itself, such as a closed descriptor:
/// "<stdin>: cannot read standard input: Bad file descriptor ..."), and for what read_text and read_npy refuse.
data_array load_array(const std::string& path, dtype type, bool type_given);

/// What parsing text changed about the numbers it read: a finite decimal (or hex float) too large for the dtype
/// becomes ±Inf, a non-zero one too small becomes ±0 (IEEE 754 overflow and underflow). Counts, and the line of the
/// first of each (1-based, as in error messages; 0 when there was none), and how many lines the text had (set at the
/// end of the input: with read_options::skip_rows, skip_rows >= lines means nothing was left to read). .npy input
/// never reports any.
struct parse_report {
    std::uint64_t overflowed = 0;
    std::uint64_t first_overflow_line = 0;
    std::uint64_t underflowed = 0;
    std::uint64_t first_underflow_line = 0;
    std::uint64_t lines = 0;  // lines of text read, a last line without its line end included (0 for empty input)
};

/// A malformed text number: std::invalid_argument with the message read_text gives ("data.txt:12: not a number:
/// 'abc' (...)"), and where it was: the line, and how many numbers came before it (0 for a header line).
struct text_parse_error : std::invalid_argument {
    text_parse_error(const std::string& what, std::uint64_t line_number, std::uint64_t values_before)
        : std::invalid_argument(what), line(line_number), values_read(values_before) {}
    std::uint64_t line;
    std::uint64_t values_read;
};

/// How array_reader reads text: skip_rows lines at the start are passed over unread (a CSV header). Lines are
/// counted as read_text counts them; .npy input refuses skip_rows > 0 (std::invalid_argument: it has no lines).
struct read_options {
    std::uint64_t skip_rows = 0;
};

/// Reads FILE (or "-" for standard input) in chunks, in O(chunk) memory whatever the input's size: load_array's
/// rules (format by the first byte, the dtype checks, every error message) without holding the array. Text numbers
/// are parsed as read_text parses them: float64 and float32 decimals by fast_float's from_chars (correctly rounded,
/// Eisel–Lemire with a big-integer fallback; its result is taken only when it consumed the whole token), hex floats,
/// the 16-bit formats and anything fast_float does not take by MPFR (parse_number_bits): the same bits either way.
///   exactref::array_reader r("data.npy", exactref::dtype::float64, false);
///   exactref::data_array chunk;
///   while (r.next(chunk)) { /* chunk holds the next <= chunk_values values, in r.type() */ }
/// Errors are thrown by the constructor (cannot open, bad .npy header) or by next() (a malformed number, a
/// truncated file, a read error), as std::invalid_argument; a malformed text number as text_parse_error.
class array_reader {
public:
    static constexpr std::size_t chunk_values = std::size_t{1} << 20;  // at most 8 MiB of float64 per chunk

    array_reader(const std::string& path, dtype type, bool type_given, const read_options& options = {});
    ~array_reader();
    array_reader(const array_reader&) = delete;
    array_reader& operator=(const array_reader&) = delete;

    /// The element format: the .npy file's own, else the requested dtype.
    dtype type() const noexcept;
    /// Replaces chunk's contents by the next values in type() (at most chunk_values from a .npy; from text, at most
    /// chunk_values + 2^19: the rest of the last 1 MiB read); false, with chunk
    /// empty, at the end of the input (after checking that it ended well: no bytes after .npy data, no read error).
    bool next(data_array& chunk);
    /// Input bytes consumed so far, and the input's size when known (a regular file; 0 for a pipe): for progress.
    std::uint64_t bytes_read() const noexcept;
    std::uint64_t total_bytes() const noexcept;
    /// Values read so far, and what parsing changed about them (text only).
    std::uint64_t values_read() const noexcept;
    const parse_report& report() const noexcept;

private:
    struct state;
    std::unique_ptr<state> state_;
};

/// load_array with read_options (skip_rows) and what parsing changed (report, when not null): array_reader drained.
data_array load_array(const std::string& path, dtype type, bool type_given, const read_options& options,
                      parse_report* report);

/// Shortest decimal string that reads back (round-to-nearest) to the same value of format f ("0.1", "1e+30",
/// "-0", "inf", "-inf", "nan" for every NaN). For float64/float32 it is std::to_chars' shortest form (run in the
/// default floating-point environment, so FTZ/DAZ set by the caller cannot turn a subnormal into "0"); for
/// float16/bfloat16 the same rules: fewest significant digits, the nearest such decimal to the value, fixed or
/// scientific notation ("6e-08", "65500") whichever is shorter, fixed on a tie.
std::string to_shortest_string(const format_info& f, std::uint64_t bits);
template <floating_format T>
std::string to_shortest_string(T x) {
    return to_shortest_string(format_traits<T>::info, format_traits<T>::to_bits(x));
}

/// C99 hex float of the exact value ("0x1.e9ab0ep+4", "-0x0p+0", "inf", "nan"); reads back exactly. Always
/// normalized with a leading 1, subnormals too (float16 0x0001 -> "0x1p-24"), trailing zero hex digits dropped.
std::string to_hex_string(const format_info& f, std::uint64_t bits);
template <floating_format T>
std::string to_hex_string(T x) {
    return to_hex_string(format_traits<T>::info, format_traits<T>::to_bits(x));
}

/// Writes one number per line as C99 hex floats (to_hex_string; exact, reads back bit for bit) after the comment,
/// each of its lines starting with '#': the CLI's own text format.
template <floating_format T>
void write_text(std::ostream& out, std::span<const T> xs, std::string_view comment);

}  // namespace exactref
