// Reading and writing arrays of the four formats (include/exactref/io.h): correctly rounded text parsing with MPFR,
// .npy headers and data, shortest round-trip and exact hexadecimal printing.
//
// Nothing here converts through host floating-point arithmetic: parsed values leave MPFR as an integer significand
// and a power of two (mpfr_get_z_2exp) and are encoded with integer operations, and .npy data is assembled from
// little-endian bytes into raw bits. Results therefore do not depend on the rounding mode or on FTZ/DAZ.
#include "exactref/io.h"

#include <gmp.h>
#include <mpfr.h>

#include <algorithm>
#include <array>
#include <bit>          // std::bit_width, std::countr_zero
#include <cerrno>
#include <charconv>     // std::to_chars (shortest round trip)
#include <cstdio>       // std::ferror, std::clearerr: read errors on stdin
#include <cstring>      // std::strerror, std::memcpy
#include <filesystem>   // std::filesystem::is_directory
#include <fstream>
#include <iostream>
#include <istream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <fast_float/fast_float.h>  // fast_float::from_chars: correctly rounded binary64/binary32 decimals

#include "exactref/detail/fp_environment.h"

namespace exactref {

// ---- Section 1: parsing one number ---------------------------------------------------------------------------------
namespace {

static_assert(sizeof(unsigned long) >= sizeof(std::uint64_t), "mpz_get_ui must hold a 53-bit significand");

/// Sets MPFR's exponent range to that of format f for the lifetime of the guard and restores the caller's range on
/// every exit (including exceptions). MPFR writes x = 0.b1b2... * 2^E, so f's normals [2^emin, 2^(emax+1)) are
/// E in [emin + 1, emax + 1] and its smallest subnormal 2^(emin - p + 1) is E = emin - p + 2 (the recipe of the
/// MPFR manual, "mpfr_subnormalize", for binary64: emin = -1073, emax = 1024).
class exponent_range_guard {
public:
    explicit exponent_range_guard(const format_info& f) : old_emin_(mpfr_get_emin()), old_emax_(mpfr_get_emax()) {
        mpfr_set_emin(f.emin - f.precision + 2);
        mpfr_set_emax(f.emax + 1);
    }
    ~exponent_range_guard() {
        mpfr_set_emin(old_emin_);
        mpfr_set_emax(old_emax_);
    }
    exponent_range_guard(const exponent_range_guard&) = delete;
    exponent_range_guard& operator=(const exponent_range_guard&) = delete;

private:
    mpfr_exp_t old_emin_;
    mpfr_exp_t old_emax_;
};

/// An mpfr_t that clears itself.
class mpfr_value {
public:
    explicit mpfr_value(mpfr_prec_t precision) { mpfr_init2(x_, precision); }
    ~mpfr_value() { mpfr_clear(x_); }
    mpfr_value(const mpfr_value&) = delete;
    mpfr_value& operator=(const mpfr_value&) = delete;
    mpfr_ptr get() noexcept { return x_; }

private:
    mpfr_t x_;
};

class mpz_value {
public:
    mpz_value() { mpz_init(z_); }
    ~mpz_value() { mpz_clear(z_); }
    mpz_value(const mpz_value&) = delete;
    mpz_value& operator=(const mpz_value&) = delete;
    mpz_ptr get() noexcept { return z_; }

private:
    mpz_t z_;
};

bool is_blank(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != b[i]) return false;
    }
    return true;
}

bool is_digit(char c, bool hex) noexcept {
    if (c >= '0' && c <= '9') return true;
    return hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
}

/// The accepted grammar, checked before MPFR sees the text (mpfr_strtofr alone would also take "@inf@", "0b101",
/// a bare "1e" and stop early on garbage):
///   number   = [sign] (decimal | hex)
///   decimal  = (digits ["." [digits]] | "." digits) [("e"|"E") [sign] digits]
///   hex      = ("0x"|"0X") (hexdigits ["." [hexdigits]] | "." hexdigits) [("p"|"P") [sign] digits]
/// Returns whether `s` (sign removed) matches; sets `hex`.
bool matches_number_grammar(std::string_view s, bool& hex) noexcept {
    std::size_t i = 0;
    hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    if (hex) i = 2;
    std::size_t mantissa_digits = 0;
    while (i < s.size() && is_digit(s[i], hex)) ++i, ++mantissa_digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && is_digit(s[i], hex)) ++i, ++mantissa_digits;
    }
    if (mantissa_digits == 0) return false;
    if (i == s.size()) return true;
    const char marker = s[i];
    if (hex ? (marker != 'p' && marker != 'P') : (marker != 'e' && marker != 'E')) return false;
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exponent_digits = 0;
    while (i < s.size() && is_digit(s[i], false)) ++i, ++exponent_digits;
    return exponent_digits > 0 && i == s.size();
}

/// Rewrites an exponent too large for MPFR's parser into one that gives the same rounded value. mpfr_strtofr wraps
/// exponents past the range of its exponent type: "-.0012e-323000000000001244989036" came back as -Inf, not -0 (found
/// by tests/fuzz/fuzz_number; test ParseNumber.HugeExponentsOverflowOrUnderflowAsWritten). With m mantissa digits
/// (m <= the text's length) the written value is M·B^E with B^-m <= |M| < B^m for a non-zero M, so from
/// |E| >= L = 10^7 + text length on it overflows (E > 0) or rounds to zero (E < 0) in every format: clamping E to
/// ±L changes nothing. `text` matches the grammar above.
void clamp_exponent(std::string& text, bool hex) {
    const std::size_t marker = text.find_first_of(hex ? "pP" : "eE");
    if (marker == std::string::npos) return;
    std::size_t i = marker + 1;
    const bool negative = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    while (i + 1 < text.size() && text[i] == '0') ++i;  // leading zeros
    const std::string_view exponent(text.data() + i, text.size() - i);
    const std::uint64_t limit = 10'000'000 + text.size();
    std::uint64_t e = 0;
    bool large = exponent.size() > 18;
    for (std::size_t k = 0; !large && k < exponent.size(); ++k) e = e * 10 + static_cast<std::uint64_t>(exponent[k] - '0');
    if (!large && e <= limit) return;
    text.resize(marker + 1);
    text.push_back(negative ? '-' : '+');
    text.append(std::to_string(limit));
}

