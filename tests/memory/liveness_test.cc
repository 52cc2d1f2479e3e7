#include "memory/liveness.h"

#include <gtest/gtest.h>

#include "ir/infer.h"

namespace edgec::memory {
namespace {

// Small graphs with types set by hand, so the tests do not depend on shape inference.
struct Builder {
  Graph g;
  Value* Input(const std::string& name, Dims dims, DType dt = DType::kF32) {
    return g.AddInput(name, MakeType(dt, std::move(dims)));
  }
  Value* Op(OpKind op, std::vector<Value*> inputs, Dims dims, DType dt = DType::kF32) {
    Node* n = g.AddNode(op, "", std::move(inputs), 1);
    n->output(0)->type = MakeType(dt, std::move(dims));
    return n->output(0);
  }
  Value* Shape(std::vector<int64_t> dims) { return g.AddConstant("", Tensor::VectorI64(dims)); }
};

StatusOr<MemoryPlan> Plan(const Graph& g, bool in_place = true) {
  PlanOptions o;
  o.in_place = in_place;
  return PlanMemory(g, {}, o);
}

const ValueMemory& M(const MemoryPlan& p, const Value* v) {
  const ValueMemory* m = p.Find(v);
  EXPECT_NE(m, nullptr) << v->name();
  static ValueMemory none;
  return m ? *m : none;
}

const Buffer& B(const MemoryPlan& p, const Value* v) { return p.buffers[M(p, v).buffer]; }

// Buffers live at a common step never overlap in the arena.
void ExpectNoOverlap(const MemoryPlan& p) {
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const Buffer &a = p.buffers[i], &b = p.buffers[j];
      if (!LiveRangesIntersect(a.request, b.request)) continue;
      bool apart = a.offset + AlignUp(a.request.bytes) <= b.offset ||
                   b.offset + AlignUp(b.request.bytes) <= a.offset;
      EXPECT_TRUE(apart) << a.owner->name() << " and " << b.owner->name();
    }
  }
}

// x -> Relu a -> Relu b -> Relu c (output). x is a graph input: never overwritten. b takes
// a's buffer (a dies at b's step), c takes it again.
TEST(Liveness, ChainRunsInPlaceAfterTheGraphInput) {
  Builder t;
  Value* x = t.Input("x", {2, 8});
  Value* a = t.Op(OpKind::kRelu, {x}, {2, 8});
  Value* b = t.Op(OpKind::kRelu, {a}, {2, 8});
  Value* c = t.Op(OpKind::kRelu, {b}, {2, 8});
  t.g.MarkOutput(c);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->num_steps, 3);
  EXPECT_EQ(p->buffers.size(), 2u);
  EXPECT_EQ(p->in_place_count, 2);
  EXPECT_EQ(M(*p, a).placement, Placement::kOwn);
  EXPECT_EQ(M(*p, b).placement, Placement::kInPlace);
  EXPECT_EQ(M(*p, b).shares_input, 0);
  EXPECT_EQ(M(*p, c).buffer, M(*p, a).buffer);
  EXPECT_NE(M(*p, x).buffer, M(*p, a).buffer);
  // graph input: live from step 0 to its last reader (step 0)
  EXPECT_EQ(B(*p, x).request.first_use, 0);
  EXPECT_EQ(B(*p, x).request.last_use, 0);
  // the chain buffer: from a's step to the end (c is an output)
  EXPECT_EQ(B(*p, a).request.first_use, 0);
  EXPECT_EQ(B(*p, a).request.last_use, 2);
  EXPECT_EQ(M(*p, c).bytes, 64);
  EXPECT_EQ(p->arena_bytes, 128);  // x and a live together at step 0
  EXPECT_EQ(p->lower_bound, 128);
  EXPECT_EQ(p->naive_bytes, 128);
  ExpectNoOverlap(*p);

  auto q = Plan(t.g, /*in_place=*/false);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->buffers.size(), 4u);
  EXPECT_EQ(q->in_place_count, 0);
  EXPECT_EQ(q->naive_bytes, 4 * 64);
  EXPECT_EQ(q->lower_bound, 128);
  EXPECT_EQ(q->arena_bytes, 128);  // a and c can share: ping-pong
  ExpectNoOverlap(*q);
}

