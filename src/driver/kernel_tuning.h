// The environment variables that steer the fast CPU kernels, read in one place for the CLI
// and the benchmarks (the kernels themselves never read the environment):
//   EDGEC_CPU_ISA=avx512|avx2|scalar     caps the own kernels' vector ISA (cpu::CapVectorIsa)
//   EDGEC_CPU_WINOGRAD=0                 no Winograd f32 convolutions
//   EDGEC_CPU_WINOGRAD_MIN_CHANNELS=N    their channel threshold (default 32)
//   EDGEC_CPU_CONV1X1_GEMM_MIN_PIXELS=N  1x1 f32 convolutions as one GEMM from N pixels (256)
//   EDGEC_CPU_GEMV=0                     no own f32 matrix-vector product
//   EDGEC_INT8_UNCHECKED=1               skip the int8 exactness check without VNNI
// They exist for measurements; a library user sets cpu::KernelTuning directly.
#pragma once

#include "kernels/cpu/kernel.h"

namespace edgec::driver {

// The tuning the variables above describe (unset ones keep the defaults); a value that does
// not parse is reported on stderr and ignored.
cpu::KernelTuning KernelTuningFromEnvironment();

// Applies EDGEC_CPU_ISA (process-wide, like the thread pool); call once at start.
void ApplyCpuIsaFromEnvironment();

}  // namespace edgec::driver
