// The conv lowering's plan: the SRAM layout of a tiling, its check, and the folded bias.
#include "npu/conv_layout.h"

#include <algorithm>

#include <fmt/format.h>

namespace edgec::npu {
namespace conv {

std::vector<KStep> KSteps(const ConvLayer& l, const Tiling& t) {
  std::vector<KStep> steps;
  int64_t off = 0;
  for (int kh = 0; kh < l.kernel_h; ++kh) {
    for (int kw = 0; kw < l.kernel_w; kw += t.kw_group) {
      const int g = std::min(t.kw_group, l.kernel_w - kw);
      for (int c0 = 0; c0 < l.group_in(); c0 += t.tile_c) {  // relative to the tile's group
        const int tc = std::min(t.tile_c, l.group_in() - c0);
        steps.push_back({kh, kw, g, c0, tc, off});
        off += int64_t{g} * tc;
      }
    }
  }
  return steps;
}

Layout MakeLayout(const ConvLayer& l, const Target& t, const Tiling& tl) {
  Layout y;
  const int64_t al = t.shared_sram.alignment, es = l.elem_bytes();
  y.max_m = tl.tile_h * tl.tile_w;
  y.max_k = tl.kw_group * tl.tile_c;
  y.max_n = tl.tile_n;
  y.k_total = l.k();
  const int nbuf = tl.double_buffer ? 2 : 1;
  const int64_t block_n = int64_t{tl.team_n} * y.max_n;
  const int64_t a_step = int64_t{y.max_m} * y.max_k * es, b_step = int64_t{y.max_k} * block_n * es;
  y.a_tile = AlignUp(a_step, al);
  y.r_tile = AlignUp(int64_t{y.max_m} * y.k_total * es, al);
  int64_t stream = 0, resident = 0;
  switch (tl.resident) {
    case Resident::kNone: stream = tl.team_m * y.a_tile + AlignUp(b_step, al); break;
    case Resident::kWeights:
      stream = tl.team_m * y.a_tile;
      resident = AlignUp(y.k_total * block_n * es, al);
      break;
    case Resident::kInput:
      stream = AlignUp(b_step, al);
      resident = tl.team_m * y.r_tile;
      break;
  }
  if (tl.band) {
    const int64_t rows = int64_t{tl.tile_h - 1} * l.stride_h + int64_t{l.kernel_h - 1} * l.dilation_h + 1;
    const int64_t wp = int64_t{l.out_w() - 1} * l.stride_w + int64_t{l.kernel_w - 1} * l.dilation_w + 1;
    stream = AlignUp(rows * wp * tl.tile_c * es, al);
    y.band_bytes = stream;
    if (tl.im2col) stream += AlignUp(int64_t{y.max_m} * y.k_total * es, al);
  }
  y.stream_a_bytes = tl.resident == Resident::kNone ? tl.team_m * y.a_tile : 0;
  y.stream_slot = stream;
  y.resident_slot = resident;
  y.params_slot = AlignUp(l.params_bytes(y.max_n), al);
  y.out_slot = AlignUp(int64_t{y.max_m} * y.max_n * l.out_elem_bytes(), al);
  y.per_team = nbuf * (stream + resident) + int64_t{tl.team()} * nbuf * (y.params_slot + y.out_slot);
  return y;
}

}  // namespace conv

using conv::Layout;
using conv::MakeLayout;

ConvLayer ConvLayer::MatMul(std::string name, int m, int k, int n) {
  ConvLayer l;
  l.name = std::move(name);
  l.in_h = m;
  l.channels = k;
  l.out_channels = n;
  return l;
}

const char* ResidentName(Resident r) {
  switch (r) {
    case Resident::kNone: return "streamed";
    case Resident::kWeights: return "weights-resident";
    case Resident::kInput: return "input-resident";
  }
  return "?";
}

std::string Tiling::ToString() const {
  return fmt::format("M {}x{} K {}x{}ch N {} {}{} {} x{} cores{}", tile_h, tile_w, kw_group, tile_c, tile_n,
                     ResidentName(resident), band ? (im2col ? " band im2col" : " band") : "", double_buffer ? "double" : "single", cores,
                     team() > 1 ? fmt::format(" in teams of {}x{}", team_m, team_n) : "");
}

Status CheckGroups(const ConvLayer& l) {
  if (l.group < 1 || l.channels % l.group || l.out_channels % l.group)
    return InvalidArgument("layer '{}': group {} does not divide {} input and {} output channels", l.name, l.group,
                           l.channels, l.out_channels);
  if (l.group > 1 && l.weights_from_input)
    return InvalidArgument("layer '{}': group {} with a right operand from an input", l.name, l.group);
  return Status::Ok();
}

StatusOr<Footprint> CheckTiling(const ConvLayer& l, const Target& t, const Tiling& tl) {
  RETURN_IF_ERROR(CheckGroups(l));
  if (tl.tile_h < 1 || tl.tile_w < 1 || tl.tile_c < 1 || tl.kw_group < 1 || tl.tile_n < 1 || tl.cores < 1 ||
      tl.team_m < 1 || tl.team_n < 1)
    return InvalidArgument("tiling {}: every tile size must be >= 1", tl.ToString());
  if (tl.cores % tl.team() != 0)
    return InvalidArgument("tiling {}: {} cores do not form teams of {}", tl.ToString(), tl.cores, tl.team());
  if (tl.band && tl.team() > 1) return InvalidArgument("tiling {}: band mode has no teams", tl.ToString());
  if (tl.cores > t.ai_cores.count)
    return InvalidArgument("tiling {}: the target has {} cores", tl.ToString(), t.ai_cores.count);
  if (tl.kw_group > 1 && tl.tile_c < l.group_in())
    return InvalidArgument("tiling {}: folding kernel columns needs all {} channels per step", tl.ToString(), l.group_in());
  // An N tile (a team's block of team_n tiles) never straddles a group: its K steps read its
  // group's channels only. Guarded by NpuGroupedConvTest.RefusesTilesAcrossGroups.
  if (l.group > 1 && l.group_out() % (int64_t{tl.tile_n} * tl.team_n) != 0)
    return InvalidArgument("tiling {}: {} output channels per group are not a multiple of the block's {}", tl.ToString(),
                           l.group_out(), int64_t{tl.tile_n} * tl.team_n);
  if (tl.tile_w < l.out_w() && tl.tile_h > 1)
    return InvalidArgument("tiling {}: a tile of several rows must span the whole output width", tl.ToString());
  if (tl.band && (tl.resident != Resident::kWeights || tl.kw_group != 1 || tl.tile_w != l.out_w()))
    return InvalidArgument("tiling {}: band mode needs resident weights, kw_group 1 and full-width tiles", tl.ToString());
  if (l.weights_from_input && (tl.band || tl.team_m != 1))
    return InvalidArgument("tiling {}: a right operand from an input needs team_m 1 and no band mode", tl.ToString());
  if (tl.im2col && (!tl.band || tl.tile_c != l.group_in()))
    return InvalidArgument("tiling {}: im2col needs band mode and all {} channels in one step", tl.ToString(),
                           l.group_in());
  const Layout y = MakeLayout(l, t, tl);
  Footprint f;
  f.sram_per_team = y.per_team;
  f.sram_total = y.per_team * (tl.cores / tl.team());
  f.acc_per_core = int64_t{tl.double_buffer ? 2 : 1} * y.max_m * y.max_n * 4;
  if (f.acc_per_core > t.ai_cores.accumulator_bytes)
    return InvalidArgument("tiling {}: accumulators need {} bytes per core, the target has {}", tl.ToString(),
                           f.acc_per_core, t.ai_cores.accumulator_bytes);
  if (f.sram_total > t.shared_sram.bytes)
    return InvalidArgument("tiling {}: needs {} bytes of SRAM, the target has {}", tl.ToString(), f.sram_total,
                           t.shared_sram.bytes);
  if (int64_t{y.max_m} * y.max_k > INT32_MAX / 2) return InvalidArgument("tiling {}: tile too large", tl.ToString());
  return f;
}

std::vector<int32_t> FoldedBias(const ConvLayer& l) {
  std::vector<int32_t> b(l.out_channels, 0);
  if (l.weights_from_input) {  // the MATMULs subtract the zero points themselves
    if (!l.bias.empty()) b = l.bias;
    return b;
  }
  for (int oc = 0; oc < l.out_channels; ++oc) {
    int64_t sum = 0;
    for (int64_t k = 0; k < l.k(); ++k) sum += l.weights[k * l.out_channels + oc];
    b[oc] = (l.bias.empty() ? 0 : l.bias[oc]) - static_cast<int32_t>(l.x_zero_point * sum);
  }
  return b;
}

}  // namespace edgec::npu
