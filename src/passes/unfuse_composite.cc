// Lowering of the composite family to standard ops: not written yet.
#include "passes/unfuse.h"

namespace edgec::passes {

StatusOr<bool> UnfuseComposite(Graph& g, Node* n) {
  switch (n->op()) {
    default:
      return false;
  }
}

}  // namespace edgec::passes
