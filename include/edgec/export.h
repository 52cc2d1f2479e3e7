// EDGEC_API marks what the shared library libedgec exports; everything else in it is hidden.
#pragma once

#if defined(EDGEC_BUILDING_LIBRARY)
#define EDGEC_API __attribute__((visibility("default")))
#else
#define EDGEC_API
#endif
