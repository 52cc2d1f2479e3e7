// include/edgec/tensor_io.h over support/npy.h, runtime/reference_executor.h (RandomInputs)
// and runtime/shape_binding.h (ParseDims).
#include "edgec/tensor_io.h"

#include "api/convert.h"
#include "ir/infer.h"
#include "runtime/reference_executor.h"
#include "runtime/shape_binding.h"
#include "support/npy.h"
#include "support/status.h"

namespace edgec {
inline namespace v1 {

StatusOr<TensorView> ReadNpyFile(const std::string& path) {
  ASSIGN_OR_RETURN(Tensor t, ::edgec::ReadNpy(path));
  return api::AdoptTensor(std::move(t));
}

Status WriteNpyFile(const std::string& path, const TensorView& tensor) {
  return ::edgec::WriteNpy(path, api::BorrowTensor(tensor));
}

TensorView RandomTensor(DataType dtype, std::vector<int64_t> dims, uint64_t seed) {
  Graph one;
  one.AddInput("x", MakeType(api::ToDType(dtype), Dims(dims.begin(), dims.end())));
  auto r = RandomInputs(one, seed);
  return api::AdoptTensor(std::move(r.begin()->second));
}

StatusOr<std::vector<int64_t>> ParseDimsText(const std::string& text) {
  ASSIGN_OR_RETURN(Dims d, ::edgec::ParseDims(text));
  return std::vector<int64_t>(d.begin(), d.end());
}

std::string TypeString(const TensorView& tensor) { return api::BorrowTensor(tensor).TypeString(); }

std::vector<double> ToDoubles(const TensorView& tensor) { return api::BorrowTensor(tensor).ToDoubleVector(); }

}  // namespace v1
}  // namespace edgec