std::uint64_t sign_bit(const format_info& f, bool negative) noexcept {
    return negative ? std::uint64_t{1} << (f.storage_bits - 1) : 0;
}

std::uint64_t infinity_bits(const format_info& f, bool negative) noexcept {
    return sign_bit(f, negative) | (std::uint64_t{f.special_exponent_field()} << (f.precision - 1));
}

std::uint64_t quiet_nan_bits(const format_info& f, bool negative) noexcept {
    return infinity_bits(f, negative) | (std::uint64_t{1} << (f.precision - 2));
}

/// Encodes (negative ? -1 : 1) * m * 2^e, a value of format f (1 <= m < 2^p, no rounding needed), with integer
/// operations: normal when the leading bit's exponent t = e + bit_width(m) - 1 is at least emin, else subnormal
/// (then e >= emin - p + 1, which mpfr_subnormalize guarantees).
std::uint64_t encode_exact(const format_info& f, bool negative, std::uint64_t m, long e) {
    const int p = f.precision;
    if (m != 0) {  // drop trailing zeros: MPFR hands out all p bits, a subnormal's low ones are zero
        const int zeros = std::countr_zero(m);
        m >>= zeros;
        e += zeros;
    }
    const long width = static_cast<long>(std::bit_width(m));
    const long top = e + width - 1;
    if (m == 0 || width > p || top > f.emax || e < f.subnormal_lsb_exponent())
        throw std::logic_error("exactref: internal error: parsed value is not a value of " + std::string(f.name));
    if (top >= f.emin) {
        const std::uint64_t significand = m << (p - width);                 // exactly p bits
        const std::uint64_t fraction = significand & ((std::uint64_t{1} << (p - 1)) - 1);
        const std::uint64_t biased = static_cast<std::uint64_t>(top + f.emax);  // bias = emax
        return sign_bit(f, negative) | (biased << (p - 1)) | fraction;
    }
    return sign_bit(f, negative) | (m << (e - f.subnormal_lsb_exponent()));  // biased exponent field 0
}

/// The raw bits of x, a value of format f produced under exponent_range_guard(f) at precision p.
std::uint64_t bits_of(const format_info& f, mpfr_ptr x) {
    const bool negative = mpfr_signbit(x) != 0;
    if (mpfr_nan_p(x)) return quiet_nan_bits(f, negative);
    if (mpfr_inf_p(x)) return infinity_bits(f, negative);
    if (mpfr_zero_p(x)) return sign_bit(f, negative);
    mpz_value z;
    const mpfr_exp_t e = mpfr_get_z_2exp(z.get(), x);  // x = z * 2^e exactly, |z| < 2^p
    mpz_abs(z.get(), z.get());
    return encode_exact(f, negative, mpz_get_ui(z.get()), static_cast<long>(e));
}

// The text as it can be shown in a message: printable ASCII as is, every other byte as \xHH (a NUL, a UTF-8 BOM).
std::string printable(std::string_view text) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : text) {
        const auto b = static_cast<unsigned char>(c);
        if (b >= 0x20 && b < 0x7F) {
            out += c;
        } else {
            out += "\\x";
            out += hex[b >> 4];
            out += hex[b & 15];
        }
    }
    return out;
}

[[noreturn]] void throw_not_a_number(std::string_view text) {
    throw std::invalid_argument("not a number: '" + printable(text) +
                                "' (expected a decimal like -2.5e-3, a C99 hex float like 0x1.8p+1, inf or nan)");
}

/// Step 1: specials by name; Step 2: the grammar; Step 3: MPFR rounds once at precision p in f's exponent range,
/// mpfr_check_range and mpfr_subnormalize (fed the ternary value, so the subnormal rounding is not a double rounding)
/// give the IEEE result; Step 4: integer encoding.
std::uint64_t parse_into(const format_info& f, std::string_view text, mpfr_ptr x) {
    const std::string_view t = trim(text);
    std::string_view body = t;
    bool negative = false;
    if (!body.empty() && (body.front() == '+' || body.front() == '-')) {
        negative = body.front() == '-';
        body.remove_prefix(1);
    }
    if (iequals(body, "inf") || iequals(body, "infinity")) return infinity_bits(f, negative);
    if (iequals(body, "nan")) return quiet_nan_bits(f, negative);
    bool hex = false;
    if (!matches_number_grammar(body, hex)) throw_not_a_number(t);

    std::string digits(t);  // NUL-terminated copy for MPFR
    clamp_exponent(digits, hex);
    exponent_range_guard range(f);
    char* end = nullptr;
    int ternary = mpfr_strtofr(x, digits.c_str(), &end, hex ? 16 : 10, MPFR_RNDN);
    if (end != digits.c_str() + digits.size()) throw_not_a_number(t);
    ternary = mpfr_check_range(x, ternary, MPFR_RNDN);
    mpfr_subnormalize(x, ternary, MPFR_RNDN);
    return bits_of(f, x);
}

}  // namespace

std::uint64_t parse_number_bits(std::string_view text, const format_info& f) {
    mpfr_value x(f.precision);
    return parse_into(f, text, x.get());
}

