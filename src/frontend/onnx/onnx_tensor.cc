#include "frontend/onnx/onnx_tensor.h"

#include <cstring>
#include <fstream>

#include "support/limits.h"

namespace edgec::onnx_fe {

using onnx::TensorProto;

StatusOr<DType> FromOnnxDType(int t) {
  switch (t) {
    case TensorProto::FLOAT: return DType::kF32;
    case TensorProto::DOUBLE: return DType::kF64;
    case TensorProto::FLOAT16: return DType::kF16;
    case TensorProto::BFLOAT16: return DType::kBF16;
    case TensorProto::INT8: return DType::kI8;
    case TensorProto::INT16: return DType::kI16;
    case TensorProto::INT32: return DType::kI32;
    case TensorProto::INT64: return DType::kI64;
    case TensorProto::UINT8: return DType::kU8;
    case TensorProto::UINT16: return DType::kU16;
    case TensorProto::UINT32: return DType::kU32;
    case TensorProto::UINT64: return DType::kU64;
    case TensorProto::BOOL: return DType::kBool;
    default: break;
  }
  return Unimplemented("ONNX data type {} is not supported", OnnxDTypeName(t));
}

int ToOnnxDType(DType t) {
  switch (t) {
    case DType::kF32: return TensorProto::FLOAT;
    case DType::kF64: return TensorProto::DOUBLE;
    case DType::kF16: return TensorProto::FLOAT16;
    case DType::kBF16: return TensorProto::BFLOAT16;
    case DType::kI8: return TensorProto::INT8;
    case DType::kI16: return TensorProto::INT16;
    case DType::kI32: return TensorProto::INT32;
    case DType::kI64: return TensorProto::INT64;
    case DType::kU8: return TensorProto::UINT8;
    case DType::kU16: return TensorProto::UINT16;
    case DType::kU32: return TensorProto::UINT32;
    case DType::kU64: return TensorProto::UINT64;
    case DType::kBool: return TensorProto::BOOL;
    case DType::kUndefined: break;
  }
  return TensorProto::UNDEFINED;
}

std::string OnnxDTypeName(int t) {
  if (TensorProto::DataType_IsValid(t)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(t));
  }
  return fmt::format("<invalid {}>", t);
}

namespace {

Status ReadExternal(const TensorProto& p, const std::filesystem::path& model_dir,
                    const std::string& what, size_t need, void* dst) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = std::atoll(kv.value().c_str());
    else if (kv.key() == "length") length = std::atoll(kv.value().c_str());
  }
  if (location.empty()) return InvalidArgument("{}: external data has no location", what);
  std::filesystem::path rel(location);
  if (rel.is_absolute()) {
    return InvalidArgument("{}: external data location '{}' is absolute; it must be relative to "
                           "the model's folder", what, location);
  }
  // Judged by its text first, so a location like ../x is refused without looking at the file;
  // a symlink inside the folder is judged by where it leads (below).
  const std::filesystem::path normal = rel.lexically_normal();
  if (normal.empty() || *normal.begin() == "..") {
    return InvalidArgument("{}: external data location '{}' leaves the model's folder", what, location);
  }
  std::error_code ec;
  auto base = std::filesystem::weakly_canonical(model_dir.empty() ? "." : model_dir, ec);
  auto full = std::filesystem::weakly_canonical(base / rel, ec);
  auto [b, f] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (ec || b != base.end()) {
    return InvalidArgument("{}: external data location '{}' leaves the model's folder", what,
                           location);
  }
  std::ifstream in(full, std::ios::binary);
  if (!in) return IoError("{}: cannot open external data file '{}'", what, full.string());
  if (length >= 0 && static_cast<size_t>(length) != need) {
    return InvalidArgument("{}: external data length {} but the tensor needs {} bytes", what,
                           length, need);
  }
  in.seekg(0, std::ios::end);
  int64_t size = in.tellg();
  // Compared without forming offset + need (an offset near INT64_MAX must not overflow).
  if (offset < 0 || offset > size || static_cast<int64_t>(need) > size - offset) {
    return InvalidArgument("{}: external data '{}' has {} bytes, tensor needs {} at offset {}",
                           what, location, size, need, offset);
  }
  in.seekg(offset);
  in.read(static_cast<char*>(dst), need);
  if (!in) return IoError("{}: reading external data '{}' failed", what, location);
  return Status::Ok();
}

