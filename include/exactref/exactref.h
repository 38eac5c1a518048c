// exactref/exactref.h — the whole host API in one include (GoogleTest and multiprecision faces excluded:
// include exactref/gtest.h and exactref/multiprecision.h for those).
#pragma once

#include "exactref/accumulator.h"
#include "exactref/covers.h"
#include "exactref/format.h"
#include "exactref/io.h"
#include "exactref/orders.h"
#include "exactref/reference.h"
#include "exactref/standard.h"
#include "exactref/tree.h"
#include "exactref/ulp.h"
