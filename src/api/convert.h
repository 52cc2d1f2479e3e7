// Conversions between the public API's types and the library's (no copies of tensor data).
#pragma once

#include "edgec/profile.h"
#include "edgec/session.h"
#include "edgec/tensor.h"
#include "ir/graph.h"
#include "kernels/cpu/kernel.h"
#include "runtime/artifact.h"

namespace edgec::api {

DType ToDType(DataType t);
DataType FromDType(DType t);
Unit FromUnit(artifact_io::Unit u);
cpu::KernelTuning ToKernelTuning(const KernelTuning& t);
KernelTuning FromKernelTuning(const cpu::KernelTuning& t);

// A library tensor over the view's memory (borrowed: no copy).
Tensor BorrowTensor(const TensorView& v);
// A view that takes over `t`'s memory (no copy; a borrowed `t` is copied once).
TensorView AdoptTensor(Tensor t);

ValueInfo InfoOf(const Value& v);
std::vector<ValueInfo> InputsOf(const Graph& g);
std::vector<ValueInfo> OutputsOf(const Graph& g);

}  // namespace edgec::api
