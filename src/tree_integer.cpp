// The integer tree reductions of tree.h: the standard signed and unsigned integer types (int8_t .. uint64_t, long
// long), each accumulated in its own type
// (wrap-around, or checked in tree order with tree_options::check_overflow).
#include <cstdint>

#include "exactref/detail/tree_engine.h"

namespace exactref::detail {

#define EXACTREF_TREE_INSTANTIATE(T)                                                                                   \
    template T tree_reduce<T, T>(std::span<const T>, reduce_op, const tree_shape&, const tree_options&);              \
    template T reduce_chunked<T, T>(std::span<const std::span<const T>>, reduce_op, const tree_shape&,                \
                                    const chunk_options&);

EXACTREF_TREE_INSTANTIATE(signed char)  // int8_t
EXACTREF_TREE_INSTANTIATE(short)
EXACTREF_TREE_INSTANTIATE(int)
EXACTREF_TREE_INSTANTIATE(long)
EXACTREF_TREE_INSTANTIATE(long long)
EXACTREF_TREE_INSTANTIATE(unsigned char)  // uint8_t
EXACTREF_TREE_INSTANTIATE(unsigned short)
EXACTREF_TREE_INSTANTIATE(unsigned)
EXACTREF_TREE_INSTANTIATE(unsigned long)
EXACTREF_TREE_INSTANTIATE(unsigned long long)

#undef EXACTREF_TREE_INSTANTIATE

}  // namespace exactref::detail
