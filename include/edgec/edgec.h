// The whole C++ API of edgec (docs/api.md): load and optimize an ONNX model, quantize it,
// compile it for an NPU target, run it on the CPU or the simulated NPU, read its profile and
// reports (report.h and estimate.h are libedgec's only, not libedgec_runtime's).
#pragma once

#include "edgec/compare.h"
#include "edgec/compiled_model.h"
#include "edgec/estimate.h"
#include "edgec/limits.h"
#include "edgec/model.h"
#include "edgec/profile.h"
#include "edgec/progress.h"
#include "edgec/report.h"
#include "edgec/session.h"
#include "edgec/status.h"
#include "edgec/target.h"
#include "edgec/tensor.h"
#include "edgec/tensor_io.h"
