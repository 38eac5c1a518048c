// exactref/exactref.h — the whole host API in one include (the GoogleTest, multiprecision, Eigen and CUDA faces
// excluded: include exactref/gtest.h, exactref/multiprecision.h, exactref/eigen.h and exactref/cuda.h for those).
#pragma once

#include "exactref/config.h"  // C++20, or a clear error

#include "exactref/accumulator.h"
#include "exactref/covers.h"
#include "exactref/dot.h"
#include "exactref/format.h"
#include "exactref/gemm.h"
#include "exactref/io.h"
#include "exactref/orders.h"
#include "exactref/reference.h"
#include "exactref/scatter.h"
#include "exactref/standard.h"
#include "exactref/testing.h"
#include "exactref/tree.h"
#include "exactref/ulp.h"