// a is read again after b: b cannot overwrite it. Add(a, b) is a's last read: it takes a.
TEST(Liveness, InPlaceOnlyWhenTheInputDies) {
  Builder t;
  Value* x = t.Input("x", {16});
  Value* a = t.Op(OpKind::kExp, {x}, {16});
  Value* b = t.Op(OpKind::kRelu, {a}, {16});
  Value* c = t.Op(OpKind::kAdd, {a, b}, {16});
  t.g.MarkOutput(c);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(M(*p, b).placement, Placement::kOwn);
  EXPECT_EQ(M(*p, c).placement, Placement::kInPlace);
  EXPECT_EQ(M(*p, c).shares_input, 0);
  EXPECT_EQ(M(*p, c).buffer, M(*p, a).buffer);
  EXPECT_EQ(p->in_place_count, 1);
  ExpectNoOverlap(*p);
}

// The second input is the one that dies: it is taken.
TEST(Liveness, InPlaceTakesWhicheverInputDies) {
  Builder t;
  Value* x = t.Input("x", {16});
  Value* a = t.Op(OpKind::kExp, {x}, {16});
  Value* b = t.Op(OpKind::kNeg, {x}, {16});
  Value* c = t.Op(OpKind::kMul, {a, b}, {16});  // a is still read by d
  Value* d = t.Op(OpKind::kSub, {c, a}, {16});
  t.g.MarkOutput(d);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(M(*p, c).placement, Placement::kInPlace);
  EXPECT_EQ(M(*p, c).shares_input, 1);
  EXPECT_EQ(M(*p, c).buffer, M(*p, b).buffer);
  EXPECT_EQ(M(*p, d).placement, Placement::kInPlace);
  EXPECT_EQ(M(*p, d).shares_input, 0);
  ExpectNoOverlap(*p);
}

// A broadcast input is not element-for-element the output: only the full-shape input
// may be overwritten. Non-elementwise ops (MatMul) never run in place.
TEST(Liveness, InPlaceNeedsTheOutputsShapeAndDType) {
  Builder t;
  Value* x = t.Input("x", {4});
  Value* y = t.Input("y", {2, 4});
  Value* a = t.Op(OpKind::kExp, {x}, {4});
  Value* b = t.Op(OpKind::kExp, {y}, {2, 4});
  Value* c = t.Op(OpKind::kAdd, {a, b}, {2, 4});
  Value* d = t.Op(OpKind::kLess, {c, c}, {2, 4}, DType::kBool);  // bool out: not into f32
  Value* e = t.Op(OpKind::kNot, {d}, {2, 4}, DType::kBool);
  Value* f = t.Op(OpKind::kMatMul, {t.Op(OpKind::kExp, {y}, {2, 4}), t.Input("w", {4, 4})}, {2, 4});
  t.g.MarkOutput(e);
  t.g.MarkOutput(f);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(M(*p, c).placement, Placement::kInPlace);
  EXPECT_EQ(M(*p, c).shares_input, 1);
  EXPECT_EQ(M(*p, d).placement, Placement::kOwn);
  EXPECT_EQ(M(*p, e).placement, Placement::kInPlace);
  EXPECT_EQ(M(*p, f).placement, Placement::kOwn);
  ExpectNoOverlap(*p);
}

