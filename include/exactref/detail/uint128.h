// exactref/detail/uint128.h — the compiler's 128-bit integers (GCC/Clang), named once.
#pragma once

namespace exactref::detail {
__extension__ typedef unsigned __int128 uint128;  // __extension__: silences -Wpedantic for this one typedef
__extension__ typedef __int128 int128;
}  // namespace exactref::detail
