// edgec::CompareLayers (include/edgec/compare.h) over quant/layer_compare.h.
#include "edgec/compare.h"

#include "api/convert.h"
#include "api/impl.h"
#include "quant/layer_compare.h"
#include "support/status.h"

namespace edgec {
inline namespace v1 {

StatusOr<LayerComparison> CompareLayers(const Model& a, const Model& b, const std::map<std::string, TensorView>& inputs,
                                        double jump_db) {
  std::map<std::string, Tensor> in;
  for (const auto& [name, v] : inputs) in.emplace(name, api::BorrowTensor(v));
  ASSIGN_OR_RETURN(quant::LayerComparison c, quant::CompareLayers(a.impl().graph, b.impl().graph, in, jump_db));
  LayerComparison r;
  r.first_jump = c.first_jump;
  for (const quant::LayerError& l : c.layers)
    r.layers.push_back({l.source, l.a_value, l.b_value, l.b_op, l.elements, l.max_abs, l.cosine, l.sqnr_db, l.jump});
  return r;
}

}  // namespace v1
}  // namespace edgec
