// Conversions between ONNX protobuf tensors/types and edgec's.
#pragma once

#include <filesystem>
#include <string>

#include <onnx/onnx_pb.h>

#include "support/status.h"
#include "ir/types.h"

namespace edgec::onnx_fe {

// ONNX TensorProto::DataType -> DType; fails for types edgec has no storage for (string,
// complex, float8).
StatusOr<DType> FromOnnxDType(int onnx_type);
int ToOnnxDType(DType t);
std::string OnnxDTypeName(int onnx_type);

// Decodes a TensorProto: typed fields, raw_data, or external data files under
// `model_dir` (a location that leaves model_dir is refused). `what` names it in errors.
StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& p, const std::filesystem::path& model_dir,
                                 const std::string& what);
// Encodes as raw_data.
void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* p);

StatusOr<TensorType> TypeFromValueInfo(const onnx::ValueInfoProto& vi);
void TypeToValueInfo(const TensorType& t, const std::string& name, onnx::ValueInfoProto* vi);

}  // namespace edgec::onnx_fe