// ---- Section 2: text arrays ----------------------------------------------------------------------------------------
namespace {

/// Appends values given as raw bits (or as little-endian bytes) to the array of the right element type.
class array_builder {
public:
    /// Starts empty; reuses `storage`'s memory when it holds the same type (a reader's next chunk).
    explicit array_builder(dtype type, data_array storage = {}) : out_(std::move(storage)) {
        if (out_.type() != type || out_.values.valueless_by_exception()) {
            switch (type) {
                case dtype::float64: out_.values = std::vector<double>{}; break;
                case dtype::float32: out_.values = std::vector<float>{}; break;
                case dtype::float16: out_.values = std::vector<float16>{}; break;
                case dtype::bfloat16: out_.values = std::vector<bfloat16>{}; break;
            }
        }
        std::visit([](auto& v) { v.clear(); }, out_.values);
    }
    void reserve(std::size_t n) {
        std::visit([n](auto& v) { v.reserve(n); }, out_.values);
    }
    std::size_t size() const noexcept { return out_.size(); }
    void push_bits(std::uint64_t bits) {
        std::visit(
            [bits](auto& v) {
                using T = typename std::decay_t<decltype(v)>::value_type;
                using tr = format_traits<T>;
                v.push_back(tr::from_bits(static_cast<typename tr::bits_type>(bits)));
            },
            out_.values);
    }
    /// Appends `items` values stored as little-endian bytes (.npy data): a copy on a little-endian host, the bits
    /// assembled byte by byte on another, so the host's byte order does not matter.
    void append_little_endian(const char* bytes, std::size_t items) {
        std::visit(
            [&](auto& v) {
                using T = typename std::decay_t<decltype(v)>::value_type;
                using tr = format_traits<T>;
                const std::size_t old = v.size();
                v.resize(old + items);
                if constexpr (std::endian::native == std::endian::little) {
                    std::memcpy(static_cast<void*>(v.data() + old), bytes, items * sizeof(T));
                } else {
                    for (std::size_t k = 0; k < items; ++k) {
                        typename tr::bits_type bits = 0;
                        for (std::size_t b = sizeof(T); b-- > 0;)
                            bits = static_cast<typename tr::bits_type>((bits << 8) |
                                                                       static_cast<unsigned char>(bytes[k * sizeof(T) + b]));
                        v[old + k] = tr::from_bits(bits);
                    }
                }
            },
            out_.values);
    }
    data_array take() { return std::move(out_); }

private:
    data_array out_;
};

/// A UTF-8 byte order mark, which some editors put at the start of a text file: skipped there, like blanks.
constexpr std::string_view utf8_bom{"\xEF\xBB\xBF", 3};

/// Throws std::invalid_argument for a stream that stopped reading for another reason than its end: badbit (a read
/// error; errno, when set, says which) or failbit. `where` says how far it got ("after line 12").
[[noreturn]] void throw_stream_failure(const std::istream& in, std::string_view source, const std::string& where) {
    const int error = errno;
    std::string what = std::string(source) + ": read error " + where;
    if (in.bad() && error != 0) what += std::string(" (") + std::strerror(error) + ")";
    else if (in.bad()) what += " (the stream reported a read error)";
    else what += " (the stream was in a failed state before its end)";
    throw std::invalid_argument(what + ": the input could not be read to its end; check the file or the pipe");
}

/// The longest token taken: far more digits than any number needs (a binary64 subnormal's exact decimal has 767
/// significant digits), and a bound on the memory a token split across reads can take.
constexpr std::size_t max_token_bytes = std::size_t{1} << 20;

/// Text numbers read in blocks of the stream, O(block) memory whatever the input: a byte-level scanner (lines end at
/// "\n", "\r\n" or a lone "\r"; '#' starts a comment to the end of the line; blanks and commas separate numbers)
/// whose only state across blocks is the token in progress, the line number and whether a '\r' just ended a line.
/// Each token is parsed by parse_token: fast_float for binary64/binary32 decimals, MPFR for everything else.
class text_parser {
public:
    text_parser(std::istream& in, dtype type, std::string_view source, std::uint64_t skip_rows)
        : in_(in), f_(info(type)), source_(source), skip_rows_(skip_rows), x_(f_.precision), block_(1 << 20) {
        // A stream that failed before this call (a failed seekg on a pipe leaves failbit set) would read as no
        // numbers at all: an empty array where the data was. Refuse it instead.
        if (!in_) throw_stream_failure(in_, source_, "before the first line");
        errno = 0;  // so that a read error's errno is the one reported
    }

    /// Reads blocks until `out` holds at least `want` values or the input ends; false once the input has ended.
    bool fill(array_builder& out, std::size_t want) {
        if (ended_) return false;
        const detail::default_fp_environment environment;  // fast_float's exact fast path uses native arithmetic
        while (!ended_ && out.size() < want) {
            in_.read(block_.data(), static_cast<std::streamsize>(block_.size()));
            const auto got = static_cast<std::size_t>(in_.gcount());
            std::string_view b(block_.data(), got);
            if (bytes_ == 0 && b.starts_with(utf8_bom)) b.remove_prefix(utf8_bom.size());
            bytes_ += got;
            if (!b.empty()) last_byte_ = b.back();
            scan(b, out);
            if (got < block_.size() || !in_) {
                // read() stops at the end (eofbit, with failbit) or on a failure: badbit (a read error) or failbit
                // without eofbit. Only the first is the end of the data.
                if (in_.bad() || !in_.eof()) throw_stream_failure(in_, source_, "after line " + std::to_string(line_));
                if (!token_.empty()) end_token(token_, out);
                ended_ = true;
                report_.lines = line_ - 1 + (last_byte_ == '\n' || last_byte_ == '\r' ? 0 : 1);
            }
        }
        return true;
    }

    std::uint64_t bytes_read() const noexcept { return bytes_; }
    std::uint64_t values_read() const noexcept { return values_; }
    const parse_report& report() const noexcept { return report_; }

private:
    static bool is_separator(char c) noexcept { return c == ' ' || c == '\t' || c == ',' || c == '\v' || c == '\f'; }

    void scan(std::string_view b, array_builder& out) {
        std::size_t i = 0;
        if (pending_cr_ && !b.empty()) {  // the '\n' of a "\r\n" split across two reads
            pending_cr_ = false;
            if (b[0] == '\n') i = 1;
        }
        const std::size_t n = b.size();
        while (i < n) {
            const char c = b[i];
            if (c == '\n' || c == '\r') {
                if (!token_.empty()) end_token(token_, out);
                if (c == '\r') {
                    if (i + 1 < n) i += b[i + 1] == '\n' ? 1 : 0;
                    else pending_cr_ = true;
                }
                ++line_;
                comment_ = false;
                ++i;
                continue;
            }
            if (comment_ || line_ <= skip_rows_ || c == '#') {  // a comment or a skipped row: up to the line's end
                comment_ = true;
                while (i < n && b[i] != '\n' && b[i] != '\r') ++i;
                if (!token_.empty()) end_token(token_, out);
                continue;
            }
            if (is_separator(c)) {
                if (!token_.empty()) end_token(token_, out);
                ++i;
                continue;
            }
            // A token: parsed straight from the block when it ends there, else kept for the next read.
            const std::size_t start = i;
            while (i < n && !is_separator(b[i]) && b[i] != '\n' && b[i] != '\r' && b[i] != '#') ++i;
            const std::string_view piece = b.substr(start, i - start);
            if (i < n && token_.empty()) {
                end_token(piece, out);
            } else {
                if (token_.size() + piece.size() > max_token_bytes)
                    fail_token(token_.substr(0, 40) + "...", " (a token over " + std::to_string(max_token_bytes) +
                                                                 " bytes: not a number)");
                token_.append(piece);
                if (i < n) end_token(token_, out);
            }
        }
    }