// Reshape of a contiguous value is a view: same buffer, the buffer lives until the view's
// last reader. Through the view the input is still live, so no in-place on it before.
TEST(Liveness, ViewsShareTheBufferAndExtendItsLife) {
  Builder t;
  Value* x = t.Input("x", {2, 3, 4});
  Value* a = t.Op(OpKind::kRelu, {x}, {2, 3, 4});                 // step 0
  Value* r = t.Op(OpKind::kReshape, {a, t.Shape({6, 4})}, {6, 4});  // step 1
  Value* b = t.Op(OpKind::kNeg, {a}, {2, 3, 4});                  // step 2: r still read
  Value* c = t.Op(OpKind::kAbs, {r}, {6, 4});                     // step 3: last read
  Value* s = t.Op(OpKind::kSqueeze, {c}, {6, 4});                 // step 4
  Value* u = t.Op(OpKind::kUnsqueeze, {b}, {1, 2, 3, 4});         // step 5
  t.g.MarkOutput(s);
  t.g.MarkOutput(u);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(M(*p, r).placement, Placement::kView);
  EXPECT_EQ(M(*p, r).buffer, M(*p, a).buffer);
  EXPECT_EQ(M(*p, r).offset, M(*p, a).offset);
  EXPECT_EQ(M(*p, b).placement, Placement::kOwn);  // a's buffer is read at step 3 through r
  EXPECT_EQ(M(*p, c).placement, Placement::kInPlace);
  EXPECT_EQ(M(*p, c).buffer, M(*p, a).buffer);
  EXPECT_EQ(M(*p, s).placement, Placement::kView);
  EXPECT_EQ(M(*p, u).placement, Placement::kView);
  EXPECT_EQ(M(*p, u).buffer, M(*p, b).buffer);
  EXPECT_EQ(p->view_count, 3);
  EXPECT_EQ(p->in_place_count, 1);
  EXPECT_EQ(B(*p, a).request.last_use, 5);  // holds the graph output s
  EXPECT_TRUE(B(*p, a).holds_graph_output);
  EXPECT_EQ(B(*p, a).members.size(), 4u);  // a, r, c, s
  ExpectNoOverlap(*p);
}

// A value the optimizer marked as a view (a transpose by strides, say) shares input 0's
// buffer whatever the op; a reshape of a non-row-major value is a copy.
TEST(Liveness, PhysicalIsViewAndLayoutsDecideViews) {
  Builder t;
  Value* x = t.Input("x", {2, 3});
  Value* a = t.Op(OpKind::kRelu, {x}, {2, 3});
  Value* tr = t.Op(OpKind::kTranspose, {a}, {3, 2});
  tr->physical.is_view = true;
  tr->physical.padded_dims = {3, 2};
  tr->physical.strides = {1, 3};
  Value* xr = t.Op(OpKind::kReshape, {x, t.Shape({1, 2, 3, 1})}, {1, 2, 3, 1});
  Value* e = t.Op(OpKind::kExp, {x}, {2, 3});
  Value* n4 = t.Op(OpKind::kReshape, {e, t.Shape({1, 2, 3, 1})}, {1, 2, 3, 1});
  Value* h = t.Op(OpKind::kRelu, {n4}, {1, 2, 3, 1});  // n4 dies here
  h->physical.layout = Layout::kNHWC;
  h->physical.padded_dims = {1, 3, 1, 16};  // channels padded 2 -> 16
  Value* hr = t.Op(OpKind::kReshape, {h, t.Shape({6})}, {6});
  t.g.MarkOutput(tr);
  t.g.MarkOutput(xr);
  t.g.MarkOutput(hr);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(M(*p, tr).placement, Placement::kView);
  EXPECT_EQ(M(*p, tr).buffer, M(*p, a).buffer);
  EXPECT_EQ(M(*p, tr).bytes, 24);  // (2*1 + 1*3 + 1) elements * 4
  EXPECT_EQ(M(*p, xr).placement, Placement::kView);  // a view of a graph input
  EXPECT_EQ(M(*p, xr).buffer, M(*p, x).buffer);
  EXPECT_EQ(M(*p, n4).placement, Placement::kView);
  EXPECT_EQ(M(*p, h).bytes, 3 * 16 * 4);  // physical, padded
  EXPECT_EQ(M(*p, h).placement, Placement::kOwn);  // row-major -> NHWC: not in place
  EXPECT_EQ(M(*p, hr).placement, Placement::kOwn);  // NHWC -> row-major is a copy
  ExpectNoOverlap(*p);
}

