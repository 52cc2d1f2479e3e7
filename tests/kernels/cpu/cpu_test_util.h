// Differential testing of the fast CPU kernels against the reference kernels: a case runs
// through the reference (inference + ref kernel) and through cpu::CreateKernel + Run, with
// inputs converted to NHWC when the case asks for it (and outputs converted back), then
// the outputs are compared element by element.
#pragma once

// Cases are written as aggregates that name only the fields they need.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../movement_test_util.h"
#include "kernels/cpu/kernel.h"

namespace edgec::testing_cpu {

using testing_mv::Inputs;

struct FastCase {
  OpKind op;
  Inputs inputs;
  Attributes attrs;
  int num_outputs = 1;
  std::set<int> constants;       // inputs given to the kernel as constants
  bool nhwc = false;             // rank-4 inputs and outputs in NHWC ...
  std::set<int> row_major_inputs;  // ... except these inputs
  bool nhwc_outputs = true;      // with nhwc: outputs too
  int threads = 1;
  cpu::KernelTuning tuning;      // the request's kernel choices
  std::set<int> skip_outputs;    // outputs not requested (dtype kUndefined in the request)
  // Inputs stored as strided buffers: logical axes in this memory order (outermost first),
  // each row of the innermost axis followed by 3 unused elements.
  std::map<int, std::vector<int>> strided_inputs;
  // Outputs written into strided buffers the same way (the gaps start as NaN).
  std::map<int, std::vector<int>> strided_outputs;
};

// `t` stored with its logical axes in memory order `order` and a row pitch 3 elements
// longer than needed; returns the buffer and sets the element strides per logical axis.
inline Tensor StoreStrided(const Tensor& t, const std::vector<int>& order, std::vector<int64_t>* strides) {
  const int rank = t.rank();
  strides->assign(rank, 1);
  int64_t step = 1;
  for (int k = rank - 1; k >= 0; --k) {
    (*strides)[order[k]] = step;
    step *= t.dim(order[k]) + (k == rank - 1 ? 3 : 0);
  }
  Tensor buf(t.dtype(), {std::max<int64_t>(step, 1)});
  const size_t e = DTypeSize(t.dtype());
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += index[d] * (*strides)[d];
    std::memcpy(static_cast<std::byte*>(buf.raw()) + off * e, static_cast<const std::byte*>(t.raw()) + i * e, e);
    for (int d = rank - 1; d >= 0 && ++index[d] == t.dim(d); --d) index[d] = 0;
  }
  return buf;
}

// The logical tensor of `dims` read from a buffer with element `strides` per logical axis.
inline Tensor LoadStrided(const Tensor& buf, const Dims& dims, const std::vector<int64_t>& strides) {
  Tensor t(buf.dtype(), dims);
  const int rank = static_cast<int>(dims.size());
  const size_t e = DTypeSize(buf.dtype());
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t off = 0;
    for (int d = 0; d < rank; ++d) off += index[d] * strides[d];
    std::memcpy(static_cast<std::byte*>(t.raw()) + i * e, static_cast<const std::byte*>(buf.raw()) + off * e, e);
    for (int d = rank - 1; d >= 0 && ++index[d] == dims[d]; --d) index[d] = 0;
  }
  return t;
}

inline Tensor Random(Dims dims, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  Tensor t(DType::kF32, std::move(dims));
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

inline int64_t RandInt(std::mt19937& rng, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// Logical NCHW `t` stored as NHWC (same dims, permuted elements), and back.
inline Tensor ToNhwc(const Tensor& t) {
  Tensor out(t.dtype(), t.dims());
  const int64_t n = t.dim(0), c = t.dim(1), h = t.dim(2), w = t.dim(3);
  const size_t e = DTypeSize(t.dtype());
  const auto* src = static_cast<const std::byte*>(t.raw());
  auto* dst = static_cast<std::byte*>(out.raw());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < c; ++b)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          std::memcpy(dst + (((a * h + y) * w + x) * c + b) * e, src + (((a * c + b) * h + y) * w + x) * e, e);
  return out;
}
inline Tensor FromNhwc(const Tensor& stored) {
  Tensor out(stored.dtype(), stored.dims());
  const int64_t n = stored.dim(0), c = stored.dim(1), h = stored.dim(2), w = stored.dim(3);
  const size_t e = DTypeSize(stored.dtype());
  const auto* src = static_cast<const std::byte*>(stored.raw());
  auto* dst = static_cast<std::byte*>(out.raw());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < c; ++b)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          std::memcpy(dst + (((a * c + b) * h + y) * w + x) * e, src + (((a * h + y) * w + x) * c + b) * e, e);
  return out;
}

