#include "ir/cost.h"

#include <limits>
#include <set>

#include "ir/physical_layout.h"

namespace edgec {
namespace {

bool Known(const Value* v) { return v && v->type.IsStatic(); }

// Conv-like: out [N, Cout, spatial...], weight [Cout, Cin/g, k...].
int64_t ConvMacs(const Value* w, const Value* y) {
  if (!Known(w) || !Known(y)) return -1;
  int64_t macs = NumElements(y->type.dims);  // N * Cout * spatial
  for (size_t i = 1; i < w->type.dims.size(); ++i) macs *= w->type.dims[i];
  return macs;
}

// ConvTranspose: input [N, Cin, spatial...], weight [Cin, Cout/g, k...].
int64_t ConvTransposeMacs(const Value* x, const Value* w) {
  if (!Known(x) || !Known(w)) return -1;
  int64_t macs = NumElements(x->type.dims);
  for (size_t i = 1; i < w->type.dims.size(); ++i) macs *= w->type.dims[i];
  return macs;
}

// MatMul-like: output elements times the reduced dim K (a's last dim).
int64_t MatMulMacs(const Value* a, const Value* y) {
  if (!Known(a) || !Known(y) || a->type.dims.empty()) return -1;
  return NumElements(y->type.dims) * a->type.dims.back();
}

int64_t EinsumMacs(const Node& n) {
  // Product of the sizes of all distinct letters: every index combination is one MAC.
  std::string eq = n.attrs.GetString("equation");
  auto arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  if (lhs.find("...") != std::string::npos) return -1;
  std::map<char, int64_t> size;
  size_t term = 0, pos = 0;
  for (size_t i = 0; i <= lhs.size(); ++i) {
    if (i == lhs.size() || lhs[i] == ',') {
      const Value* v = n.input(static_cast<int>(term));
      if (!Known(v)) return -1;
      std::string letters;
      for (size_t j = pos; j < i; ++j) {
        if (std::isalpha(static_cast<unsigned char>(lhs[j]))) letters += lhs[j];
      }
      if (letters.size() != v->type.dims.size()) return -1;
      for (size_t j = 0; j < letters.size(); ++j) size[letters[j]] = v->type.dims[j];
      ++term;
      pos = i + 1;
    }
  }
  int64_t macs = 1;
  for (auto& [c, s] : size) macs *= s;
  return term >= 2 ? macs : 0;
}

}  // namespace

int64_t NodeMacs(const Node& n) {
  switch (n.op()) {
    case OpKind::kConv: case OpKind::kConvInteger: case OpKind::kFusedConv:
      return ConvMacs(n.input(1), n.output(0));
    case OpKind::kQLinearConv: return ConvMacs(n.input(3), n.output(0));
    case OpKind::kConvTranspose: return ConvTransposeMacs(n.input(0), n.input(1));
    case OpKind::kGemm: {
      const Value* a = n.input(0);
      if (!Known(a) || !Known(n.output(0)) || a->type.rank() != 2) return -1;
      int64_t k = n.attrs.GetInt("transA", 0) ? a->type.dims[0] : a->type.dims[1];
      return NumElements(n.output(0)->type.dims) * k;
    }
    case OpKind::kMatMul: case OpKind::kMatMulInteger: case OpKind::kQLinearMatMul:
      return MatMulMacs(n.input(0), n.output(0));
    case OpKind::kFusedMatMul: {
      const Value* a = n.input(0);
      if (!Known(a) || !Known(n.output(0)) || a->type.dims.empty()) return -1;
      const size_t r = a->type.dims.size();
      const bool trans_a = n.attrs.GetInt("transA", 0) != 0 && r >= 2;
      return NumElements(n.output(0)->type.dims) * (trans_a ? a->type.dims[r - 2] : a->type.dims[r - 1]);
    }
    case OpKind::kEinsum: return EinsumMacs(n);
    default: return 0;
  }
}

int64_t NodeCopyBytes(const Node& n) {
  const Value* y = n.output(0);
  bool copies = false;
  switch (n.op()) {
    case OpKind::kTranspose: case OpKind::kConcat: case OpKind::kPad: case OpKind::kCast:
      copies = true;
      break;
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
      // A reshape reinterprets dense row-major memory; any other placement (NHWC with C > 1
      // and H·W > 1, padding, a strided view) must be gathered into a new buffer. Size-1
      // axes do not count: NHWC [N, C, 1, 1] is dense row-major.
      copies = n.input(0) && !IsDenseRowMajor(*n.input(0));
      break;
    default:
      break;
  }
  if (!copies || y->physical.is_view) return 0;
  if (!y->type.IsStatic()) return -1;
  // Inferred shapes are not capped (only tensors that get created are): a byte count past
  // int64 saturates. fuzz_onnx_import found the overflow (tests/fuzz/make_regressions.py).
  const auto bytes = CheckedNumElements(y->type.dims, DTypeSize(y->type.dtype));
  if (!bytes.ok()) return std::numeric_limits<int64_t>::max();
  return *bytes * static_cast<int64_t>(DTypeSize(y->type.dtype));
}

int64_t GraphCopyBytes(const Graph& g, bool* unknown) {
  int64_t total = 0;
  if (unknown) *unknown = false;
  for (const Node* n : g.nodes()) {
    int64_t b = NodeCopyBytes(*n);
    if (b < 0) {
      if (unknown) *unknown = true;
    } else {
      total = b > std::numeric_limits<int64_t>::max() - total ? std::numeric_limits<int64_t>::max() : total + b;
    }
  }
  return total;
}

}  // namespace edgec
