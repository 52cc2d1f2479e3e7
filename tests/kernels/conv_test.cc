// Conv and ConvTranspose: hand-computed cases per attribute, a naive formula for larger
// random cases (1-D, 2-D, 3-D), compile-time inference and error cases.
#include "conv_test_util.h"

namespace edgec {
namespace {

using namespace testing_conv;

// Every multi-index of `dims`, last dim fastest.
std::vector<Ints> AllIndices(const Ints& dims) {
  std::vector<Ints> all;
  Ints idx(dims.size(), 0);
  for (int64_t i = 0; i < NumElements(dims); ++i) {
    all.push_back(idx);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return all;
}

int64_t Flat(const Ints& dims, const Ints& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < dims.size(); ++d) f = f * dims[d] + idx[d];
  return f;
}

struct ConvCase {
  Ints strides, pads, dilations, output_padding;
  int64_t group = 1;
};

// The ONNX Conv formula, one output element at a time, with explicit bounds tests:
// y[n, m, o] = b[m] + sum_{c, k} x[n, g*C/group + c, o*s + k*d - pad_begin] * w[m, c, k].
Tensor NaiveConv(const Tensor& x, const Tensor& w, const Tensor* b, const ConvCase& cc) {
  const size_t n = x.rank() - 2;
  const Ints xd = x.dims(), wd = w.dims();
  Ints yd = {xd[0], wd[0]};
  for (size_t i = 0; i < n; ++i) {
    const int64_t ek = (wd[2 + i] - 1) * cc.dilations[i] + 1;
    yd.push_back((xd[2 + i] + cc.pads[i] + cc.pads[n + i] - ek) / cc.strides[i] + 1);
  }
  const std::vector<double> xv = x.ToDoubleVector(), wv = w.ToDoubleVector();
  Tensor y(x.dtype(), yd);
  const int64_t cin_g = wd[1], cout_g = wd[0] / cc.group;
  const Ints kdims(wd.begin() + 2, wd.end());
  for (const Ints& yi : AllIndices(yd)) {
    const int64_t m = yi[1], g = m / cout_g;
    double acc = b ? b->ToDoubleVector()[m] : 0.0;
    for (int64_t c = 0; c < cin_g; ++c) {
      for (const Ints& k : AllIndices(kdims)) {
        Ints xi = {yi[0], g * cin_g + c};
        bool inside = true;
        for (size_t i = 0; i < n; ++i) {
          const int64_t p = yi[2 + i] * cc.strides[i] + k[i] * cc.dilations[i] - cc.pads[i];
          inside = inside && p >= 0 && p < xd[2 + i];
          xi.push_back(p);
        }
        if (!inside) continue;
        Ints wi = {m, c};
        wi.insert(wi.end(), k.begin(), k.end());
        acc += xv[Flat(xd, xi)] * wv[Flat(wd, wi)];
      }
    }
    StoreFromDouble(y.dtype(), y.raw(), Flat(yd, yi), acc);
  }
  return y;
}

// The transposed formula: each x[n, c, i] adds x * w[c, m, k] to
// y[n, g*M/group + m, i*s + k*d - pad_begin] when inside Y.
Tensor NaiveConvTranspose(const Tensor& x, const Tensor& w, const Tensor* b, const ConvCase& cc) {
  const size_t n = x.rank() - 2;
  const Ints xd = x.dims(), wd = w.dims();
  const int64_t cout_g = wd[1], cin_g = xd[1] / cc.group;
  Ints yd = {xd[0], cout_g * cc.group};
  for (size_t i = 0; i < n; ++i) {
    const int64_t ek = (wd[2 + i] - 1) * cc.dilations[i] + 1;
    yd.push_back(cc.strides[i] * (xd[2 + i] - 1) + cc.output_padding[i] + ek - cc.pads[i] -
                 cc.pads[n + i]);
  }
  const std::vector<double> xv = x.ToDoubleVector(), wv = w.ToDoubleVector();
  std::vector<double> yv(NumElements(yd), 0.0);
  if (b) {
    for (const Ints& yi : AllIndices(yd)) yv[Flat(yd, yi)] = b->ToDoubleVector()[yi[1]];
  }
  const Ints kdims(wd.begin() + 2, wd.end());
  for (const Ints& xi : AllIndices(xd)) {
    const int64_t c = xi[1], g = c / cin_g;
    for (int64_t m = 0; m < cout_g; ++m) {
      for (const Ints& k : AllIndices(kdims)) {
        Ints yi = {xi[0], g * cout_g + m};
        bool inside = true;
        for (size_t i = 0; i < n; ++i) {
          const int64_t p = xi[2 + i] * cc.strides[i] + k[i] * cc.dilations[i] - cc.pads[i];
          inside = inside && p >= 0 && p < yd[2 + i];
          yi.push_back(p);
        }
        if (!inside) continue;
        Ints wi = {c, m};
        wi.insert(wi.end(), k.begin(), k.end());
        yv[Flat(yd, yi)] += xv[Flat(xd, xi)] * wv[Flat(wd, wi)];
      }
    }
  }
  Tensor y(x.dtype(), yd);
  for (size_t i = 0; i < yv.size(); ++i) StoreFromDouble(y.dtype(), y.raw(), i, yv[i]);
  return y;
}

Attributes ConvAttrs(const ConvCase& cc) {
  Attributes a;
  a.Set("strides", cc.strides);
  a.Set("pads", cc.pads);
  a.Set("dilations", cc.dilations);
  a.Set("group", cc.group);
  if (!cc.output_padding.empty()) a.Set("output_padding", cc.output_padding);
  return a;
}

// --- Conv: hand-computed cases (x = 0..24 as 5x5, W = ones 3x3, as in the ONNX docs) ---

TEST(ConvTest, NoPadding) {
  Tensor y = Run1(OpKind::kConv, {Iota({1, 1, 5, 5}), F32({1, 1, 3, 3}, std::vector<float>(9, 1))});
  ExpectF32(y, {1, 1, 3, 3}, {54, 63, 72, 99, 108, 117, 144, 153, 162});
}

TEST(ConvTest, SymmetricPadding) {
  Tensor y = Run1(OpKind::kConv, {Iota({1, 1, 5, 5}), F32({1, 1, 3, 3}, std::vector<float>(9, 1))},
                  Attrs({{"pads", Ints{1, 1, 1, 1}}, {"kernel_shape", Ints{3, 3}}}));
  ExpectF32(y, {1, 1, 5, 5}, {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                              117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84});
}

TEST(ConvTest, StridesWithAndWithoutPadding) {
  const Tensor x = Iota({1, 1, 7, 5});
  const Tensor w = F32({1, 1, 3, 3}, std::vector<float>(9, 1));
  Tensor padded =
      Run1(OpKind::kConv, {x, w}, Attrs({{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}));
  ExpectF32(padded, {1, 1, 4, 3}, {12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124});
  Tensor unpadded = Run1(OpKind::kConv, {x, w}, Attrs({{"strides", Ints{2, 2}}}));
  ExpectF32(unpadded, {1, 1, 3, 2}, {54, 72, 144, 162, 234, 252});
  // Asymmetric: pads on the height only (begin 1, end 1), none on the width.
  Tensor asym =
      Run1(OpKind::kConv, {x, w}, Attrs({{"pads", Ints{1, 0, 1, 0}}, {"strides", Ints{2, 2}}}));
  ExpectF32(asym, {1, 1, 4, 2}, {21, 33, 99, 117, 189, 207, 171, 183});
}

TEST(ConvTest, AutoPadSameUpperAndLowerPlaceTheOddPad) {
  // x = [1, 2, 3], w = [1, 10]: the total pad is 1.
  const Tensor x = F32({1, 1, 3}, {1, 2, 3});
  const Tensor w = F32({1, 1, 2}, {1, 10});
  ExpectF32(Run1(OpKind::kConv, {x, w}, Attrs({{"auto_pad", std::string("SAME_UPPER")}})),
            {1, 1, 3}, {21, 32, 3});  // pad after
  ExpectF32(Run1(OpKind::kConv, {x, w}, Attrs({{"auto_pad", std::string("SAME_LOWER")}})),
            {1, 1, 3}, {10, 21, 32});  // pad before
  // VALID ignores explicit pads; NOTSET is the default.
  ExpectF32(Run1(OpKind::kConv, {x, w},
                 Attrs({{"auto_pad", std::string("VALID")}, {"pads", Ints{1, 1}}})),
            {1, 1, 2}, {21, 32});
  ExpectF32(Run1(OpKind::kConv, {x, w}, Attrs({{"auto_pad", std::string("NOTSET")}})), {1, 1, 2},
            {21, 32});
}

TEST(ConvTest, AutoPadSameWithStride) {
  // ONNX docs: 5x5, k3, stride 2, SAME_LOWER -> 3x3.
  Tensor y = Run1(OpKind::kConv, {Iota({1, 1, 5, 5}), F32({1, 1, 3, 3}, std::vector<float>(9, 1))},
                  Attrs({{"auto_pad", std::string("SAME_LOWER")}, {"strides", Ints{2, 2}}}));
  ExpectF32(y, {1, 1, 3, 3}, {12, 27, 24, 63, 108, 81, 72, 117, 84});
}

TEST(ConvTest, Dilation) {
  // out[i] = x[i] + x[i + 2]
  Tensor y = Run1(OpKind::kConv, {F32({1, 1, 5}, {1, 2, 3, 4, 5}), F32({1, 1, 2}, {1, 1})},
                  Attrs({{"dilations", Ints{2}}}));
  ExpectF32(y, {1, 1, 3}, {4, 6, 8});
}

TEST(ConvTest, GroupsAndBias) {
  // 4 input channels in 2 groups; output channel g sees input channels 2g and 2g + 1.
  const Tensor x = F32({1, 4, 2}, {1, 2, 10, 20, 100, 200, 1000, 2000});
  const Tensor w = F32({2, 2, 1}, {1, 2, 3, 4});
  const Tensor b = F32({2}, {0.5, -0.5});
  Tensor y = Run1(OpKind::kConv, {x, w, b}, Attrs({{"group", int64_t{2}}}));
  ExpectF32(y, {1, 2, 2}, {1 + 20 + 0.5, 2 + 40 + 0.5, 300 + 4000 - 0.5, 600 + 8000 - 0.5});
}

TEST(ConvTest, Depthwise) {
  const Tensor x = F32({1, 3, 1, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor w = F32({3, 1, 1, 1}, {10, 100, 1000});
  Tensor y = Run1(OpKind::kConv, {x, w}, Attrs({{"group", int64_t{3}}}));
  ExpectF32(y, {1, 3, 1, 2}, {10, 20, 300, 400, 5000, 6000});
}

TEST(ConvTest, BatchOfTwo) {
  const Tensor x = F32({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = Run1(OpKind::kConv, {x, F32({1, 1, 2}, {1, -1})});
  ExpectF32(y, {2, 1, 2}, {-1, -1, -1, -1});
}

TEST(ConvTest, MatchesTheFormulaOn1D2D3D) {
  struct Case {
    Dims x, w;
    ConvCase cc;
  };
  const std::vector<Case> cases = {
      {{2, 4, 11}, {6, 2, 3}, {{2}, {1, 2}, {2}, {}, 2}},
      {{1, 3, 9, 8}, {4, 3, 3, 2}, {{2, 1}, {1, 0, 2, 1}, {1, 2}, {}, 1}},
      {{1, 4, 7, 7}, {4, 1, 3, 3}, {{1, 2}, {1, 1, 1, 1}, {1, 1}, {}, 4}},
      {{1, 2, 5, 6, 4}, {3, 2, 2, 3, 2}, {{1, 2, 1}, {0, 1, 1, 1, 0, 0}, {2, 1, 1}, {}, 1}},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    for (DType dt : {DType::kF32, DType::kF64}) {
      const Tensor x = Random(dt, c.x, seed++), w = Random(dt, c.w, seed++);
      const Tensor b = Random(dt, {c.w[0]}, seed++);
      Tensor y = Run1(OpKind::kConv, {x, w, b}, ConvAttrs(c.cc));
      ExpectClose(y, NaiveConv(x, w, &b, c.cc), 1e-5);
    }
  }
}

TEST(ConvTest, Float16ComputesThroughFloat) {
  const Tensor x = F16({1, 1, 3}, {1, 2, 3});
  Tensor y = Run1(OpKind::kConv, {x, F16({1, 1, 2}, {0.5, 0.25})});
  ExpectValues(y, DType::kF16, {1, 1, 2}, {1.0, 1.75});
}

TEST(ConvTest, KernelShapeAttributeMustMatchW) {
  const Tensor x = Iota({1, 1, 5, 5}), w = F32({1, 1, 3, 3}, std::vector<float>(9, 1));
  EXPECT_EQ(ErrorOf(OpKind::kConv, {x, w}, Attrs({{"kernel_shape", Ints{3, 3}}})), "");
  const std::string err = ErrorOf(OpKind::kConv, {x, w}, Attrs({{"kernel_shape", Ints{2, 3}}}));
  EXPECT_NE(err.find("kernel_shape [2, 3] does not match"), std::string::npos) << err;
}

// --- Conv: inference and errors ---

TEST(ConvTest, ChannelMismatchNamesNodeAndDims) {
  const std::string err = ErrorOf(OpKind::kConv, {Iota({1, 3, 5, 5}), Iota({2, 4, 3, 3})});
  EXPECT_NE(err.find("Conv 'n1'"), std::string::npos) << err;
  EXPECT_NE(err.find("[1, 3, 5, 5]"), std::string::npos) << err;
  EXPECT_NE(err.find("[2, 4, 3, 3]"), std::string::npos) << err;
  EXPECT_NE(err.find("3 channels"), std::string::npos) << err;
  // With groups, W's dim 1 is C / group.
  EXPECT_EQ(ErrorOf(OpKind::kConv, {Iota({1, 4, 5, 5}), Iota({2, 2, 3, 3})},
                    Attrs({{"group", int64_t{2}}})),
            "");
  EXPECT_NE(ErrorOf(OpKind::kConv, {Iota({1, 4, 5, 5}), Iota({3, 2, 3, 3})},
                    Attrs({{"group", int64_t{2}}}))
                .find("not divisible by group 2"),
            std::string::npos);
}

TEST(ConvTest, KernelLargerThanPaddedInput) {
  const std::string err = ErrorOf(OpKind::kConv, {Iota({1, 1, 4, 4}), Iota({1, 1, 5, 5})},
                                  Attrs({{"pads", Ints{0, 0, 0, 0}}}));
  EXPECT_NE(err.find("Conv 'n1'"), std::string::npos) << err;
  EXPECT_NE(err.find("larger than the padded input 4"), std::string::npos) << err;
  // Padding makes it fit: 4 + 1 + 0 = 5.
  EXPECT_EQ(ErrorOf(OpKind::kConv, {Iota({1, 1, 4, 4}), Iota({1, 1, 5, 5})},
                    Attrs({{"pads", Ints{1, 1, 0, 0}}})),
            "");
  // Dilation counts: a 2-tap kernel with dilation 4 spans 5.
  EXPECT_NE(
      ErrorOf(OpKind::kConv, {Iota({1, 1, 4}), Iota({1, 1, 2})}, Attrs({{"dilations", Ints{4}}}))
          .find("dilated 5"),
      std::string::npos);
}

TEST(ConvTest, BadAttributesAndShapes) {
  const Tensor x = Iota({1, 1, 5, 5}), w = Iota({1, 1, 3, 3});
  EXPECT_NE(ErrorOf(OpKind::kConv, {x, w}, Attrs({{"strides", Ints{1}}}))
                .find("strides [1] has 1 entries, expected 2"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OpKind::kConv, {x, w}, Attrs({{"strides", Ints{0, 1}}})).find("must be >= 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OpKind::kConv, {x, w}, Attrs({{"pads", Ints{1, 1}}})).find("expected 4"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OpKind::kConv, {x, w}, Attrs({{"auto_pad", std::string("SAME")}}))
                .find("auto_pad 'SAME'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OpKind::kConv, {Iota({1, 5}), Iota({1, 5})}).find("expected at least 3"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OpKind::kConv, {x, Iota({1, 1, 3})}).find("must have X's rank"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OpKind::kConv, {x, w, Iota({2})}).find("input 2 (B)"), std::string::npos);
  EXPECT_NE(
      ErrorOf(OpKind::kConv, {x, F64({1, 1, 3, 3}, std::vector<double>(9, 1))}).find("dtype f64"),
      std::string::npos);
}

TEST(ConvTest, CompileTimeInferenceKeepsUnknownDims) {
  TensorType x = MakeType(DType::kF32, {kUnknownDim, 3, 224, kUnknownDim});
  TensorType w = MakeType(DType::kF32, {64, 3, 7, 7});
  auto out = InferTypes(OpKind::kConv, {x, w},
                        Attrs({{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dims, (Dims{kUnknownDim, 64, 112, kUnknownDim}));
  auto unknown = InferTypes(OpKind::kConv, {UnknownRank(DType::kF32), UnknownRank(DType::kF32)});
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE((*unknown)[0].rank_known);
  // W's rank alone fixes the output rank; its spatial dims give the kernel.
  auto from_w = InferTypes(OpKind::kConv, {UnknownRank(DType::kF32), w});
  ASSERT_TRUE(from_w.ok());
  EXPECT_EQ((*from_w)[0].dims, (Dims{kUnknownDim, 64, kUnknownDim, kUnknownDim}));
}

// --- ConvTranspose: x = [1, 2, 3], w = [1, 1, 1] ---

TEST(ConvTransposeTest, HandComputed1D) {
  const Tensor x = F32({1, 1, 3}, {1, 2, 3});
  const Tensor w = F32({1, 1, 3}, {1, 1, 1});
  ExpectF32(Run1(OpKind::kConvTranspose, {x, w}), {1, 1, 5}, {1, 3, 6, 5, 3});
  // Stride 2: x[i] lands on 2i, 2i + 1, 2i + 2.
  const Attributes s2 = Attrs({{"strides", Ints{2}}});
  ExpectF32(Run1(OpKind::kConvTranspose, {x, w}, s2), {1, 1, 7}, {1, 1, 3, 2, 5, 3, 3});
  // Pads crop the full output.
  ExpectF32(
      Run1(OpKind::kConvTranspose, {x, w}, Attrs({{"strides", Ints{2}}, {"pads", Ints{1, 1}}})),
      {1, 1, 5}, {1, 3, 2, 5, 3});
  // output_padding adds to the end.
  ExpectF32(Run1(OpKind::kConvTranspose, {x, w},
                 Attrs({{"strides", Ints{2}}, {"output_padding", Ints{1}}})),
            {1, 1, 8}, {1, 1, 3, 2, 5, 3, 3, 0});
  // Dilation 2: x[i] lands on i, i + 2, i + 4.
  ExpectF32(Run1(OpKind::kConvTranspose, {x, w}, Attrs({{"dilations", Ints{2}}})), {1, 1, 7},
            {1, 2, 4, 2, 4, 2, 3});
}

TEST(ConvTransposeTest, OutputShapeAndAutoPadComputePads) {
  const Tensor x = F32({1, 1, 3}, {1, 2, 3});
  const Tensor w = F32({1, 1, 3}, {1, 1, 1});
  // output_shape 8 with stride 2: total pad 2*2 + 3 - 8 = -1, so the output grows at the end.
  ExpectF32(Run1(OpKind::kConvTranspose, {x, w},
                 Attrs({{"strides", Ints{2}}, {"output_shape", Ints{8}}})),
            {1, 1, 8}, {1, 1, 3, 2, 5, 3, 3, 0});
  // output_shape 5: total pad 2, split 1 + 1.
  ExpectF32(Run1(OpKind::kConvTranspose, {x, w},
                 Attrs({{"strides", Ints{2}}, {"output_shape", Ints{5}}})),
            {1, 1, 5}, {1, 3, 2, 5, 3});
  // The full (N, C, L) form of output_shape is accepted too.
  ExpectF32(Run1(OpKind::kConvTranspose, {x, w},
                 Attrs({{"strides", Ints{2}}, {"output_shape", Ints{1, 1, 5}}})),
            {1, 1, 5}, {1, 3, 2, 5, 3});
  // SAME: output = input * stride = 6, total pad 1; UPPER crops the end, LOWER the begin.
  ExpectF32(Run1(OpKind::kConvTranspose, {x, w},
                 Attrs({{"strides", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}})),
            {1, 1, 6}, {1, 1, 3, 2, 5, 3});
  ExpectF32(Run1(OpKind::kConvTranspose, {x, w},
                 Attrs({{"strides", Ints{2}}, {"auto_pad", std::string("SAME_LOWER")}})),
            {1, 1, 6}, {1, 3, 2, 5, 3, 3});
}

TEST(ConvTransposeTest, GroupsAndBias) {
  // 2 groups: input channel g feeds output channels of group g only.
  const Tensor x = F32({1, 2, 2}, {1, 2, 10, 20});
  const Tensor w = F32({2, 1, 1}, {3, 5});
  const Tensor b = F32({2}, {1, -1});
  ExpectF32(Run1(OpKind::kConvTranspose, {x, w, b}, Attrs({{"group", int64_t{2}}})), {1, 2, 2},
            {4, 7, 49, 99});
}

TEST(ConvTransposeTest, MatchesTheFormulaOn1D2D3D) {
  struct Case {
    Dims x, w;
    ConvCase cc;
  };
  const std::vector<Case> cases = {
      {{2, 4, 5}, {4, 3, 3}, {{2}, {1, 0}, {1}, {1}, 2}},
      {{1, 2, 4, 3}, {2, 3, 3, 2}, {{3, 2}, {1, 2, 1, 0}, {1, 2}, {0, 1}, 1}},
      {{1, 2, 3, 4, 2}, {2, 2, 2, 3, 2}, {{1, 2, 2}, {0, 1, 0, 0, 0, 1}, {2, 1, 1}, {0, 0, 1}, 1}},
  };
  uint32_t seed = 100;
  for (const Case& c : cases) {
    const Tensor x = Random(DType::kF32, c.x, seed++), w = Random(DType::kF32, c.w, seed++);
    const Tensor b = Random(DType::kF32, {c.w[1] * c.cc.group}, seed++);
    Tensor y = Run1(OpKind::kConvTranspose, {x, w, b}, ConvAttrs(c.cc));
    ExpectClose(y, NaiveConvTranspose(x, w, &b, c.cc), 1e-5);
  }
}

TEST(ConvTransposeTest, Errors) {
  const std::string err = ErrorOf(OpKind::kConvTranspose, {Iota({1, 3, 4, 4}), Iota({2, 1, 3, 3})});
  EXPECT_NE(err.find("ConvTranspose 'n1'"), std::string::npos) << err;
  EXPECT_NE(err.find("channel mismatch"), std::string::npos) << err;
  // Pads larger than the full output.
  EXPECT_NE(ErrorOf(OpKind::kConvTranspose, {Iota({1, 1, 2}), Iota({1, 1, 2})},
                    Attrs({{"pads", Ints{2, 2}}}))
                .find("is not positive"),
            std::string::npos);
  EXPECT_NE(ErrorOf(OpKind::kConvTranspose, {Iota({1, 1, 2}), Iota({1, 1, 2})},
                    Attrs({{"output_shape", Ints{4, 4}}}))
                .find("output_shape"),
            std::string::npos);
}

}  // namespace
}  // namespace edgec