// A Concat the views pass marked in place: its buffer is made when its first input is
// produced, each input is written into its slot, and the Concat output is a view.
TEST(Liveness, ConcatInPlaceWritesInputsIntoSlots) {
  Builder t;
  Value* x = t.Input("x", {1, 4});
  Value* a = t.Op(OpKind::kExp, {x}, {1, 2, 4});   // step 0
  Value* u = t.Op(OpKind::kAbs, {x}, {1, 4});      // step 1: unrelated
  Value* b = t.Op(OpKind::kNeg, {x}, {1, 3, 4});   // step 2
  Node* cat = t.g.AddNode(OpKind::kConcat, "cat", {a, b}, 1);
  cat->attrs.Set("axis", int64_t{1});
  Value* c = cat->output(0);
  c->type = MakeType(DType::kF32, {1, 5, 4});
  c->physical.is_view = true;
  Value* d = t.Op(OpKind::kRelu, {c}, {1, 5, 4});
  t.g.MarkOutput(d);
  t.g.MarkOutput(u);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->concat_in_place_count, 1);
  EXPECT_EQ(M(*p, a).placement, Placement::kConcatInput);
  EXPECT_EQ(M(*p, b).placement, Placement::kConcatInput);
  EXPECT_EQ(M(*p, c).placement, Placement::kView);
  EXPECT_EQ(M(*p, a).buffer, M(*p, c).buffer);
  EXPECT_EQ(M(*p, b).buffer, M(*p, c).buffer);
  EXPECT_EQ(M(*p, a).offset_in_buffer, 0);
  EXPECT_EQ(M(*p, b).offset_in_buffer, 2 * 4 * 4);
  EXPECT_EQ(M(*p, b).offset, M(*p, c).offset + 32);
  EXPECT_EQ(M(*p, a).offset, M(*p, c).offset);
  const Buffer& buf = B(*p, c);
  EXPECT_EQ(buf.owner, c);
  EXPECT_EQ(buf.request.bytes, 5 * 4 * 4);
  EXPECT_EQ(buf.request.first_use, 0);  // from a's step
  EXPECT_EQ(buf.request.last_use, 4);   // d reads c (and d runs in place in it)
  EXPECT_EQ(M(*p, d).placement, Placement::kInPlace);
  EXPECT_NE(M(*p, u).buffer, M(*p, c).buffer);
  ExpectNoOverlap(*p);
}

// A mark that does not hold (the concatenation axis is not the outermost non-1 one, or an
// input is a graph input) is planned as a copy.
TEST(Liveness, ConcatMarkedInPlaceButNotPossibleIsACopy) {
  for (int variant = 0; variant < 2; ++variant) {
    Builder t;
    Value* x = t.Input("x", {2, 4});
    Value* a = variant == 0 ? t.Op(OpKind::kExp, {x}, {2, 4}) : x;
    Value* b = t.Op(OpKind::kNeg, {x}, {2, 4});
    Node* cat = t.g.AddNode(OpKind::kConcat, "cat", {a, b}, 1);
    cat->attrs.Set("axis", int64_t{variant == 0 ? 1 : 0});
    Value* c = cat->output(0);
    c->type = MakeType(DType::kF32, variant == 0 ? Dims{2, 8} : Dims{4, 4});
    c->physical.is_view = true;
    t.g.MarkOutput(c);
    auto p = Plan(t.g);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->concat_in_place_count, 0) << variant;
    EXPECT_EQ(M(*p, c).placement, Placement::kOwn) << variant;
    EXPECT_EQ(M(*p, b).placement, Placement::kOwn) << variant;
    EXPECT_NE(M(*p, b).buffer, M(*p, c).buffer) << variant;
    ExpectNoOverlap(*p);
  }
}