template <typename Field>
Status CheckCount(const Field& f, int64_t n, const std::string& what, const char* field) {
  if (static_cast<int64_t>(f.size()) != n) {
    return InvalidArgument("{}: {} has {} elements, dims need {}", what, field, f.size(), n);
  }
  return Status::Ok();
}

// The repeated field that holds a tensor of `dt` when it has no raw_data, and its length.
std::pair<const char*, int64_t> TypedField(const TensorProto& p, DType dt) {
  switch (dt) {
    case DType::kF32: return {"float_data", p.float_data_size()};
    case DType::kF64: return {"double_data", p.double_data_size()};
    case DType::kI64: return {"int64_data", p.int64_data_size()};
    case DType::kU32: case DType::kU64: return {"uint64_data", p.uint64_data_size()};
    default: return {"int32_data", p.int32_data_size()};
  }
}

}  // namespace

StatusOr<Tensor> TensorFromProto(const TensorProto& p, const std::filesystem::path& model_dir,
                                 const std::string& what) {
  auto dt = FromOnnxDType(p.data_type());
  if (!dt.ok()) return dt.status().WithContext(what);
  Dims dims(p.dims().begin(), p.dims().end());
  // Inline data whose size disagrees with the dims is refused before the tensor is allocated:
  // a few bytes claiming [1 << 20, 1 << 20] must not cost 4 TiB (tests/bad_models: init_huge_dims).
  if (p.data_location() != TensorProto::EXTERNAL) {
    auto n = CheckedNumElements(dims, DTypeSize(*dt));
    if (!n.ok()) return n.status().WithContext(what);
    const int64_t need = *n * static_cast<int64_t>(DTypeSize(*dt));
    if (p.has_raw_data() && static_cast<int64_t>(p.raw_data().size()) != need) {
      return InvalidArgument("{}: raw_data has {} bytes, {}{} needs {}", what, p.raw_data().size(),
                             DTypeName(*dt), DimsToString(dims), need);
    }
    if (!p.has_raw_data()) {
      const auto [field, stored] = TypedField(p, *dt);
      if (stored != *n) return InvalidArgument("{}: {} has {} elements, dims need {}", what, field, stored, *n);
    }
  }
  auto created = Tensor::Create(*dt, dims);
  if (!created.ok()) return created.status().WithContext(what);
  Tensor t = std::move(created).value();
  const int64_t n = t.numel();
  if (p.data_location() == TensorProto::EXTERNAL) {
    RETURN_IF_ERROR(ReadExternal(p, model_dir, what, t.nbytes(), t.raw()));
    return t;
  }
  if (p.has_raw_data()) {
    if (p.raw_data().size() != t.nbytes()) {
      return InvalidArgument("{}: raw_data has {} bytes, {} needs {}", what, p.raw_data().size(),
                             t.TypeString(), t.nbytes());
    }
    if (n) std::memcpy(t.raw(), p.raw_data().data(), t.nbytes());
    return t;
  }
  switch (*dt) {
    case DType::kF32:
      RETURN_IF_ERROR(CheckCount(p.float_data(), n, what, "float_data"));
      for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = p.float_data(i);
      break;
    case DType::kF64:
      RETURN_IF_ERROR(CheckCount(p.double_data(), n, what, "double_data"));
      for (int64_t i = 0; i < n; ++i) t.data<double>()[i] = p.double_data(i);
      break;
    case DType::kI64:
      RETURN_IF_ERROR(CheckCount(p.int64_data(), n, what, "int64_data"));
      for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = p.int64_data(i);
      break;
    case DType::kU32:
    case DType::kU64:
      RETURN_IF_ERROR(CheckCount(p.uint64_data(), n, what, "uint64_data"));
      for (int64_t i = 0; i < n; ++i) {
        if (*dt == DType::kU32) {
          t.data<uint32_t>()[i] = static_cast<uint32_t>(p.uint64_data(i));
        } else {
          t.data<uint64_t>()[i] = p.uint64_data(i);
        }
      }
      break;
    case DType::kF16:
    case DType::kBF16:
      RETURN_IF_ERROR(CheckCount(p.int32_data(), n, what, "int32_data"));
      for (int64_t i = 0; i < n; ++i) {
        static_cast<uint16_t*>(t.raw())[i] = static_cast<uint16_t>(p.int32_data(i));
      }
      break;
    case DType::kI8: case DType::kI16: case DType::kI32: case DType::kU8: case DType::kU16:
    case DType::kBool:
      RETURN_IF_ERROR(CheckCount(p.int32_data(), n, what, "int32_data"));
      for (int64_t i = 0; i < n; ++i) {
        int32_t v = p.int32_data(i);
        switch (*dt) {
          case DType::kI8: t.data<int8_t>()[i] = static_cast<int8_t>(v); break;
          case DType::kI16: t.data<int16_t>()[i] = static_cast<int16_t>(v); break;
          case DType::kI32: t.data<int32_t>()[i] = v; break;
          case DType::kU8: t.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
          case DType::kU16: t.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
          default: t.data<bool>()[i] = v != 0; break;
        }
      }
      break;
    default:
      return Unimplemented("{}: dtype {} not supported", what, DTypeName(*dt));
  }
  return t;
}

