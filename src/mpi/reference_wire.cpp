// src/mpi/reference_wire.cpp — a reference as one buffer and its exact merge (reference_wire.h).
#include "reference_wire.h"

#include <algorithm>
#include <cmath>    // std::isnan
#include <cstring>  // std::memset
#include <limits>

namespace exactref::mpi::detail {
namespace {

void write(superaccumulator acc, accumulator_wire& w) noexcept {
    acc.normalize();
    const auto& chunks = acc.chunks();
    std::copy(chunks.begin(), chunks.end(), w.chunks);
    w.terms = acc.term_count();
    w.positive_inf = acc.positive_inf_count();
    w.negative_inf = acc.negative_inf_count();
    w.nan = acc.has_nan();
    w.all_negative_zero = acc.all_negative_zero();
    w.all_positive_zero = acc.all_positive_zero();
}

// The value chunk by chunk, then the specials, then the other terms with their signed-zero flags (the same order
// as the Python face's unpickling, python/src/references.cpp).
superaccumulator read(const accumulator_wire& w) {
    superaccumulator acc;
    for (int k = 0; k < superaccumulator::chunk_count; ++k)
        acc.add_lane_sum(w.chunks[k], superaccumulator::lsb_exponent + superaccumulator::chunk_bits * k);
    if (w.nan) acc.note_special(true, false);
    exactref::detail::add_infinities(acc, w.positive_inf, false);
    exactref::detail::add_infinities(acc, w.negative_inf, true);
    const std::uint64_t specials = w.positive_inf + w.negative_inf + (w.nan ? 1u : 0u);
    const bool any = w.terms > 0;
    acc.note_terms(w.terms - specials, any && !w.all_negative_zero, any && !w.all_positive_zero);
    return acc;
}

void merge_op(void* in, void* inout, int* len, MPI_Datatype*) {
    const auto* a = static_cast<const reference_wire*>(in);
    auto* b = static_cast<reference_wire*>(inout);
    for (int i = 0; i < *len; ++i) merge_wire(a[i], b[i]);
}

}  // namespace

reference_wire to_wire(const reference& r) noexcept {
    reference_wire w;
    std::memset(&w, 0, sizeof w);  // padding too: the bytes are what travels
    write(r.sum, w.sum);
    write(r.abs_sum, w.abs_sum);
    w.count = r.count;
    w.largest = r.largest;
    w.min_product_exponent = r.min_product_exponent;
    w.term_format = static_cast<std::uint8_t>(r.term_format);
    w.is_dot = r.is_dot;
    w.product_may_underflow = r.product_may_underflow;
    w.has_initial = r.has_initial;
    return w;
}

reference from_wire(const reference_wire& w) {
    reference r;
    r.sum = read(w.sum);
    r.abs_sum = read(w.abs_sum);
    r.count = w.count;
    r.largest = w.largest;
    r.min_product_exponent = w.min_product_exponent;
    r.term_format = static_cast<dtype>(w.term_format);
    r.is_dot = w.is_dot != 0;
    r.product_may_underflow = w.product_may_underflow != 0;
    r.has_initial = w.has_initial != 0;
    r.cache_enclosures();
    return r;
}

void merge_wire(const reference_wire& in, reference_wire& inout) {
    reference_wire out = inout;
    superaccumulator s = read(inout.sum), a = read(inout.abs_sum);
    s.merge(read(in.sum));
    a.merge(read(in.abs_sum));
    write(s, out.sum);
    write(a, out.abs_sum);
    out.count = in.count + inout.count;
    out.largest = std::isnan(in.largest) || std::isnan(inout.largest) ? std::numeric_limits<double>::quiet_NaN()
                                                                      : std::max(in.largest, inout.largest);
    out.min_product_exponent = std::min(in.min_product_exponent, inout.min_product_exponent);
    out.product_may_underflow = in.product_may_underflow | inout.product_may_underflow;
    out.has_initial = in.has_initial | inout.has_initial;
    inout = out;
}

reference allreduce_reference(MPI_Comm comm, const reference& local) {
    const reference_wire mine = to_wire(local);
    reference_wire all;
    MPI_Datatype type;
    MPI_Type_contiguous(static_cast<int>(sizeof(reference_wire)), MPI_BYTE, &type);
    MPI_Type_commit(&type);
    MPI_Op op;
    MPI_Op_create(&merge_op, /*commute=*/1, &op);
    MPI_Allreduce(&mine, &all, 1, type, op, comm);
    MPI_Op_free(&op);
    MPI_Type_free(&type);
    return from_wire(all);
}

}  // namespace exactref::mpi::detail