struct FastResult {
  std::vector<Tensor> outputs;  // logical row-major
  std::string describe;
};

// The kernel request of a case (output types from inference with every value known).
inline StatusOr<cpu::KernelRequest> RequestOf(const FastCase& c) {
  std::vector<std::optional<testing_mv::InferArg>> args;
  for (const auto& in : c.inputs) {
    if (in) args.push_back(testing_mv::Known(*in));
    else args.push_back(std::nullopt);
  }
  ASSIGN_OR_RETURN(std::vector<TensorType> types, testing_mv::Infer(c.op, args, c.attrs, c.num_outputs));
  cpu::KernelRequest req;
  req.op = c.op;
  req.attrs = &c.attrs;
  req.label = std::string(OpName(c.op)) + " 'node7'";
  req.threads = c.threads;
  req.tuning = c.tuning;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    cpu::TensorDesc d;
    const Tensor* constant = nullptr;
    if (c.inputs[i]) {
      d.dtype = c.inputs[i]->dtype();
      d.dims = c.inputs[i]->dims();
      if (c.nhwc && d.dims.size() == 4 && !c.row_major_inputs.count(static_cast<int>(i))) d.layout = Layout::kNHWC;
      if (c.constants.count(static_cast<int>(i))) constant = &*c.inputs[i];
    } else {
      d.dtype = DType::kUndefined;
    }
    req.inputs.push_back(d);
    req.constants.push_back(constant);
  }
  for (size_t i = 0; i < types.size(); ++i) {
    cpu::TensorDesc d;
    d.dtype = c.skip_outputs.count(static_cast<int>(i)) ? DType::kUndefined : types[i].dtype;
    d.dims = types[i].dims;
    if (c.nhwc && c.nhwc_outputs && d.dims.size() == 4) d.layout = Layout::kNHWC;
    req.outputs.push_back(d);
  }
  return req;
}

// Creates and runs the fast kernel; `in_place` makes output 0 share input `in_place`'s buffer.
inline StatusOr<FastResult> RunFast(const FastCase& c, int in_place = -1) {
  ASSIGN_OR_RETURN(cpu::KernelRequest req, RequestOf(c));
  std::vector<Tensor> in_buffers;
  in_buffers.reserve(c.inputs.size());
  std::vector<const void*> in_ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i]) {
      in_buffers.emplace_back();
      in_ptrs.push_back(nullptr);
      continue;
    }
    if (auto it = c.strided_inputs.find(static_cast<int>(i)); it != c.strided_inputs.end()) {
      in_buffers.push_back(StoreStrided(*c.inputs[i], it->second, &req.inputs[i].strides));
    } else {
      in_buffers.push_back(req.inputs[i].layout == Layout::kNHWC ? ToNhwc(*c.inputs[i]) : c.inputs[i]->Clone());
    }
    in_ptrs.push_back(in_buffers.back().raw());
  }
  std::vector<Tensor> out_buffers;
  std::vector<void*> out_ptrs;
  for (size_t i = 0; i < req.outputs.size(); ++i) {
    const cpu::TensorDesc& d = req.outputs[i];
    if (d.dtype == DType::kUndefined) {
      out_buffers.emplace_back();
      out_ptrs.push_back(nullptr);
      continue;
    }
    Tensor t(d.dtype, d.dims);
    if (d.dtype == DType::kF32) {  // unwritten elements show up as NaN
      for (int64_t e = 0; e < t.numel(); ++e) t.data<float>()[e] = std::nanf("");
    }
    if (auto it = c.strided_outputs.find(static_cast<int>(i)); it != c.strided_outputs.end()) {
      t = StoreStrided(t, it->second, &req.outputs[i].strides);
    }
    out_buffers.push_back(t);
    out_ptrs.push_back(t.raw());
  }
  if (in_place >= 0) out_ptrs[0] = const_cast<void*>(in_ptrs[in_place]);
  ASSIGN_OR_RETURN(std::unique_ptr<cpu::Kernel> k, cpu::CreateKernel(req));
  Tensor scratch;
  if (k->scratch_bytes()) scratch = Tensor(DType::kU8, {static_cast<int64_t>(k->scratch_bytes())});
  RETURN_IF_ERROR(k->Run(in_ptrs, out_ptrs, scratch.defined() ? scratch.raw() : nullptr));
  FastResult r;
  r.describe = k->Describe();
  for (size_t i = 0; i < out_buffers.size(); ++i) {
    if (!out_buffers[i].defined()) {
      r.outputs.emplace_back();
      continue;
    }
    Tensor t = out_buffers[i];
    if (i == 0 && in_place >= 0) t = in_buffers[in_place].Clone();
    if (!req.outputs[i].strides.empty()) {
      r.outputs.push_back(LoadStrided(t, req.outputs[i].dims, req.outputs[i].strides));
      continue;
    }
    r.outputs.push_back(req.outputs[i].layout == Layout::kNHWC ? FromNhwc(t) : t);
  }
  return r;
}