    /// Parses one token into the builder, notes overflow and underflow, and clears the pending token.
    void end_token(std::string_view token, array_builder& out) {
        const std::uint64_t bits = parse_token(token);
        const std::uint64_t magnitude = bits & ~sign_bit(f_, true);
        if (magnitude == 0 || magnitude == infinity_bits(f_, false)) note_range(token, magnitude == 0);
        out.push_bits(bits);
        ++values_;
        token_.clear();
    }

    std::uint64_t parse_token(std::string_view token) {
        if (f_.id == dtype::float64 || f_.id == dtype::float32) {
            std::string_view body = token;
            const bool negative = body.front() == '-';
            if (body.front() == '-' || body.front() == '+') body.remove_prefix(1);
            bool hex = false;
            if (!body.empty() && matches_number_grammar(body, hex) && !hex) {
                const char* last = body.data() + body.size();
                if (f_.id == dtype::float64) {
                    double v = 0;
                    const auto r = fast_float::from_chars(body.data(), last, v);
                    if (r.ec == std::errc{} && r.ptr == last)
                        return std::bit_cast<std::uint64_t>(v) | sign_bit(f_, negative);
                } else {
                    float v = 0;
                    const auto r = fast_float::from_chars(body.data(), last, v);
                    if (r.ec == std::errc{} && r.ptr == last)
                        return std::uint64_t{std::bit_cast<std::uint32_t>(v)} | sign_bit(f_, negative);
                }
            }
        }
        try {
            return parse_into(f_, token, x_.get());
        } catch (const std::invalid_argument& e) {
            fail_token(std::string(token), "", e.what());
        }
    }

    [[noreturn]] void fail_token(const std::string& token, const std::string& why, std::string what = "") {
        if (what.empty()) what = "not a number: '" + printable(token) + "'" + why;
        throw text_parse_error(std::string(source_) + ":" + std::to_string(line_) + ": " + what, line_, values_);
    }

    /// A ±0 from a numeral with a non-zero digit underflowed; a ±Inf from a numeral (not "inf") overflowed.
    void note_range(std::string_view token, bool zero) {
        std::string_view body = trim(token);
        if (!body.empty() && (body.front() == '+' || body.front() == '-')) body.remove_prefix(1);
        bool hex = false;
        if (!matches_number_grammar(body, hex)) return;  // inf, nan
        if (zero) {
            if (hex) body.remove_prefix(2);
            const std::size_t marker = body.find_first_of(hex ? "pP" : "eE");
            const std::string_view mantissa = body.substr(0, marker);
            if (mantissa.find_first_not_of("0.") == std::string_view::npos) return;  // the numeral is zero
            if (report_.underflowed++ == 0) report_.first_underflow_line = line_;
        } else if (report_.overflowed++ == 0) {
            report_.first_overflow_line = line_;
        }
    }

    std::istream& in_;
    const format_info& f_;
    std::string_view source_;
    std::uint64_t skip_rows_;
    mpfr_value x_;
    std::vector<char> block_;
    std::string token_;                // a token split across two reads
    std::uint64_t line_ = 1;           // the line being read, 1-based
    bool comment_ = false;             // the rest of this line is a comment or a skipped row
    char last_byte_ = '\n';            // the input's last byte so far ('\n' before any: no line begun)
    bool pending_cr_ = false;          // the last read ended with '\r': a '\n' next is part of that line end
    bool ended_ = false;
    std::uint64_t bytes_ = 0, values_ = 0;
    parse_report report_;
};

}  // namespace

data_array read_text(std::istream& in, dtype type, std::string_view source) {
    text_parser parser(in, type, source, 0);
    array_builder out(type);
    while (parser.fill(out, std::numeric_limits<std::size_t>::max())) {
    }
    return out.take();
}

// ---- Section 3: .npy -----------------------------------------------------------------------------------------------
// Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//   magic "\x93NUMPY", major, minor, header length (uint16 LE for 1.0, uint32 LE for 2.0 and 3.0), then an ASCII
//   (3.0: UTF-8) Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with blanks
//   and '\n', then the data.
namespace {

constexpr std::string_view npy_magic{"\x93NUMPY", 6};

/// The parts of a .npy header dict exactref uses.
struct npy_header {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::uint64_t> shape;
    bool has_descr = false, has_fortran_order = false, has_shape = false;
};

/// A minimal reader of the Python literal subset numpy writes: strings, True/False, integers (a Python 2 'L'
/// suffix allowed) and tuples of integers.
class npy_header_parser {
public:
    npy_header_parser(std::string_view text, std::string_view source) : s_(text), source_(source) {}

