#include "support/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace edgec {
namespace {

struct DescrEntry {
  const char* descr;
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"<f4", DType::kF32}, {"<f8", DType::kF64}, {"<f2", DType::kF16}, {"|i1", DType::kI8},
    {"<i2", DType::kI16}, {"<i4", DType::kI32}, {"<i8", DType::kI64}, {"|u1", DType::kU8},
    {"<u2", DType::kU16}, {"<u4", DType::kU32}, {"<u8", DType::kU64}, {"|b1", DType::kBool},
};

// Finds the value text after 'key': in the header dict.
StatusOr<std::string> DictValue(const std::string& header, const std::string& key,
                                const std::string& what) {
  auto k = header.find("'" + key + "'");
  if (k == std::string::npos) return InvalidArgument("{}: npy header has no '{}'", what, key);
  auto colon = header.find(':', k);
  if (colon == std::string::npos) return InvalidArgument("{}: malformed npy header", what);
  size_t start = colon + 1;
  while (start < header.size() && header[start] == ' ') ++start;
  if (start >= header.size()) return InvalidArgument("{}: malformed npy header", what);
  size_t end;
  if (header[start] == '(') {
    end = header.find(')', start);
    if (end == std::string::npos) return InvalidArgument("{}: malformed shape in npy header", what);
    ++end;
  } else if (header[start] == '\'') {
    end = header.find('\'', start + 1);
    if (end == std::string::npos) return InvalidArgument("{}: malformed npy header", what);
    ++end;
  } else {
    end = header.find_first_of(",}", start);
    if (end == std::string::npos) return InvalidArgument("{}: malformed npy header", what);
  }
  return header.substr(start, end - start);
}

}  // namespace

StatusOr<Tensor> ParseNpy(std::string_view bytes, const std::string& what) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
    return InvalidArgument("{}: not a .npy file (bad magic)", what);
  }
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return InvalidArgument("{}: truncated .npy header", what);
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= size_t{static_cast<unsigned char>(bytes[8 + i])} << (8 * i);
    header_start = 12;
  } else {
    return InvalidArgument("{}: unsupported .npy version {}", what, major);
  }
  if (header_start + header_len > bytes.size()) {
    return InvalidArgument("{}: truncated .npy header", what);
  }
  std::string header(bytes.substr(header_start, header_len));
  ASSIGN_OR_RETURN(std::string descr, DictValue(header, "descr", what));
  ASSIGN_OR_RETURN(std::string order, DictValue(header, "fortran_order", what));
  ASSIGN_OR_RETURN(std::string shape_text, DictValue(header, "shape", what));
  if (descr.size() < 2) return InvalidArgument("{}: bad dtype {}", what, descr);
  descr = descr.substr(1, descr.size() - 2);
  if (descr == "<b1") descr = "|b1";
  if (descr == "<i1") descr = "|i1";
  if (descr == "<u1") descr = "|u1";
  DType dtype = DType::kUndefined;
  for (auto& e : kDescrs) {
    if (descr == e.descr) dtype = e.dtype;
  }
  if (dtype == DType::kUndefined) {
    return InvalidArgument("{}: unsupported .npy dtype '{}' (expected little-endian numeric or bool)",
                           what, descr);
  }
  if (order.find("True") != std::string::npos) {
    return InvalidArgument("{}: Fortran-order .npy arrays are not supported; save with C order",
                           what);
  }
  // fuzz_npy found a shape value of one character (substr threw): "(...)" is checked first.
  if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')')
    return InvalidArgument("{}: malformed shape '{}' in npy header", what, shape_text);
  Dims dims;
  std::string inner = shape_text.substr(1, shape_text.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t a = item.find_first_not_of(" L");
    if (a == std::string::npos) continue;
    size_t b = item.find_last_not_of(" L");
    std::string num = item.substr(a, b - a + 1);
    char* endp = nullptr;
    long long d = std::strtoll(num.c_str(), &endp, 10);
    if (endp == num.c_str() || *endp != '\0' || d < 0) {
      return InvalidArgument("{}: bad dim '{}' in .npy shape {}", what, num, shape_text);
    }
    dims.push_back(d);
  }
  ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(dims, DTypeSize(dtype)));
  size_t data_start = header_start + header_len;
  size_t need = static_cast<size_t>(n) * DTypeSize(dtype);
  if (bytes.size() - data_start < need) {
    return InvalidArgument("{}: .npy data is truncated: shape {} needs {} bytes, file has {}", what,
                           DimsToString(dims), need, bytes.size() - data_start);
  }
  ASSIGN_OR_RETURN(Tensor t, Tensor::Create(dtype, dims));
  if (need) std::memcpy(t.raw(), bytes.data() + data_start, need);
  if (dtype == DType::kBool) {
    for (int64_t i = 0; i < n; ++i) {
      uint8_t b = reinterpret_cast<uint8_t*>(t.raw())[i];
      if (b > 1) return InvalidArgument("{}: bool element {} has byte value {}", what, i, b);
    }
  }
  return t;
}

StatusOr<Tensor> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return IoError("cannot open '{}'", path);
  std::stringstream buf;
  buf << f.rdbuf();
  std::string bytes = buf.str();
  return ParseNpy(bytes, path);
}

Status WriteNpy(const std::string& path, const Tensor& t) {
  const char* descr = nullptr;
  for (auto& e : kDescrs) {
    if (e.dtype == t.dtype()) descr = e.descr;
  }
  Tensor src = t;
  if (t.dtype() == DType::kBF16) {  // numpy has no bfloat16: write as float32
    src = t.CastTo(DType::kF32);
    descr = "<f4";
  }
  if (!descr) return InvalidArgument("cannot write dtype {} to .npy", DTypeName(t.dtype()));
  std::string shape = "(";
  for (size_t i = 0; i < src.dims().size(); ++i) {
    shape += std::to_string(src.dims()[i]);
    if (src.dims().size() == 1 || i + 1 < src.dims().size()) shape += ",";
    if (i + 1 < src.dims().size()) shape += " ";
  }
  shape += ")";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return IoError("cannot write '{}'", path);
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  char lenb[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(lenb, 2);
  f.write(header.data(), header.size());
  f.write(static_cast<const char*>(src.raw()), src.nbytes());
  if (!f) return IoError("writing '{}' failed", path);
  return Status::Ok();
}

}  // namespace edgec
