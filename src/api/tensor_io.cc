// include/edgec/tensor_io.h over support/npy.h, runtime/reference_executor.h (RandomInputs)
// and runtime/shape_binding.h (ParseDims).
#include "edgec/tensor_io.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

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

StatusOr<TensorView> TensorFromText(const std::string& text, DataType dtype, std::vector<int64_t> dims) {
  std::vector<std::string> items;
  std::string cur;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ',') {
      items.push_back(cur);
      cur.clear();
    } else if (!std::isspace(static_cast<unsigned char>(text[i]))) {
      cur += text[i];
    }
  }
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("values '{}': dims {} are not static", text, DimsToString(Dims(dims.begin(), dims.end())));
    count *= d;
  }
  if (static_cast<int64_t>(items.size()) != count)
    return InvalidArgument("values '{}': {} value(s), the dims {} hold {}", text, items.size(),
                           DimsToString(Dims(dims.begin(), dims.end())), count);
  const DType dt = api::ToDType(dtype);
  Tensor t(dt, Dims(dims.begin(), dims.end()));
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    double v = 0;
    if (dt == DType::kBool && (item == "true" || item == "false")) {
      v = item == "true";
    } else {
      char* end = nullptr;
      v = item.empty() ? 0 : std::strtod(item.c_str(), &end);
      if (item.empty() || *end != '\0') return InvalidArgument("values '{}': '{}' is not a number", text, item);
    }
    if (IsInteger(dt) || dt == DType::kBool) {
      const double bits = 8.0 * static_cast<double>(DTypeSize(dt));
      const double lo = dt == DType::kBool || IsUnsignedInt(dt) ? 0 : -std::ldexp(1.0, static_cast<int>(bits) - 1);
      const double hi = dt == DType::kBool ? 1
                        : IsUnsignedInt(dt) ? std::ldexp(1.0, static_cast<int>(bits)) - 1
                                            : std::ldexp(1.0, static_cast<int>(bits) - 1) - 1;
      if (v != std::floor(v) || v < lo || v > hi)
        return InvalidArgument("values '{}': {} is not a value of {}", text, item, DTypeName(dt));
    }
    StoreFromDouble(dt, t.raw(), static_cast<int64_t>(i), v);
  }
  return api::AdoptTensor(std::move(t));
}

std::string TypeString(const TensorView& tensor) { return api::BorrowTensor(tensor).TypeString(); }

std::vector<double> ToDoubles(const TensorView& tensor) { return api::BorrowTensor(tensor).ToDoubleVector(); }

}  // namespace v1
}  // namespace edgec