// Graph outputs are never overwritten, even at their last reader; nor is a graph input.
TEST(Liveness, GraphOutputsAndInputsAreNeverReused) {
  Builder t;
  Value* x = t.Input("x", {32});
  Value* a = t.Op(OpKind::kRelu, {x}, {32});
  Value* b = t.Op(OpKind::kSigmoid, {a}, {32});  // a's last reader, but a is an output
  Value* v = t.Op(OpKind::kIdentity, {b}, {32});  // view of b, and an output
  Value* c = t.Op(OpKind::kTanh, {b}, {32});      // b dies here, but its buffer holds v
  Value* d = t.Op(OpKind::kNeg, {c}, {32});
  t.g.MarkOutput(a);
  t.g.MarkOutput(v);
  t.g.MarkOutput(d);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(M(*p, b).placement, Placement::kOwn);
  EXPECT_EQ(M(*p, v).placement, Placement::kView);
  EXPECT_EQ(M(*p, c).placement, Placement::kOwn);
  EXPECT_EQ(M(*p, d).placement, Placement::kInPlace);  // c is not an output: fine
  const int last = p->num_steps - 1;
  EXPECT_EQ(B(*p, a).request.last_use, last);
  EXPECT_EQ(B(*p, b).request.last_use, last);
  EXPECT_EQ(B(*p, d).request.last_use, last);
  // Everything that lives to the end is apart from everything else live then.
  ExpectNoOverlap(*p);
  EXPECT_NE(M(*p, a).offset, M(*p, b).offset);
  EXPECT_NE(M(*p, a).offset, M(*p, d).offset);
  EXPECT_NE(M(*p, b).offset, M(*p, d).offset);
}

// A graph input read only late is live from step 0; an unread output lives at its step.
TEST(Liveness, GraphInputsLiveFromTheStartAndDeadOutputsAtTheirStep) {
  Builder t;
  Value* x = t.Input("x", {8});
  Value* late = t.Input("late", {8});
  Value* a = t.Op(OpKind::kExp, {x}, {8});        // step 0
  Value* unused = t.Op(OpKind::kNeg, {x}, {8});   // step 1, never read
  Value* b = t.Op(OpKind::kLog, {a}, {8});        // step 2
  Value* c = t.Op(OpKind::kAdd, {b, late}, {8});  // step 3
  t.g.MarkOutput(c);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(B(*p, late).request.first_use, 0);
  EXPECT_EQ(B(*p, late).request.last_use, 3);
  EXPECT_EQ(B(*p, x).request.last_use, 1);
  EXPECT_EQ(B(*p, unused).request.first_use, 1);
  EXPECT_EQ(B(*p, unused).request.last_use, 1);
  EXPECT_EQ(M(*p, c).buffer, M(*p, a).buffer);  // a -> b -> c in place
  ExpectNoOverlap(*p);
}

// Constants need no arena memory; a reshape of a constant gets a buffer of its own.
TEST(Liveness, ConstantsStayOutOfTheArena) {
  Builder t;
  Value* x = t.Input("x", {4});
  Value* w = t.g.AddConstant("w", Tensor::FromVector<float>(DType::kF32, {4}, {1, 2, 3, 4}));
  Value* wr = t.Op(OpKind::kReshape, {w, t.Shape({2, 2})}, {2, 2});
  Value* a = t.Op(OpKind::kAdd, {x, w}, {4});
  t.g.MarkOutput(a);
  t.g.MarkOutput(wr);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->Find(w), nullptr);
  EXPECT_EQ(M(*p, wr).placement, Placement::kOwn);
  EXPECT_EQ(M(*p, a).placement, Placement::kOwn);  // x is a graph input
  EXPECT_EQ(p->buffers.size(), 3u);
}

TEST(Liveness, ExplicitOrderChangesTheSteps) {
  Builder t;
  Value* x = t.Input("x", {8});
  Value* a = t.Op(OpKind::kExp, {x}, {8});
  Value* b = t.Op(OpKind::kNeg, {x}, {8});
  t.g.MarkOutput(a);
  t.g.MarkOutput(b);
  std::vector<Node*> order = {b->producer(), a->producer()};
  auto p = PlanMemory(t.g, order);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(B(*p, b).request.first_use, 0);
  EXPECT_EQ(B(*p, a).request.first_use, 1);
  EXPECT_EQ(B(*p, x).request.last_use, 1);
}

