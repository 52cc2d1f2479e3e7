// Compiles a region of a file for one ISA: EDGEC_ISA_REGION_BEGIN("avx2,fma") ... END. GCC
// takes a target pragma; clang ignores that pragma and takes the target as an attribute on
// every function of the region (the fuzz and sanitizer builds are clang: scripts/sanitize.sh).
#pragma once

#define EDGEC_ISA_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define EDGEC_ISA_REGION_BEGIN(isa) \
  EDGEC_ISA_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define EDGEC_ISA_REGION_END EDGEC_ISA_PRAGMA(clang attribute pop)
#else
#define EDGEC_ISA_REGION_BEGIN(isa) EDGEC_ISA_PRAGMA(GCC push_options) EDGEC_ISA_PRAGMA(GCC target(isa))
#define EDGEC_ISA_REGION_END EDGEC_ISA_PRAGMA(GCC pop_options)
#endif
