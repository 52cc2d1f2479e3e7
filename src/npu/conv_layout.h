// The conv lowering's shared facts: its semaphores, K steps, output tiles and SRAM layout
// (used by the tiling check and by the emitter, lower_conv.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "npu/lower.h"

namespace edgec::npu::conv {

// Semaphores of each core. The stream and resident ones are per slot (sem + slot) for conv
// layers, where a team's cores all fill and drain each slot; the eltwise and pool pipelines
// use kStreamFree / kStreamFull as one counting semaphore.
enum Sem : int32_t {
  kStreamFree = 0, kStreamFull = 2,    // load <-> exec, per K step
  kAccFree = 4, kAccFull,              // exec <-> vector, per output tile
  kOutFree, kOutFull,                  // vector <-> store, per output tile
  kResidentFree = 8, kResidentFull = 10,  // load <-> exec, per group of tiles sharing the resident operand
  kParamsFree = 12,                    // vector -> load: a parameter slot may be overwritten
  kNumSems,
};

struct KStep {
  int kh, kw0, g, c0, tc;
  int64_t k_offset;  // first row of this step in the K dimension
  int k() const { return g * tc; }
};

struct OutTile {
  int b, oh0, ow0, th, tw, n0, tn;
  int m() const { return th * tw; }
};

// The K steps of a tiling: kernel rows x groups of kw_group kernel columns x channel chunks.
std::vector<KStep> KSteps(const ConvLayer& l, const Tiling& t);

// SRAM of one team: its shared stream and resident slots, then each core's parameter and
// output slots. A stream slot holds the block's input tiles (a_tile bytes apart) and then its
// weight rows (the block's columns side by side); a resident slot either the block's weight
// columns or its input tiles (r_tile bytes apart).
struct Layout {
  int64_t stream_slot = 0, resident_slot = 0, params_slot = 0, out_slot = 0;
  int64_t stream_a_bytes = 0;  // within a stream slot, A first then B
  int64_t band_bytes = 0;      // band mode: the band's part of a stream slot (then the im2col rows)
  int64_t a_tile = 0, r_tile = 0;
  int64_t per_team = 0;
  int max_m = 0, max_k = 0, max_n = 0;
  int64_t k_total = 0;
};

Layout MakeLayout(const ConvLayer& l, const Target& t, const Tiling& tl);

}  // namespace edgec::npu::conv
