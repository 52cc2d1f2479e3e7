#include "runtime/plan_view_offset.h"

#include <optional>

#include "ir/infer_movement_util.h"
#include "ir/physical_layout.h"

namespace edgec {

// The Slice starts and the Split position (through the input's strides); 0 for reshape-likes,
// transposes, layout conversions that keep the placement, folded Pads and in-place Concats.
StatusOr<int64_t> ViewOffset(const Node& n, int output) {
  const Value* x = n.input(0);
  auto strides = LogicalStrides(*x);
  switch (n.op()) {
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
    case OpKind::kIdentity: case OpKind::kTranspose: case OpKind::kDropout: case OpKind::kPad:
    case OpKind::kConcat:
      return 0;
    case OpKind::kSplit: {
      if (!strides) break;
      const int rank = x->type.rank();
      int64_t axis = n.attrs.GetInt("axis", 0);
      if (axis < 0) axis += rank;
      int64_t start = 0;
      for (int i = 0; i < output; ++i) start += n.output(i)->type.dims[axis];
      return start * (*strides)[axis];
    }
    case OpKind::kSlice: {
      if (!strides) break;
      const int rank = x->type.rank();
      auto ints = [&](int i) -> std::optional<std::vector<int64_t>> {
        const Value* v = n.input(i);
        if (!v) return std::nullopt;
        if (!v->is_constant()) return std::vector<int64_t>{};
        return v->constant().ToInt64Vector();
      };
      auto starts = ints(1), ends = ints(2), axes = ints(3), steps = ints(4);
      if (!starts || !ends || starts->size() != ends->size() || (axes && axes->size() != starts->size()) ||
          (steps && steps->size() != starts->size()) || (n.input(1) && !n.input(1)->is_constant())) {
        break;
      }
      int64_t offset = 0;
      for (size_t i = 0; i < starts->size(); ++i) {
        int64_t a = axes ? (*axes)[i] : static_cast<int64_t>(i);
        if (a < 0) a += rank;
        const int64_t step = steps ? (*steps)[i] : 1;
        if (a < 0 || a >= rank || step <= 0) break;
        infer::SliceAxisRange r = infer::ClampSliceAxis(x->type.dims[a], (*starts)[i], (*ends)[i], step);
        if (r.length > 0) offset += r.start * (*strides)[a];
      }
      return offset;
    }
    default:
      break;
  }
  return Internal("{} is marked a view but the executor cannot place it", n.Label());
}


}  // namespace edgec