    npy_header parse() {
        npy_header h;
        expect('{');
        skip();
        while (peek() != '}') {
            const std::string key = string_literal();
            expect(':');
            skip();
            if (key == "descr") {
                if (peek() != '\'' && peek() != '"')
                    fail("descr is not a plain dtype string (structured arrays are not supported): save a plain "
                         "float array");
                h.descr = string_literal();
                h.has_descr = true;
            } else if (key == "fortran_order") {
                h.fortran_order = boolean();
                h.has_fortran_order = true;
            } else if (key == "shape") {
                h.shape = int_tuple();
                h.has_shape = true;
            } else {
                skip_value();
            }
            skip();
            if (peek() == ',') {
                ++i_;
                skip();
            } else if (peek() != '}') {
                fail("expected ',' or '}' in the header");
            }
        }
        ++i_;  // the closing '}'
        skip();  // numpy pads the dict with blanks and ends it with '\n'; anything else after it is not a dict literal
        if (i_ != s_.size()) fail("text after the closing '}'");
        if (!h.has_descr || !h.has_fortran_order || !h.has_shape)
            fail("the header lacks one of 'descr', 'fortran_order', 'shape'");
        return h;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw std::invalid_argument(std::string(source_) + ": not a valid .npy header: " + what + " (header: " +
                                    printable(trim(s_)) + ")");
    }
    void skip() {
        while (i_ < s_.size() && is_blank(s_[i_])) ++i_;
    }
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void expect(char c) {
        skip();
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++i_;
    }
    std::string string_literal() {
        skip();
        const char quote = peek();
        if (quote != '\'' && quote != '"') fail("expected a quoted string");
        ++i_;
        const std::size_t start = i_;
        while (i_ < s_.size() && s_[i_] != quote) ++i_;
        if (i_ == s_.size()) fail("unterminated string");
        return std::string(s_.substr(start, i_++ - start));
    }
    bool boolean() {
        if (s_.substr(i_, 4) == "True") return i_ += 4, true;
        if (s_.substr(i_, 5) == "False") return i_ += 5, false;
        fail("expected True or False for 'fortran_order'");
    }
    std::uint64_t integer() {
        skip();
        std::uint64_t v = 0;
        const char* first = s_.data() + i_;
        const auto [ptr, ec] = std::from_chars(first, s_.data() + s_.size(), v);
        if (ec != std::errc{} || ptr == first) fail("expected a non-negative integer in 'shape'");
        i_ += static_cast<std::size_t>(ptr - first);
        if (peek() == 'L') ++i_;  // Python 2 long literal
        return v;
    }
    std::vector<std::uint64_t> int_tuple() {
        expect('(');
        std::vector<std::uint64_t> out;
        skip();
        while (peek() != ')') {
            out.push_back(integer());
            skip();
            if (peek() == ',') {
                ++i_;
                skip();
            } else if (peek() != ')') {
                fail("expected ',' or ')' in 'shape'");
            }
        }
        ++i_;
        return out;
    }
    void skip_value() {  // an unknown key's value: up to the next top-level ',' or '}'
        int depth = 0;
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == '\'' || c == '"') {
                string_literal();
                continue;
            }
            if (c == '(' || c == '[' || c == '{') ++depth;
            if (c == ')' || c == ']' || c == '}') {
                if (depth == 0) return;
                --depth;
            }
            if (c == ',' && depth == 0) return;
            ++i_;
        }
        fail("unterminated value");
    }

    std::string_view s_;
    std::string_view source_;
    std::size_t i_ = 0;
};

/// Reads up to n bytes and says how many there were: fewer only at the end of the input. A read error (badbit)
/// throws rather than passing for a short file.
std::size_t read_bytes(std::istream& in, char* out, std::size_t n, std::string_view source) {
    in.read(out, static_cast<std::streamsize>(n));
    if (in.bad()) throw_stream_failure(in, source, "in the .npy data");
    return static_cast<std::size_t>(in.gcount());
}

/// The largest header read: numpy's own limit (numpy.lib.format._MAX_HEADER_SIZE, the default max_header_size of
/// np.load, which refuses longer headers unless told to trust the file). A float array's header is far shorter:
/// numpy pads it to a multiple of 64 bytes, and a shape of 64 dimensions of 20 digits each fits in under 1600.
constexpr std::size_t npy_max_header_bytes = 10000;

/// What a descr names, in numpy's spellings of the three float dtypes (np.dtype(descr), which
/// numpy.lib.format.descr_to_dtype calls): a type code 'f8' or 'd' (float64), 'f4' or 'f' (float32), 'f2' or 'e'
/// (float16) after an optional byte order ('<' little-endian, '>' big-endian, '=', '|' or none: native, that is the
/// reading host's order, as in np.load), or a name without a byte order: 'float64', 'double', 'float' (float64),
/// 'float32', 'single', 'float16', 'half'.
struct npy_float_descr {
    std::optional<dtype> type;  // empty: not one of the three float dtypes
    bool big_endian = false;
};

npy_float_descr resolve_npy_descr(std::string_view descr) noexcept {
    constexpr bool native_big = std::endian::native == std::endian::big;
    struct spelling {
        std::string_view text;
        dtype type;
    };
    static constexpr spelling names[] = {{"float64", dtype::float64}, {"double", dtype::float64},
                                         {"float", dtype::float64},   {"float32", dtype::float32},
                                         {"single", dtype::float32},  {"float16", dtype::float16},
                                         {"half", dtype::float16}};
    for (const spelling& n : names)
        if (descr == n.text) return {n.type, native_big};
    bool big = native_big;
    if (!descr.empty() && (descr[0] == '<' || descr[0] == '>' || descr[0] == '=' || descr[0] == '|')) {
        if (descr[0] != '=' && descr[0] != '|') big = descr[0] == '>';
        descr.remove_prefix(1);
    }
    static constexpr spelling codes[] = {{"f8", dtype::float64}, {"d", dtype::float64}, {"f4", dtype::float32},
                                         {"f", dtype::float32},  {"f2", dtype::float16}, {"e", dtype::float16}};
    for (const spelling& c : codes)
        if (descr == c.text) return {c.type, big};
    return {};
}

/// Whether descr is numpy's 2-byte void ('V2', '<V2', '|V2', ...: np.dtype gives '|V2' for all of them), which is
/// how a file saved from an ml_dtypes bfloat16 array describes its data: the format of the bytes is not in the file.
bool is_two_byte_void(std::string_view descr) noexcept {
    if (!descr.empty() && (descr[0] == '<' || descr[0] == '>' || descr[0] == '=' || descr[0] == '|'))
        descr.remove_prefix(1);
    return descr == "V2";
}

/// numpy's short name of a little-endian float dtype, for the messages: "<f8", "<f4", "<f2".
std::string little_endian_code(dtype type) {
    return type == dtype::float64 ? "<f8" : type == dtype::float32 ? "<f4" : "<f2";
}

