// Device trees over 32- and 64-bit integers, wrapping modulo 2^bits (tree_kernels.h).
#include "tree_kernels.h"

EXACTREF_CUDA_INSTANTIATE_TREE(int, int)
EXACTREF_CUDA_INSTANTIATE_TREE(unsigned, unsigned)
EXACTREF_CUDA_INSTANTIATE_TREE(long, long)
EXACTREF_CUDA_INSTANTIATE_TREE(unsigned long, unsigned long)
EXACTREF_CUDA_INSTANTIATE_TREE(long long, long long)
EXACTREF_CUDA_INSTANTIATE_TREE(unsigned long long, unsigned long long)
