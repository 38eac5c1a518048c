// Device trees over binary64 and binary32 data, accumulated in their own format (tree_kernels.h).
#include "tree_kernels.h"

EXACTREF_CUDA_INSTANTIATE_TREE(double, double)
EXACTREF_CUDA_INSTANTIATE_TREE(float, float)