std::string shape_string(const std::vector<std::uint64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

/// What a .npy header says about the data that follows it.
struct npy_layout {
    dtype type{};
    std::uint64_t count = 0;          // values
    std::vector<std::uint64_t> shape;
    std::size_t item_size = 0;        // bytes per value
    std::uint64_t header_bytes = 0;   // magic, version, length and dict
};

/// Reads a .npy header from a stream positioned at the magic; `source` names it in messages. A 2-byte void descr
/// ('<V2') is read as little-endian bfloat16 when void_is_bfloat16 (the caller asked for bfloat16), else refused.
npy_layout read_npy_header(std::istream& in, const std::string& source, bool void_is_bfloat16) {
    errno = 0;  // so that a read error's errno is the one reported
    std::array<char, 10> prefix{};
    const std::size_t got = read_bytes(in, prefix.data(), 8, source);
    if (got >= npy_magic.size() && got < 8 && std::string_view(prefix.data(), npy_magic.size()) == npy_magic)
        throw std::invalid_argument(source + ": truncated .npy file (it ends after the magic, before the version)");
    if (got < 8 || std::string_view(prefix.data(), 6) != npy_magic)
        throw std::invalid_argument(source + ": not a .npy file (it starts with byte 0x93 but not with the .npy "
                                             "magic \\x93NUMPY and a version), nor text");
    const int major = static_cast<unsigned char>(prefix[6]);
    const int minor = static_cast<unsigned char>(prefix[7]);
    if (major < 1 || major > 3 || minor != 0)
        throw std::invalid_argument(source + ": unsupported .npy format version " + std::to_string(major) + "." +
                                    std::to_string(minor) + " (exactref reads 1.0, 2.0 and 3.0)");
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    if (read_bytes(in, prefix.data(), length_bytes, source) != length_bytes)
        throw std::invalid_argument(source + ": truncated .npy file (the header length is missing)");
    std::size_t header_length = 0;
    for (std::size_t i = length_bytes; i-- > 0;)
        header_length = (header_length << 8) | static_cast<unsigned char>(prefix[i]);
    if (header_length > npy_max_header_bytes)
        throw std::invalid_argument(source + ": .npy header too large: the file says " +
                                    std::to_string(header_length) + " header bytes; exactref, like np.load by " +
                                    "default (max_header_size), reads at most " +
                                    std::to_string(npy_max_header_bytes) +
                                    " (a float array's header is under 1600): the file is damaged or not a plain "
                                    "float array");
    // Read in pieces, so that the header grows only with the bytes the file really holds.
    std::string header;
    while (header.size() < header_length) {
        std::array<char, 1024> piece{};
        const std::size_t want = std::min(piece.size(), header_length - header.size());
        const std::size_t got_now = read_bytes(in, piece.data(), want, source);
        header.append(piece.data(), got_now);
        if (got_now != want)
            throw std::invalid_argument(source + ": truncated .npy file (the header says " +
                                        std::to_string(header_length) + " header bytes; the file ends after " +
                                        std::to_string(header.size()) + ")");
    }

    const npy_header h = npy_header_parser(header, source).parse();
    const std::string convert_hint = "; convert it in numpy, e.g. np.save(path, np.ascontiguousarray(a, dtype='<f8'))";
    const std::string descr = printable(h.descr);  // as it can be shown: a NUL or other control byte escaped
    const npy_float_descr d = resolve_npy_descr(h.descr);
    dtype type{};
    if (d.type && !d.big_endian) {
        type = *d.type;
    } else if (d.type) {
        throw std::invalid_argument(source + ": big-endian dtype '" + descr +
                                    "' is not supported: save a little-endian copy, e.g. np.save(path, a.astype('" +
                                    little_endian_code(*d.type) + "'))");
    } else if (is_two_byte_void(h.descr) && void_is_bfloat16) {
        type = dtype::bfloat16;  // ml_dtypes' bfloat16, as its little-endian bytes
    } else if (is_two_byte_void(h.descr)) {
        throw std::invalid_argument(source + ": dtype '" + descr +
                                    "' is raw 2-byte data, which is how numpy saves an ml_dtypes bfloat16 array: if "
                                    "the file holds bfloat16 values, say so with --dtype bfloat16 (in C++: "
                                    "load_array(path, dtype::bfloat16, true))");
    } else {
        throw std::invalid_argument(source + ": unsupported dtype '" + descr +
                                    "': exactref reads float64 '<f8', float32 '<f4' and float16 '<f2'" + convert_hint);
    }
    const std::size_t item_size = info(type).storage_bits / 8;
    if (h.fortran_order)
        throw std::invalid_argument(source + ": the array is stored in Fortran order (fortran_order: True); save a "
                                    "C-order copy, e.g. np.save(path, np.ascontiguousarray(a))");

    std::uint64_t count = 1;  // shape () is one scalar
    for (const std::uint64_t d : h.shape) {
        if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / item_size / d)
            throw std::invalid_argument(source + ": shape " + shape_string(h.shape) + " is too large");
        count *= d;
    }
    return {type, count, h.shape, item_size, 6 + 2 + length_bytes + header_length};
}

/// The data after a .npy header, in blocks: the array grows with the blocks read, not with the header's promise, so
/// a damaged shape costs no memory; at the end, bytes after the promised data are an error.
class npy_data_reader {
public:
    npy_data_reader(std::istream& in, std::string source, npy_layout layout)
        : in_(in), source_(std::move(source)), layout_(std::move(layout)) {}

    /// Appends up to `want` values (at least one block's worth when want is smaller); false once all were read and
    /// the end checked.
    bool fill(array_builder& out, std::size_t want) {
        if (ended_) return false;
        constexpr std::size_t block_items = array_reader::chunk_values;
        while (done_ < layout_.count && out.size() < want) {
            const std::size_t items = static_cast<std::size_t>(std::min<std::uint64_t>(block_items, layout_.count - done_));
            block_.resize(items * layout_.item_size);
            const std::size_t bytes = read_bytes(in_, block_.data(), block_.size(), source_);
            if (bytes != block_.size())
                throw std::invalid_argument(source_ + ": truncated .npy file: the header promises shape " +
                                            shape_string(layout_.shape) + " = " + expected() + " of data, the file holds " +
                                            std::to_string(done_ * layout_.item_size + bytes) +
                                            " (re-create the file; it was cut short)");
            out.append_little_endian(block_.data(), items);
            done_ += items;
        }
        if (done_ == layout_.count) {
            const bool more = in_.peek() != std::char_traits<char>::eof();
            if (in_.bad()) throw_stream_failure(in_, source_, "after the .npy data");
            if (more)
                throw std::invalid_argument(source_ + ": .npy file has bytes after the data the header promises (shape " +
                                            shape_string(layout_.shape) + " = " + expected() + "); the file is damaged");
            ended_ = true;
        }
        return out.size() > 0 || !ended_;
    }
    std::uint64_t bytes_read() const noexcept { return layout_.header_bytes + done_ * layout_.item_size; }
    std::uint64_t values_read() const noexcept { return done_; }
    dtype type() const noexcept { return layout_.type; }

private:
    std::string expected() const {
        return std::to_string(layout_.count) + " values of " + std::string(info(layout_.type).name) + " = " +
               std::to_string(layout_.count * layout_.item_size) + " bytes";
    }
    std::istream& in_;
    std::string source_;
    npy_layout layout_;
    std::vector<char> block_;
    std::uint64_t done_ = 0;
    bool ended_ = false;
};

