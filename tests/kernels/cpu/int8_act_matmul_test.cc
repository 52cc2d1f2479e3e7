// The act x act QLinearMatMul kernel (int8_act_matmul.cc) against the reference kernel, bit
// for bit, on seeded random shapes: ranks 2 to 4 (attention's [batch, heads, M, K] x
// [batch, heads, K, N]), B broadcast over A's batch and the reverse, u8 and i8 A, B and
// output, random zero points, both requantization modes, a fused lookup, a bias, 1 and 2
// threads, and each vector ISA the CPU has (AVX-512, AVX2, scalar).
#include "../../lower/random_q.h"
#include "cpu_test_util.h"

namespace edgec::testing_cpu {
namespace {

using lower::RandomQ;  // every bit pattern of the 8-bit dtype
Tensor ScalarF(float v) { return Tensor::FromVector<float>(DType::kF32, {}, {v}); }
Tensor ScalarQ(DType dt, std::mt19937& rng) { return RandomQ(dt, {}, rng); }
float Uniform(std::mt19937& rng, float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }

TEST(CpuInt8ActMatMul, EqualsReferenceOnRandomShapesAndEveryIsa) {
  std::mt19937 rng(3030);
  int ran = 0;
  for (int trial = 0; trial < 48; ++trial) {
    const int64_t m = RandInt(rng, 1, 24), k = RandInt(rng, 1, trial % 8 == 7 ? 700 : 90), n = RandInt(rng, 1, 40);
    const int64_t heads = RandInt(rng, 1, 4);
    Dims ad, bd;
    switch (trial % 4) {
      case 0: ad = {m, k}; bd = {k, n}; break;
      case 1: ad = {heads, m, k}; bd = {heads, k, n}; break;
      case 2: ad = {1, heads, m, k}; bd = {1, heads, k, n}; break;   // attention, batched over heads
      default: ad = {2, heads, m, k}; bd = {k, n}; break;            // B shared by every batch
    }
    if (trial % 12 == 5) {  // A shared by every batch
      ad = {m, k};
      bd = {3, k, n};
    }
    const DType at = trial % 2 ? DType::kI8 : DType::kU8;
    const DType bt = trial % 3 ? DType::kU8 : DType::kI8;
    const DType yt = trial % 5 < 2 ? DType::kI8 : DType::kU8;
    const float a_scale = Uniform(rng, 0.005f, 0.05f), b_scale = Uniform(rng, 0.005f, 0.05f);
    const float y_scale = a_scale * b_scale * std::sqrt(static_cast<float>(k)) * Uniform(rng, 30.f, 300.f);
    Attributes a;
    if (trial % 3 == 1) a.Set("edgec_requant", std::string("fixed_point"));
    if (trial % 7 == 6) {
      std::vector<int64_t> table(256);
      for (int64_t& v : table) v = yt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
      a.Set("edgec_output_table", table);
    }
    testing_mv::Inputs in = {RandomQ(at, ad, rng), ScalarF(a_scale), ScalarQ(at, rng), RandomQ(bt, bd, rng),
                             ScalarF(b_scale), ScalarQ(bt, rng), ScalarF(y_scale), ScalarQ(yt, rng)};
    if (trial % 9 == 4) {
      Tensor bias(DType::kI32, {n});
      for (int64_t j = 0; j < n; ++j) bias.data<int32_t>()[j] = static_cast<int32_t>(RandInt(rng, -5000, 5000));
      in.push_back(bias);
    }
    FastCase c{OpKind::kQLinearMatMul, in, a};
    c.constants = {1, 2, 4, 5, 6, 7};
    if (in.size() > 8) c.constants.insert(8);
    c.threads = 1 + trial % 2;
    ForEachIsa([&] {
      const std::string kernel = ExpectMatchesRef(c, 0, 0, fmt::format("a {} b {} trial {}", DimsStr(ad), DimsStr(bd), trial));
      EXPECT_NE(kernel.find("act matmul"), std::string::npos) << kernel;
    });
    ++ran;
  }
  EXPECT_EQ(ran, 48);
}

TEST(CpuInt8ActMatMul, RefusesBatchDimsItDoesNotWalk) {
  std::mt19937 rng(7);
  testing_mv::Inputs in = {RandomQ(DType::kU8, {2, 1, 3, 4}, rng), ScalarF(0.1f), ScalarQ(DType::kU8, rng),
                           RandomQ(DType::kU8, {1, 2, 4, 5}, rng), ScalarF(0.1f), ScalarQ(DType::kU8, rng),
                           ScalarF(1.f), ScalarQ(DType::kU8, rng)};
  FastCase c{OpKind::kQLinearMatMul, in, {}};
  c.constants = {1, 2, 4, 5, 6, 7};
  EXPECT_NE(RefusalOf(c).find("batch dims"), std::string::npos) << RefusalOf(c);
}

}  // namespace
}  // namespace edgec::testing_cpu