TEST(Liveness, BadOrdersAndUnknownShapesFailClearly) {
  Builder t;
  Value* x = t.Input("x", {8});
  Value* a = t.Op(OpKind::kExp, {x}, {8});
  Value* b = t.Op(OpKind::kNeg, {a}, {8});
  t.g.MarkOutput(b);
  std::vector<Node*> reversed = {b->producer(), a->producer()};
  auto p = PlanMemory(t.g, reversed);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("before"), std::string::npos) << p.status().message();
  std::vector<Node*> twice = {a->producer(), a->producer()};
  EXPECT_FALSE(PlanMemory(t.g, twice).ok());
  std::vector<Node*> short_order = {a->producer()};
  EXPECT_FALSE(PlanMemory(t.g, short_order).ok());

  Builder u;
  Value* y = u.Input("y", {kUnknownDim, 8});
  u.g.MarkOutput(u.Op(OpKind::kRelu, {y}, {kUnknownDim, 8}));
  auto q = Plan(u.g);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("'y'"), std::string::npos) << q.status().message();
}

TEST(Liveness, EmptyGraphPassesItsInputThrough) {
  Builder t;
  Value* x = t.Input("x", {100});
  t.g.MarkOutput(x);
  auto p = Plan(t.g);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->buffers.size(), 1u);
  EXPECT_EQ(p->arena_bytes, 448);
  EXPECT_EQ(p->lower_bound, 448);
}

// A detector's tail: boxes -> NonMaxSuppression (a data-dependent count) -> Gather. The static
// part keeps the backbone, plans the values the tail reads as outputs (live to the end) and
// leaves out the two values of unknown shape; the full graph cannot be planned at all.
TEST(MemoryStaticPart, LeavesOutTheDynamicTail) {
  Builder t;
  Value* x = t.Input("x", {1, 64});
  Value* feat = t.Op(OpKind::kRelu, {x}, {1, 64});
  Value* boxes = t.Op(OpKind::kSigmoid, {feat}, {1, 64});
  Value* scores = t.Op(OpKind::kTanh, {feat}, {1, 64});
  Value* keep = t.Op(OpKind::kNonMaxSuppression, {boxes, scores}, {kUnknownDim, 3}, DType::kI64);
  Value* picked = t.Op(OpKind::kGather, {boxes, keep}, {kUnknownDim, 3, 64});
  t.g.MarkOutput(scores);
  t.g.MarkOutput(picked);
  ASSERT_FALSE(Plan(t.g).ok());

  std::vector<std::string> left;
  const Graph s = StaticPart(t.g, &left);
  EXPECT_EQ(left, (std::vector<std::string>{keep->name(), picked->name()}));
  ASSERT_EQ(s.nodes().size(), 3u);
  const Value* sb = s.FindValue(boxes->name());
  ASSERT_NE(sb, nullptr);
  EXPECT_TRUE(sb->is_graph_output()) << "the tail reads boxes after the static steps";
  EXPECT_TRUE(s.FindValue(scores->name())->is_graph_output());
  EXPECT_EQ(s.FindValue(keep->name()), nullptr);
  auto p = Plan(s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  // boxes (a graph output of the static part now) lives to the last step, so it never shares
  // its bytes with scores, made after it.
  EXPECT_EQ(B(*p, sb).request.last_use, B(*p, s.FindValue(scores->name())).request.last_use);
  ExpectNoOverlap(*p);

  // Without a dynamic value the copy is the graph itself.
  Builder u;
  u.g.MarkOutput(u.Op(OpKind::kRelu, {u.Input("y", {8})}, {8}));
  left = {"stale"};
  EXPECT_EQ(StaticPart(u.g, &left).nodes().size(), 1u);
  EXPECT_TRUE(left.empty());
}

}  // namespace
}  // namespace edgec::memory
