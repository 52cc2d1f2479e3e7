#include "ir/attributes.h"

namespace edgec {

bool Attributes::operator==(const Attributes& o) const {
  if (map_.size() != o.map_.size()) return false;
  for (auto& [k, v] : map_) {
    auto it = o.map_.find(k);
    if (it == o.map_.end() || it->second.index() != v.index()) return false;
    if (auto* t = std::get_if<Tensor>(&v)) {
      const Tensor& u = std::get<Tensor>(it->second);
      if (t->dtype() != u.dtype() || t->dims() != u.dims() ||
          std::memcmp(t->raw(), u.raw(), t->nbytes()) != 0) {
        return false;
      }
    } else {
      bool same = std::visit(
          [&](const auto& x) -> bool {
            using X = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<X, Tensor>) {
              return false;  // handled above
            } else {
              return x == std::get<X>(it->second);
            }
          },
          v);
      if (!same) return false;
    }
  }
  return true;
}

namespace {
template <typename T>
std::string JoinList(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    if constexpr (std::is_same_v<T, std::string>) {
      s += "\"" + v[i] + "\"";
    } else {
      s += fmt::format("{}", v[i]);
    }
  }
  return s + "]";
}
}  // namespace

std::string AttrValueToString(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, int64_t> || std::is_same_v<X, float>) {
          return fmt::format("{}", x);
        } else if constexpr (std::is_same_v<X, std::string>) {
          return "\"" + x + "\"";
        } else if constexpr (std::is_same_v<X, Tensor>) {
          return "tensor " + x.TypeString();
        } else if constexpr (std::is_same_v<X, SubgraphPtr>) {
          // The address tells two subgraphs apart (cse keys nodes by this text).
          return fmt::format("graph@{}", static_cast<const void*>(x.get()));
        } else {
          return JoinList(x);
        }
      },
      v);
}

std::optional<Tensor> ConstantAttributeValue(const Attributes& a) {
  if (a.Has("value")) return a.GetTensor("value");
  if (a.Has("value_float")) return Tensor::Scalar(a.GetFloat("value_float"));
  if (a.Has("value_floats")) {
    std::vector<float> v = a.GetFloats("value_floats");
    return Tensor::FromVector<float>(DType::kF32, {static_cast<int64_t>(v.size())}, v);
  }
  if (a.Has("value_int")) return Tensor::ScalarI64(a.GetInt("value_int"));
  if (a.Has("value_ints")) return Tensor::VectorI64(a.GetInts("value_ints"));
  return std::nullopt;
}

}  // namespace edgec
