// Lowering of the epilogue family to standard ops: not written yet.
#include "passes/unfuse.h"

namespace edgec::passes {

StatusOr<bool> UnfuseEpilogue(Graph& g, Node* n) {
  switch (n->op()) {
    default:
      return false;
  }
}

}  // namespace edgec::passes
