// Device trees over float16 and bfloat16 data, accumulated in their own format (exact binary64 step, one integer
// rounding: include/exactref/cuda/arith.cuh) or in float (tree_kernels.h).
#include "tree_kernels.h"

using exactref::bfloat16;
using exactref::float16;

EXACTREF_CUDA_INSTANTIATE_TREE(float16, float16)
EXACTREF_CUDA_INSTANTIATE_TREE(bfloat16, bfloat16)
EXACTREF_CUDA_INSTANTIATE_TREE(float16, float)
EXACTREF_CUDA_INSTANTIATE_TREE(bfloat16, float)
