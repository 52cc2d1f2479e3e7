#include "ir/physical_layout.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace edgec {

bool IsRelayout(const Node& n) {
  return n.op() == OpKind::kTranspose && n.attrs.GetInt(std::string(kRelayoutAttr), 0) != 0;
}

bool SamePlacement(const PhysicalLayout& a, const PhysicalLayout& b) {
  return a.layout == b.layout && a.padded_dims == b.padded_dims && a.strides == b.strides;
}

Strides RowMajorStrides(const Dims& dims) {
  Strides s(dims.size(), 1);
  // Saturates instead of overflowing: a shape past int64 elements is refused later, by name.
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    if (__builtin_mul_overflow(s[i + 1], std::max<int64_t>(dims[i + 1], 1), &s[i]))
      s[i] = std::numeric_limits<int64_t>::max();
  }
  return s;
}

std::optional<Strides> LogicalStrides(const TensorType& type, const PhysicalLayout& p) {
  if (!type.IsStatic()) return std::nullopt;
  const Dims& dims = type.dims;
  switch (p.layout) {
    case Layout::kRowMajor: {
      const Dims& pd = p.padded_dims.empty() ? dims : p.padded_dims;
      if (pd.size() != dims.size()) return std::nullopt;
      if (!p.strides.empty()) {
        if (p.strides.size() != dims.size()) return std::nullopt;
        return p.strides;
      }
      return RowMajorStrides(pd);
    }
    case Layout::kNHWC: {
      if (dims.size() != 4) return std::nullopt;
      Dims pd = p.padded_dims.empty() ? Dims{dims[0], dims[2], dims[3], dims[1]} : p.padded_dims;
      if (pd.size() != 4) return std::nullopt;
      Strides ps = p.strides.empty() ? RowMajorStrides(pd) : p.strides;
      if (ps.size() != 4) return std::nullopt;
      return Strides{ps[0], ps[3], ps[1], ps[2]};
    }
    case Layout::kNC16HW16:
      return std::nullopt;
  }
  return std::nullopt;
}

bool IsDenseRowMajor(const Dims& dims, const Strides& strides) {
  if (dims.size() != strides.size()) return false;
  int64_t expected = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    if (dims[i] == 0) return true;  // no elements: any strides address nothing
    if (dims[i] == 1) continue;
    if (strides[i] != expected) return false;
    // Saturates as RowMajorStrides does: a shape past int64 elements is refused later, by name.
    if (__builtin_mul_overflow(expected, dims[i], &expected))
      expected = std::numeric_limits<int64_t>::max();
  }
  return true;
}

bool IsDenseRowMajor(const Value& v) {
  const PhysicalLayout& p = v.physical;
  if (p.layout == Layout::kRowMajor && p.padded_dims.empty() && p.strides.empty()) return true;
  auto s = LogicalStrides(v);
  return s && IsDenseRowMajor(v.type.dims, *s);
}

bool IsDenseInSomeOrder(const Dims& dims, const Strides& strides) {
  if (dims.size() != strides.size()) return false;
  std::vector<int> axes;
  for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
    if (dims[i] == 0) return true;
    if (dims[i] != 1) axes.push_back(i);
  }
  std::stable_sort(axes.begin(), axes.end(), [&](int a, int b) { return strides[a] > strides[b]; });
  int64_t expected = 1;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    if (strides[*it] != expected) return false;
    if (__builtin_mul_overflow(expected, dims[*it], &expected))
      expected = std::numeric_limits<int64_t>::max();
  }
  return true;
}

std::optional<Strides> ReshapeStrides(const Dims& in_dims, const Strides& in_strides,
                                      const Dims& out_dims) {
  if (in_dims.size() != in_strides.size()) return std::nullopt;
  int64_t in_numel = 1, out_numel = 1;
  for (int64_t d : in_dims) in_numel *= d;
  for (int64_t d : out_dims) out_numel *= d;
  if (in_numel != out_numel) return std::nullopt;
  if (in_numel == 0) return RowMajorStrides(out_dims);
  // Size-1 input axes address nothing: drop them.
  Dims od;
  Strides os;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    if (in_dims[i] != 1) {
      od.push_back(in_dims[i]);
      os.push_back(in_strides[i]);
    }
  }
  const int nout = static_cast<int>(out_dims.size());
  Strides ns(nout, 0);
  std::vector<bool> assigned(nout, false);
  size_t oi = 0;
  int ni = 0;
  // Match runs of input axes with runs of output axes of equal product; a run of input
  // axes must be contiguous among itself to be regrouped.
  while (oi < od.size()) {
    while (ni < nout && out_dims[ni] == 1) ++ni;
    if (ni >= nout) return std::nullopt;
    size_t oj = oi + 1;
    int nj = ni + 1;
    int64_t op = od[oi], np = out_dims[ni];
    while (op != np) {
      if (op < np) {
        if (oj >= od.size()) return std::nullopt;
        op *= od[oj++];
      } else {
        if (nj >= nout) return std::nullopt;
        np *= out_dims[nj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k) {
      if (os[k] != os[k + 1] * od[k + 1]) return std::nullopt;
    }
    ns[nj - 1] = os[oj - 1];
    assigned[nj - 1] = true;
    for (int k = nj - 1; k > ni; --k) {
      ns[k - 1] = ns[k] * out_dims[k];
      assigned[k - 1] = true;
    }
    oi = oj;
    ni = nj;
  }
  // Remaining (size-1) output axes: any stride; use the one a row-major array would have.
  for (int k = nout - 1; k >= 0; --k) {
    if (!assigned[k]) ns[k] = k + 1 < nout ? ns[k + 1] * out_dims[k + 1] : 1;
  }
  return ns;
}

Strides TransposeStrides(const Strides& in_strides, const std::vector<int64_t>& perm) {
  Strides s(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) s[i] = in_strides[perm[i]];
  return s;
}

PhysicalLayout StridedLayout(const Dims& dims, const Strides& strides, bool is_view) {
  PhysicalLayout p;
  p.is_view = is_view;
  if (!IsDenseRowMajor(dims, strides)) {
    p.padded_dims = dims;
    p.strides = strides;
  }
  return p;
}

PhysicalLayout NhwcLayout(const Dims& nchw, int64_t channel_multiple) {
  PhysicalLayout p;
  p.layout = Layout::kNHWC;
  int64_t m = std::max<int64_t>(channel_multiple, 1);
  int64_t c = (nchw[1] + m - 1) / m * m;
  p.padded_dims = {nchw[0], nchw[2], nchw[3], c};
  return p;
}

std::string PhysicalToString(const Value& v) {
  const PhysicalLayout& p = v.physical;
  std::string s;
  if (p.layout == Layout::kRowMajor && p.strides.empty() && p.padded_dims.empty()) {
    s = "row-major";
  } else if (p.layout == Layout::kRowMajor && !p.strides.empty()) {
    s = "strided " + DimsToString(p.strides);
  } else {
    s = std::string(LayoutName(p.layout));
    if (!p.padded_dims.empty()) s += " " + DimsToString(p.padded_dims);
    if (!p.strides.empty()) s += " strides " + DimsToString(p.strides);
  }
  if (p.is_view) s += " view";
  return s;
}

}  // namespace edgec