data_array parse_npy(std::istream& in, const std::string& source, bool void_is_bfloat16) {
    npy_data_reader data(in, source, read_npy_header(in, source, void_is_bfloat16));
    array_builder out(data.type());
    while (data.fill(out, std::numeric_limits<std::size_t>::max())) {
    }
    return out.take();
}

/// The first byte of the .npy magic. It never starts text (a number, a blank, ',', '#' or a UTF-8 BOM's 0xEF), so
/// it alone decides the format, and the byte is looked at without being taken.
constexpr auto npy_first_byte = std::char_traits<char>::to_int_type('\x93');

/// Opens a file for binary reading or says why it cannot be read.
std::unique_ptr<std::ifstream> open_input(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw std::invalid_argument("cannot read '" + path + "': it is a directory, not a file");
    auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
    if (!*file) throw std::invalid_argument("cannot open '" + path + "': " + std::strerror(errno));
    return file;
}

/// Throws when C stdio saw a read error on stdin. std::cin reads through stdio (synchronised with it, the default),
/// whose stream buffer reports a failed read(2) only as the end of the input: a closed descriptor ('<&-') or a
/// directory given as stdin would otherwise read as no numbers at all.
void check_stdin_read(int error) {
    if (std::ferror(stdin) == 0) return;
    std::string what = "<stdin>: cannot read standard input";
    if (error != 0) what += std::string(": ") + std::strerror(error);
    if (error == EBADF) what += " (standard input is closed: give the data on stdin, e.g. '< data.txt', or a FILE)";
    throw std::invalid_argument(what);
}

}  // namespace

data_array read_npy(const std::string& path) {
    return parse_npy(*open_input(path), path, false);
}

// The reader behind load_array and the CLI: one input, text or .npy, read a chunk at a time.
struct array_reader::state {
    bool from_stdin = false;
    std::string source;
    std::unique_ptr<std::ifstream> file;
    std::istream* in = nullptr;
    dtype type{};
    std::uint64_t total = 0;
    std::optional<text_parser> text;
    std::optional<npy_data_reader> npy;

    /// Runs a step of reading; for stdin, a read error of stdin itself (a closed descriptor) is the news, not its
    /// symptom ("truncated"): std::cin reads through stdio, whose stream buffer reports a failed read(2) only as the
    /// end of the input.
    template <class F>
    auto guarded(F&& step) {
        errno = 0;
        try {
            auto result = step();
            if (from_stdin) check_stdin_read(errno);
            return result;
        } catch (const std::invalid_argument&) {
            if (from_stdin) check_stdin_read(errno);
            throw;
        }
    }
};

array_reader::array_reader(const std::string& path, dtype type, bool type_given, const read_options& options)
    : state_(std::make_unique<state>()) {
    state& st = *state_;
    st.from_stdin = path == "-";
    st.source = st.from_stdin ? "<stdin>" : path;
    if (!st.from_stdin) {
        st.file = open_input(path);
        std::error_code ec;
        if (std::filesystem::is_regular_file(path, ec)) st.total = std::filesystem::file_size(path, ec);
        if (ec) st.total = 0;
    }
    st.in = st.from_stdin ? &std::cin : st.file.get();
    if (st.from_stdin) {  // a state left by an earlier read of stdin is not this read's failure
        std::cin.clear();
        std::clearerr(stdin);
    }
    // Nothing is read twice and nothing seeks: a pipe, a FIFO, a process substitution or a terminal reads like a
    // file. (Reading a few bytes and seeking back fails on those, and the failed stream then read as empty.)
    st.guarded([&] {
        const bool npy = st.in->peek() == npy_first_byte;
        if (st.from_stdin) check_stdin_read(errno);  // now, while errno is the failed read's
        if (npy) {
            if (options.skip_rows > 0)
                throw std::invalid_argument(st.source + " is a .npy file: skipping rows applies to text input only");
            st.npy.emplace(*st.in, st.source, read_npy_header(*st.in, st.source, type_given && type == dtype::bfloat16));
            st.type = st.npy->type();
        } else {
            st.text.emplace(*st.in, type, st.source, options.skip_rows);
            st.type = type;
        }
        return 0;
    });
    if (type_given && st.type != type)
        throw std::invalid_argument(st.source + " holds " + std::string(info(st.type).name) + " values but dtype " +
                                    std::string(info(type).name) +
                                    " was requested: leave the dtype out to use the file's own, or convert the file");
}

array_reader::~array_reader() = default;

dtype array_reader::type() const noexcept { return state_->type; }

bool array_reader::next(data_array& chunk) {
    state& st = *state_;
    array_builder out(st.type, std::move(chunk));
    const bool more = st.guarded([&] {
        return st.npy ? st.npy->fill(out, chunk_values) : st.text->fill(out, chunk_values);
    });
    chunk = out.take();
    return more && chunk.size() > 0;
}

std::uint64_t array_reader::bytes_read() const noexcept {
    return state_->npy ? state_->npy->bytes_read() : state_->text->bytes_read();
}
std::uint64_t array_reader::total_bytes() const noexcept { return state_->total; }
std::uint64_t array_reader::values_read() const noexcept {
    return state_->npy ? state_->npy->values_read() : state_->text->values_read();
}
const parse_report& array_reader::report() const noexcept {
    static const parse_report none;
    return state_->npy ? none : state_->text->report();
}

data_array load_array(const std::string& path, dtype type, bool type_given, const read_options& options,
                      parse_report* report) {
    array_reader reader(path, type, type_given, options);
    data_array all = array_builder(reader.type()).take();
    data_array chunk;
    for (bool first = true; reader.next(chunk); first = false) {
        if (first) {
            std::swap(all, chunk);
            continue;
        }
        std::visit(
            [&chunk](auto& into) {
                const auto& more = std::get<std::decay_t<decltype(into)>>(chunk.values);
                into.insert(into.end(), more.begin(), more.end());
            },
            all.values);
    }
    if (report != nullptr) *report = reader.report();
    return all;
}

data_array load_array(const std::string& path, dtype type, bool type_given) {
    return load_array(path, type, type_given, {}, nullptr);
}

