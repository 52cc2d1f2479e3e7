// Functional side of the int16 VEC norm and softmax (isa.h kWideImm): quant/int16_norm.h on
// the tile's int16 rows, parameters read from SRAM. Called by sim_functional.cc.
#pragma once

#include "support/status.h"
#include "npu/sim_functional.h"

namespace edgec::npu {

StatusOr<Effect> WideNormOrSoftmax(const Instr& in, const Memories& mem);

}  // namespace edgec::npu