void TensorToProto(const Tensor& t, const std::string& name, TensorProto* p) {
  p->set_name(name);
  p->set_data_type(ToOnnxDType(t.dtype()));
  for (int64_t d : t.dims()) p->add_dims(d);
  p->set_raw_data(std::string(static_cast<const char*>(t.raw()), t.nbytes()));
}

namespace {

// The tensor type inside optional(sequence(tensor)), optional(tensor), sequence(tensor) or
// tensor, with the wrappers seen on the way.
StatusOr<const onnx::TypeProto_Tensor*> Unwrap(const onnx::TypeProto& type, const std::string& name,
                                               ValueKind* kind, bool* optional) {
  const onnx::TypeProto* t = &type;
  if (t->has_optional_type()) {
    *optional = true;
    t = &t->optional_type().elem_type();
  }
  if (t->has_sequence_type()) {
    *kind = ValueKind::kSequence;
    t = &t->sequence_type().elem_type();
  }
  if (!t->has_tensor_type()) {
    return Unimplemented("value '{}' is not a tensor, a sequence of tensors or an optional of "
                         "either (maps and nested sequences are not supported)", name);
  }
  return &t->tensor_type();
}

}  // namespace

StatusOr<TensorType> TypeFromValueInfo(const onnx::ValueInfoProto& vi) {
  ValueKind kind = ValueKind::kTensor;
  bool optional = false;
  ASSIGN_OR_RETURN(const onnx::TypeProto_Tensor* unwrapped, Unwrap(vi.type(), vi.name(), &kind, &optional));
  const auto& tt = *unwrapped;
  auto dt = FromOnnxDType(tt.elem_type());
  if (!dt.ok()) return dt.status().WithContext(fmt::format("value '{}'", vi.name()));
  TensorType t;
  t.dtype = *dt;
  t.kind = kind;
  t.optional = optional;
  if (!tt.has_shape()) {
    t.rank_known = false;
    return t;
  }
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) {
        return InvalidArgument("value '{}' has negative dim {}", vi.name(), d.dim_value());
      }
      t.dims.push_back(d.dim_value());
      t.dim_names.push_back("");
    } else {
      t.dims.push_back(kUnknownDim);
      t.dim_names.push_back(d.dim_param());
    }
  }
  // The known dims alone must not overflow, and a static type must fit the tensor cap
  // (tests/bad_models/run.py: "input of 2^93 elements").
  Dims known;
  for (int64_t d : t.dims)
    if (d >= 0) known.push_back(d);
  auto n = CheckedNumElements(known, DTypeSize(t.dtype));
  if (!n.ok()) return n.status().WithContext(fmt::format("value '{}'", vi.name()));
  if (known.size() == t.dims.size())
    RETURN_IF_ERROR(CheckTensorBytes(*n * static_cast<int64_t>(DTypeSize(t.dtype)),
                                     fmt::format("value '{}' {}{}", vi.name(), DTypeName(t.dtype), DimsToString(t.dims))));
  return t;
}

void TypeToValueInfo(const TensorType& t, const std::string& name, onnx::ValueInfoProto* vi) {
  vi->set_name(name);
  onnx::TypeProto* type = vi->mutable_type();
  if (t.optional) type = type->mutable_optional_type()->mutable_elem_type();
  if (t.kind == ValueKind::kSequence) type = type->mutable_sequence_type()->mutable_elem_type();
  auto* tt = type->mutable_tensor_type();
  tt->set_elem_type(ToOnnxDType(t.dtype));
  if (!t.rank_known) return;
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < t.dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (t.dims[i] >= 0) {
      d->set_dim_value(t.dims[i]);
    } else if (i < t.dim_names.size() && !t.dim_names[i].empty()) {
      d->set_dim_param(t.dim_names[i]);
    }
  }
}

}  // namespace edgec::onnx_fe