// ---- Section 4: printing -------------------------------------------------------------------------------------------
namespace {

/// Formats the decimal 0.d1d2...dk * 10^point (digits without leading or trailing zeros) the way std::to_chars'
/// shortest form does: fixed or scientific notation, whichever is shorter, fixed on a tie (C++ [charconv.to.chars]).
std::string format_decimal(bool negative, const std::string& digits, long point) {
    const std::size_t k = digits.size();
    // Scientific: d[.ddd]e±XX, at least two exponent digits.
    std::string sci(1, digits[0]);
    if (k > 1) {
        sci.push_back('.');
        sci.append(digits, 1);
    }
    const long exp10 = point - 1;
    const std::string exp_digits = std::to_string(exp10 < 0 ? -exp10 : exp10);
    sci.push_back('e');
    sci.push_back(exp10 < 0 ? '-' : '+');
    if (exp_digits.size() < 2) sci.push_back('0');
    sci.append(exp_digits);
    // Fixed: 0.000ddd, ddd000 or dd.ddd.
    std::string fixed;
    if (point <= 0) {
        fixed.append("0.").append(static_cast<std::size_t>(-point), '0').append(digits);
    } else if (static_cast<std::size_t>(point) >= k) {
        fixed.append(digits).append(static_cast<std::size_t>(point) - k, '0');
    } else {
        fixed.append(digits, 0, static_cast<std::size_t>(point)).append(".").append(digits,
                                                                                   static_cast<std::size_t>(point));
    }
    std::string out = negative ? "-" : "";
    out.append(sci.size() < fixed.size() ? sci : fixed);
    return out;
}

/// Shortest decimal for the 16-bit formats. For k = 1, 2, ...: the k-digit decimals nearest to x from below (RD) and
/// above (RU) are the only k-digit candidates that can lie in x's rounding interval (the interval is convex and
/// contains x), so the first k for which one of them parses back to x is the shortest length; among such candidates
/// the nearest (RN) wins, as in std::to_chars.
std::string shortest_via_mpfr(const format_info& f, std::uint64_t bits, const decoded& d) {
    mpfr_value x(64);
    mpfr_set_ui_2exp(x.get(), static_cast<unsigned long>(d.significand), d.exponent, MPFR_RNDN);  // exact
    mpfr_value scratch(f.precision);
    const std::uint64_t magnitude_bits = bits & ~sign_bit(f, true);
    for (std::size_t k = 1; k <= 20; ++k) {
        for (const mpfr_rnd_t mode : {MPFR_RNDN, MPFR_RNDD, MPFR_RNDU}) {
            mpfr_exp_t point = 0;
            std::unique_ptr<char, void (*)(char*)> s(mpfr_get_str(nullptr, &point, 10, k, x.get(), mode),
                                                     mpfr_free_str);
            if (!s) throw std::logic_error("exactref: internal error: mpfr_get_str failed");
            std::string digits(s.get());
            const std::string candidate = "0." + digits + "e" + std::to_string(point);
            if (parse_into(f, candidate, scratch.get()) != magnitude_bits) continue;
            while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
            return format_decimal(d.negative, digits, static_cast<long>(point));
        }
    }
    throw std::logic_error("exactref: internal error: no decimal reads back to the value");
}

}  // namespace

std::string to_shortest_string(const format_info& f, std::uint64_t bits) {
    const decoded d = decode_bits(f, bits);
    if (d.is_nan) return "nan";
    if (d.is_inf) return d.negative ? "-inf" : "inf";
    if (d.significand == 0) return d.negative ? "-0" : "0";
    std::array<char, 64> buf{};
    std::to_chars_result r{};
    // std::to_chars is an integer algorithm (Ryu), but libstdc++ looks at the value with floating-point operations on
    // the way: under DAZ a subnormal argument compares equal to zero and prints as "0". So the call runs in the
    // default environment, whatever the caller's (detail/fp_environment.h).
    const detail::default_fp_environment environment;
    switch (f.id) {
        case dtype::float64:
            r = std::to_chars(buf.data(), buf.data() + buf.size(), std::bit_cast<double>(bits));
            return std::string(buf.data(), r.ptr);
        case dtype::float32:
            r = std::to_chars(buf.data(), buf.data() + buf.size(),
                              std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
            return std::string(buf.data(), r.ptr);
        case dtype::float16:
        case dtype::bfloat16:
            return shortest_via_mpfr(f, bits, d);
    }
    throw std::logic_error("exactref: internal error: unknown format");
}

std::string to_hex_string(const format_info& f, std::uint64_t bits) {
    const decoded d = decode_bits(f, bits);
    if (d.is_nan) return "nan";
    if (d.is_inf) return d.negative ? "-inf" : "inf";
    const std::string sign = d.negative ? "-" : "";
    if (d.significand == 0) return sign + "0x0p+0";
    // Normalize to 1.fff * 2^e (subnormals too), the fraction padded to whole hex digits.
    const int width = std::bit_width(d.significand);
    const int exponent = d.exponent + width - 1;
    const int fraction_bits = width - 1;
    const int hex_digits = (f.precision - 1 + 3) / 4;
    std::uint64_t fraction = d.significand & ((std::uint64_t{1} << fraction_bits) - 1);
    fraction <<= 4 * hex_digits - fraction_bits;
    std::string digits;
    for (int i = hex_digits; i-- > 0;) digits += "0123456789abcdef"[(fraction >> (4 * i)) & 0xf];
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    return sign + "0x1" + (digits.empty() ? "" : "." + digits) + "p" + (exponent < 0 ? "-" : "+") +
           std::to_string(exponent < 0 ? -exponent : exponent);
}

template <floating_format T>
void write_text(std::ostream& out, std::span<const T> xs, std::string_view comment) {
    // Every line of the comment gets its own '#', so the file always reads back.
    std::size_t start = 0;
    do {
        const std::size_t end = std::min(comment.find('\n', start), comment.size());
        const std::string_view line = comment.substr(start, end - start);
        out << '#' << (line.empty() ? "" : " ") << line << '\n';
        start = end + 1;
    } while (start <= comment.size());
    for (const T x : xs) out << to_hex_string(x) << '\n';
}

template void write_text<double>(std::ostream&, std::span<const double>, std::string_view);
template void write_text<float>(std::ostream&, std::span<const float>, std::string_view);
template void write_text<float16>(std::ostream&, std::span<const float16>, std::string_view);
template void write_text<bfloat16>(std::ostream&, std::span<const bfloat16>, std::string_view);

}  // namespace exactref
