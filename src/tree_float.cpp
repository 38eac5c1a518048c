// The float-format tree reductions of tree.h: (T, T) for float64, float32, float16, bfloat16, and (float16, float),
// (bfloat16, float). Compiled with -ffp-contract=off (CMakeLists.txt); detail/tree_engine.h refuses -ffast-math.
#include "exactref/detail/tree_engine.h"

namespace exactref::detail {

#define EXACTREF_TREE_INSTANTIATE(T, ACC)                                                                              \
    template ACC tree_reduce<T, ACC>(std::span<const T>, reduce_op, const tree_shape&, const tree_options&);          \
    template ACC reduce_chunked<T, ACC>(std::span<const std::span<const T>>, reduce_op, const tree_shape&,            \
                                        const chunk_options&);

EXACTREF_TREE_INSTANTIATE(double, double)
EXACTREF_TREE_INSTANTIATE(float, float)
EXACTREF_TREE_INSTANTIATE(float16, float16)
EXACTREF_TREE_INSTANTIATE(bfloat16, bfloat16)
EXACTREF_TREE_INSTANTIATE(float16, float)
EXACTREF_TREE_INSTANTIATE(bfloat16, float)

#undef EXACTREF_TREE_INSTANTIATE

}  // namespace exactref::detail