// |got - want| <= atol + rtol * |want| for every element (NaN matches NaN, inf matches inf).
inline ::testing::AssertionResult Close(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.dims() != want.dims() || got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure() << "got " << got.TypeString() << ", want " << want.TypeString();
  }
  const std::vector<double> g = got.ToDoubleVector(), w = want.ToDoubleVector();
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    bool ok;
    if (std::isnan(w[i])) ok = std::isnan(g[i]);
    else if (std::isinf(w[i])) ok = g[i] == w[i];
    else ok = std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]);
    if (!ok) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++bad;
      if (!std::isnan(g[i])) worst = std::max(worst, std::fabs(g[i] - w[i]));
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << g.size() << " elements differ; first at " << first
                                       << ": got " << g[first] << ", want " << w[first] << "; worst |diff| "
                                       << worst;
}

// Runs the case on both paths and compares every requested output. Returns the fast
// kernel's description ("" when it failed).
inline std::string ExpectMatchesRef(const FastCase& c, double rtol, double atol, const std::string& what = "") {
  auto ref = testing_mv::RunOp(c.op, c.inputs, c.attrs, c.num_outputs);
  EXPECT_TRUE(ref.ok()) << what << ": reference failed: " << ref.status().ToString();
  if (!ref.ok()) return "";
  auto fast = RunFast(c);
  EXPECT_TRUE(fast.ok()) << what << ": fast kernel failed: " << fast.status().ToString();
  if (!fast.ok()) return "";
  for (size_t i = 0; i < ref->size(); ++i) {
    if (c.skip_outputs.count(static_cast<int>(i))) continue;
    EXPECT_TRUE(Close(fast->outputs[i], (*ref)[i], rtol, atol))
        << what << " output " << i << " [" << fast->describe << "]";
  }
  return fast->describe;
}

// The refusal message of a case ("" when a kernel was created).
inline std::string RefusalOf(const FastCase& c) {
  auto req = RequestOf(c);
  if (!req.ok()) return "request: " + req.status().message();
  for (const auto& [i, order] : c.strided_inputs) StoreStrided(*c.inputs[i], order, &req->inputs[i].strides);
  auto k = cpu::CreateKernel(*req);
  return k.ok() ? std::string() : k.status().message();
}

inline std::string DimsStr(const Dims& d) { return DimsToString(d); }

inline std::string AttrsStr(const Attributes& a) {
  std::string s;
  for (const auto& [k, v] : a.map()) s += (s.empty() ? "" : " ") + k + "=" + AttrValueToString(v);
  return "{" + s + "}";
}

// Runs body() once with each vector ISA the CPU has (AVX-512, AVX2, scalar).
template <class Body>
void ForEachIsa(Body body) {
  for (std::string_view isa : cpu::VectorIsas()) {
    cpu::CapVectorIsa(isa);
    SCOPED_TRACE(std::string("isa ") + std::string(cpu::VectorIsa()));
    body();
  }
  cpu::CapVectorIsa("");
}

}  // namespace edgec::testing_cpu
