// Data movement layers as DMA access patterns (see move.h).
#include "npu/move.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "npu/emit.h"

namespace edgec::npu {
namespace {


struct Dim {
  int64_t count, src, dst;
};

// The box without unit dims, ordered by destination stride (outermost first) and with
// neighbours that are contiguous on both sides merged; then the innermost dim, if contiguous
// on both sides, as the row (else rows of one byte).
struct Canonical {
  std::vector<Dim> dims;
  int64_t row = 1;
};

Canonical Canonicalize(const MoveBox& b) {
  std::vector<Dim> d;
  for (size_t i = 0; i < b.counts.size(); ++i)
    if (b.counts[i] > 1) d.push_back({b.counts[i], b.src_strides[i], b.dst_strides[i]});
  std::stable_sort(d.begin(), d.end(), [](const Dim& x, const Dim& y) {
    return x.dst != y.dst ? x.dst > y.dst : x.src > y.src;
  });
  Canonical c;
  for (const Dim& x : d) {
    c.dims.push_back(x);
    while (c.dims.size() >= 2) {
      const Dim& o = c.dims[c.dims.size() - 2];
      const Dim& i = c.dims.back();
      if (o.src != i.count * i.src || o.dst != i.count * i.dst) break;
      const Dim merged{o.count * i.count, i.src, i.dst};
      c.dims.pop_back();
      c.dims.back() = merged;
    }
  }
  if (!c.dims.empty() && c.dims.back().src == 1 && c.dims.back().dst == 1) {
    c.row = c.dims.back().count;
    c.dims.pop_back();
  }
  return c;
}

// One load + one store through a compact SRAM block: rows of `row` bytes, then `dims`
// (outermost first); the SRAM stride of a dim is the bytes of everything inside it.
// A transposing unit (row 1, dims {a: src 1, dst D} outside {b: src S, dst 1}) instead loads
// rows of its a source-contiguous bytes into SRAM as [b][a], transposes them there with a COPY
// (isa.h kPitchImm) into [a][b] and stores rows of b bytes: no DMA row of one byte.
struct Unit {
  int input, output;
  int64_t src, dst, row;
  std::vector<Dim> dims;
  bool transpose = false;
  // A permuting unit: its bytes are one contiguous range on both sides in different orders
  // (rows of `row` bytes shorter than a burst, dims outermost first by destination): one
  // contiguous load, one COPY per row run of its innermost dim in SRAM, one contiguous store.
  bool permute = false;
  int64_t bytes() const {
    int64_t n = row;
    for (const Dim& d : dims) n *= d.count;
    return n;
  }
};

// Calls f(src, dst) for every index of `dims` (an odometer), offsets added to the bases.
template <typename F>
void ForEachIndex(const std::vector<Dim>& dims, int64_t src, int64_t dst, F&& f) {
  std::vector<int64_t> idx(dims.size(), 0);
  while (true) {
    f(src, dst);
    int d = static_cast<int>(dims.size()) - 1;
    for (; d >= 0; --d) {
      src += dims[d].src;
      dst += dims[d].dst;
      if (++idx[d] < dims[d].count) break;
      src -= dims[d].src * dims[d].count;
      dst -= dims[d].dst * dims[d].count;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Whether a box is a byte transpose of two dims (see Unit).
bool Transposable(const Canonical& c) {
  return c.row == 1 && c.dims.size() == 2 && c.dims[0].src == 1 && c.dims[1].dst == 1;
}

// Whether the dims and the row are a dense layout of the box's bytes on one side.
bool DenseOn(const Canonical& c, bool src) {
  std::vector<Dim> d = c.dims;
  std::sort(d.begin(), d.end(), [&](const Dim& x, const Dim& y) { return (src ? x.src : x.dst) < (src ? y.src : y.dst); });
  int64_t expect = c.row;
  for (const Dim& x : d) {
    if ((src ? x.src : x.dst) != expect) return false;
    expect *= x.count;
  }
  return true;
}

// A box whose bytes are one range on both sides in two orders, tiled along its outermost dim
// (the same stride on both sides), with short rows (see Unit::permute).
bool Permutable(const Canonical& c, int64_t burst) {
  return c.dims.size() >= 2 && c.row < burst && c.dims[0].src == c.dims[0].dst && DenseOn(c, true) &&
         DenseOn(c, false);
}

// A permuting unit whose bytes within each outer index are a block of single bytes
// transposed (dims {outer, a: src 1, dst D, b: src S, dst 1}, e.g. a channel shuffle's
// [g][C/g] -> [C/g][g] in each NHWC pixel): one COPY with a column pitch per outer index
// instead of one per run of b.
bool PitchedPermute(const Unit& u) {
  return u.permute && u.row == 1 && u.dims.size() == 3 && u.dims[1].src == 1 && u.dims[2].dst == 1;
}

// Its COPYs: element (r, c) = (b index, a index) of outer index o read at src + o·O.src + r·S + c
// and written at dst + o·O.dst + r + c·D (isa.h kPitchImm).
template <typename F>
void EmitPitchedPermute(const Unit& u, int64_t src_block, int64_t dst_block, F&& add) {
  const Dim &O = u.dims[0], &A = u.dims[1], &B = u.dims[2];
  for (int64_t o = 0; o < O.count; ++o) {
    Instr cp{.op = Opcode::kCopy};
    cp.src = src_block + o * O.src;
    cp.dst = dst_block + o * O.dst;
    cp.rows = static_cast<int32_t>(B.count);
    cp.cols = static_cast<int32_t>(A.count);
    cp.src_stride = static_cast<int32_t>(B.src);
    cp.dst_stride = 1;
    cp.imm[kPitchImm] = static_cast<int32_t>(A.dst);
    add(cp);
  }
}

// The COPYs of any other permuting unit, the fewest of two forms (each COPY costs the vector
// pipeline's latency, so their count is the unit's time): rows of `row` bytes along the dim
// with the most of them, one COPY per index of the other dims; or, with one-byte rows, a
// pitched COPY (isa.h kPitchImm) whose columns are the dim contiguous in the source (written
// `pitch` apart) and whose rows are the largest other dim, one per index of the rest. A
// DepthToSpace in CRD mode (torch's PixelShuffle) to 3 channels moves [c][i][j] source bytes
// of a pixel into rows j·3 + c of output row i: 6 COPYs of 64 × 2 bytes per input row instead
// of 256 of 3 bytes (NpuVectorOpsTest.CrdDepthToSpaceCopiesFewRuns).
template <typename F>
void EmitPermuteCopies(const Unit& u, int64_t src_block, int64_t dst_block, F&& add) {
  const int n = static_cast<int>(u.dims.size());
  auto largest = [&](int skip) {
    int best = -1;
    for (int d = 0; d < n; ++d)
      if (d != skip && (best < 0 || u.dims[d].count > u.dims[best].count)) best = d;
    return best;
  };
  int cols_dim = -1;  // the source-contiguous dim of a pitched form
  if (u.row == 1)
    for (int d = 0; d < n; ++d)
      if (u.dims[d].src == 1 && u.dims[d].dst > 1) cols_dim = d;
  const int plain_rows = largest(-1);
  const int pitched_rows = cols_dim >= 0 && n >= 2 ? largest(cols_dim) : -1;
  const bool pitched = pitched_rows >= 0 && u.dims[cols_dim].count > 1;
  const int rows_dim = pitched ? pitched_rows : plain_rows;
  std::vector<Dim> rest;
  for (int d = 0; d < n; ++d)
    if (d != rows_dim && !(pitched && d == cols_dim)) rest.push_back(u.dims[d]);
  const Dim& R = u.dims[rows_dim];
  ForEachIndex(rest, 0, 0, [&](int64_t so, int64_t d) {
    Instr cp{.op = Opcode::kCopy};
    cp.src = src_block + so;
    cp.dst = dst_block + d;
    cp.rows = static_cast<int32_t>(R.count);
    cp.src_stride = static_cast<int32_t>(R.src);
    cp.dst_stride = static_cast<int32_t>(R.dst);
    if (pitched) {
      cp.cols = static_cast<int32_t>(u.dims[cols_dim].count);
      cp.imm[kPitchImm] = static_cast<int32_t>(u.dims[cols_dim].dst);
    } else {
      cp.cols = static_cast<int32_t>(u.row);
    }
    add(cp);
  });
}

// Cuts a box into units of at most `chunk` bytes with at most `strided` dims each.
void Units(const MoveBox& b, int64_t chunk, int strided, int64_t burst, std::vector<Unit>& out) {
  const bool fill = b.input == kFillInput;
  MoveBox laid = b;  // a fill box is laid out as its destination (rows contiguous there)
  if (fill) {
    laid.src_offset = 0;
    laid.src_strides = b.dst_strides;
  }
  const Canonical c = Canonicalize(laid);
  const int n = static_cast<int>(c.dims.size());
  if (!fill && Permutable(c, burst)) {  // tiles of whole outer indices (at least one)
    const Dim O = c.dims[0];
    const int64_t per = O.src;  // bytes of one outer index
    const int64_t ob = std::max<int64_t>(1, std::min(O.count, chunk / per));
    if (ob * per <= chunk) {
      for (int64_t i = 0; i < O.count; i += ob) {
        Unit u{b.input, b.output, b.src_offset + i * O.src, b.dst_offset + i * O.dst, c.row, c.dims};
        u.dims[0].count = std::min(ob, O.count - i);
        u.permute = true;
        out.push_back(std::move(u));
      }
      return;
    }
  }
  if (!fill && Transposable(c)) {  // blocks of a_t x b_t bytes: load rows a_t long, store rows b_t long
    const Dim A = c.dims[0], B = c.dims[1];
    int64_t at = std::min<int64_t>({A.count, 128, chunk});
    const int64_t bt = std::min(B.count, std::max<int64_t>(1, chunk / at));
    if (bt == B.count) at = std::min(A.count, std::max<int64_t>(1, chunk / bt));
    for (int64_t i = 0; i < A.count; i += at)
      for (int64_t j = 0; j < B.count; j += bt) {
        Unit u{b.input, b.output, b.src_offset + i * A.src + j * B.src, b.dst_offset + i * A.dst + j * B.dst, 1,
               {{std::min(at, A.count - i), A.src, A.dst}, {std::min(bt, B.count - j), B.src, B.dst}}};
        u.transpose = true;
        out.push_back(std::move(u));
      }
    return;
  }
  if (c.row > chunk) {  // rows longer than a slot: pieces of a row, every dim outer
    ForEachIndex(c.dims, b.src_offset, b.dst_offset, [&](int64_t s, int64_t d) {
      for (int64_t off = 0; off < c.row; off += chunk)
        out.push_back({b.input, b.output, s + off, d + off, std::min(chunk, c.row - off), {}});
    });
    return;
  }
  int k = std::min(strided, n);
  auto inner_bytes = [&](int kk) {  // row x every inner dim but the outermost of the kk
    int64_t v = c.row;
    for (int i = n - kk + 1; i < n; ++i) v *= c.dims[i].count;
    return v;
  };
  while (k > 1 && inner_bytes(k) > chunk) --k;
  const std::vector<Dim> outer(c.dims.begin(), c.dims.begin() + (n - k));
  const std::vector<Dim> inner(c.dims.begin() + (n - k), c.dims.end());
  const int64_t piece = k > 0 ? std::max<int64_t>(1, chunk / inner_bytes(k)) : 1;
  ForEachIndex(outer, b.src_offset, b.dst_offset, [&](int64_t s, int64_t d) {
    if (k == 0) {
      out.push_back({b.input, b.output, s, d, c.row, {}});
      return;
    }
    for (int64_t i = 0; i < inner[0].count; i += piece) {
      Unit u{b.input, b.output, s + i * inner[0].src, d + i * inner[0].dst, c.row, inner};
      u.dims[0].count = std::min(piece, inner[0].count - i);
      out.push_back(std::move(u));
    }
  });
}

// The DMA of one side of a unit: the dims contiguous on that side (stride = the bytes inside
// them, as in SRAM) fold into the row; the rest are strided dims.
Instr UnitDma(const Unit& u, bool load, int64_t dram_base, int64_t sram) {
  Instr in{.op = load ? Opcode::kDmaLoad : Opcode::kDmaStore};
  int64_t row = u.row;
  int i = static_cast<int>(u.dims.size()) - 1;
  for (; i >= 0 && (load ? u.dims[i].src : u.dims[i].dst) == row; --i) row *= u.dims[i].count;
  in.dram_addr = dram_base + (load ? u.src : u.dst);
  in.sram_addr = sram;
  in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(row);
  in.ndims = static_cast<uint8_t>(i + 1);
  int64_t sram_stride = row;
  for (int d = i; d >= 0; --d) {
    const int32_t count = static_cast<int32_t>(u.dims[d].count);
    in.dims[d] = {count, load ? u.dims[d].src : u.dims[d].dst, sram_stride, 0, count};
    sram_stride *= count;
  }
  return in;
}

}  // namespace

int64_t MoveBox::bytes() const {
  return std::accumulate(counts.begin(), counts.end(), int64_t{1}, std::multiplies<>());
}

int64_t MoveLayer::bytes() const {
  int64_t n = 0;
  for (const MoveBox& b : boxes) n += b.bytes();
  return n;
}

bool MoveLayer::element_rows() const {
  for (const MoveBox& b : boxes) {
    const Canonical c = Canonicalize(b);
    if (c.row == 1 && !c.dims.empty()) return true;
  }
  return false;
}

bool MoveLayer::identity() const {
  if (boxes.size() != 1 || input_bytes.size() != 1 || output_bytes.size() != 1) return false;
  const MoveBox& b = boxes[0];
  if (b.src_offset != 0 || b.dst_offset != 0 || b.bytes() != input_bytes[0] || b.bytes() != output_bytes[0]) return false;
  const Canonical c = Canonicalize(b);
  return c.dims.empty();
}

std::vector<int64_t> NpuByteStrides(const std::vector<int64_t>& dims) {
  const int r = static_cast<int>(dims.size());
  std::vector<int64_t> s(r, 1);
  if (r == 4) {  // N, C, H, W stored as N, H, W, C
    s[1] = 1;
    s[3] = dims[1];
    s[2] = dims[1] * dims[3];
    s[0] = dims[1] * dims[2] * dims[3];
    return s;
  }
  for (int i = r - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

StatusOr<Program> LowerMove(const MoveLayer& l, const Target& t, int64_t chunk, bool double_buffer) {
  if (chunk < 1) return InvalidArgument("move layer '{}': chunk {} bytes", l.name, chunk);
  if (l.input_bytes.empty() || l.output_bytes.empty()) return InvalidArgument("move layer '{}': no tensors", l.name);
  const int nbuf = double_buffer ? 2 : 1;
  const int strided = std::min(kMaxDmaDims, t.dma.max_dims - 1);
  std::vector<Unit> units;
  for (const MoveBox& b : l.boxes) {
    if ((b.input < 0 && b.input != kFillInput) || b.input >= static_cast<int>(l.input_bytes.size()) || b.output < 0 ||
        b.output >= static_cast<int>(l.output_bytes.size()) || b.counts.size() != b.src_strides.size() ||
        b.counts.size() != b.dst_strides.size())
      return InvalidArgument("move layer '{}': malformed box", l.name);
    if (b.bytes() > 0) Units(b, chunk, strided, t.dram.burst_bytes, units);
  }
  // A layer with transposing units gives each slot a second half (the source-order block)
  // and a vector stage between load and store.
  const bool transposing =
      std::any_of(units.begin(), units.end(), [](const Unit& u) { return u.transpose || u.permute; });
  const int64_t half = AlignUp(chunk, t.shared_sram.alignment);
  const int64_t slot = half * (transposing ? 2 : 1);
  // Tiles: consecutive units up to `chunk` bytes.
  std::vector<std::pair<size_t, size_t>> tiles;  // [first, last) unit
  int64_t fill = 0;
  for (size_t i = 0; i < units.size(); ++i) {
    const int64_t b = units[i].bytes();
    if (tiles.empty() || fill + b > chunk) {
      tiles.push_back({i, i});
      fill = 0;
    }
    tiles.back().second = i + 1;
    fill += b;
  }
  const int cores = static_cast<int>(std::min<int64_t>(t.ai_cores.count, std::max<size_t>(1, tiles.size())));
  if (slot * nbuf * cores > t.shared_sram.bytes)
    return InvalidArgument("move layer '{}': {} slots of {} bytes on {} cores need {} bytes of SRAM, the target has {}",
                           l.name, nbuf, slot, cores, slot * nbuf * cores, t.shared_sram.bytes);
  Program p;
  std::vector<int64_t> in_addr, out_addr;
  int64_t addr = 0;
  for (size_t i = 0; i < l.input_bytes.size(); ++i) {
    in_addr.push_back(addr);
    p.regions.push_back({l.name + (i ? fmt::format(".input{}", i) : ".input"), addr, l.input_bytes[i]});
    addr = AlignUp(addr + l.input_bytes[i], 64);
  }
  for (size_t i = 0; i < l.output_bytes.size(); ++i) {
    out_addr.push_back(addr);
    p.regions.push_back({l.name + (i ? fmt::format(".output{}", i) : ".output"), addr, l.output_bytes[i]});
    addr = AlignUp(addr + l.output_bytes[i], 64);
  }
  p.dram_bytes = addr;
  p.cores_used = cores;
  enum : int32_t { kFree = 0, kFull = 1, kLoaded = 2 };
  p.semaphores = transposing ? 3 : 2;
  p.instrs.push_back(Instr{.op = Opcode::kTaskBegin, .sem = 0});
  for (int c = 0; c < cores; ++c) {
    std::vector<Instr> ld, vec, st;
    auto add = [c](std::vector<Instr>& q, QueueKind k, Instr in) {
      in.core = static_cast<uint8_t>(c);
      in.queue = k;
      q.push_back(in);
    };
    for (int s = 0; s < nbuf; ++s) add(st, QueueKind::kStore, Instr{.op = Opcode::kSignal, .sem = kFree});
    int s = 0;
    for (size_t ti = c; ti < tiles.size(); ti += cores) {
      const int64_t base = (int64_t{c} * nbuf + s) * slot;
      add(ld, QueueKind::kLoad, Instr{.op = Opcode::kWait, .sem = kFree});
      if (transposing) add(vec, QueueKind::kVector, Instr{.op = Opcode::kWait, .sem = kLoaded});
      add(st, QueueKind::kStore, Instr{.op = Opcode::kWait, .sem = kFull});
      int64_t off = 0;
      for (size_t ui = tiles[ti].first; ui < tiles[ti].second; ++ui) {
        const Unit& u = units[ui];
        Instr lu = UnitDma(u, true, in_addr[u.input], base + off);
        Instr su = UnitDma(u, false, out_addr[u.output], base + off);
        if (u.transpose) {  // [b][a] in the second half, COPY to [a][b] in the first
          const Dim &A = u.dims[0], &B = u.dims[1];
          const int64_t src_block = base + half + off;
          lu = ContiguousDma(Opcode::kDmaLoad, in_addr[u.input] + u.src, src_block, A.count, 0);
          lu.ndims = 1;
          lu.dims[0] = {static_cast<int32_t>(B.count), B.src, A.count, 0, static_cast<int32_t>(B.count)};
          su = ContiguousDma(Opcode::kDmaStore, out_addr[u.output] + u.dst, base + off, B.count, 0);
          su.ndims = 1;
          su.dims[0] = {static_cast<int32_t>(A.count), A.dst, B.count, 0, static_cast<int32_t>(A.count)};
          Instr cp{.op = Opcode::kCopy};
          cp.src = src_block;
          cp.dst = base + off;
          cp.rows = static_cast<int32_t>(B.count);
          cp.cols = static_cast<int32_t>(A.count);
          cp.src_stride = static_cast<int32_t>(A.count);
          cp.dst_stride = 1;
          cp.imm[kPitchImm] = static_cast<int32_t>(B.count);
          add(vec, QueueKind::kVector, cp);
        }
        if (u.permute) {  // the source-order range in the second half, COPYs into the first
          const int64_t src_block = base + half + off;
          lu = ContiguousDma(Opcode::kDmaLoad, in_addr[u.input] + u.src, src_block, u.bytes(), 0);
          su = ContiguousDma(Opcode::kDmaStore, out_addr[u.output] + u.dst, base + off, u.bytes(), 0);
          if (PitchedPermute(u)) {  // one transposing COPY per outer index
            EmitPitchedPermute(u, src_block, base + off, [&](const Instr& cp) { add(vec, QueueKind::kVector, cp); });
            lu.region = static_cast<int16_t>(u.input);
            su.region = static_cast<int16_t>(in_addr.size() + u.output);
            add(ld, QueueKind::kLoad, lu);
            add(st, QueueKind::kStore, su);
            off += u.bytes();
            continue;
          }
          EmitPermuteCopies(u, src_block, base + off, [&](const Instr& cp) { add(vec, QueueKind::kVector, cp); });
        }
        if (u.input == kFillInput) {  // every row padded with the fill byte: no DRAM read
          lu = UnitDma(u, true, in_addr[0], base + off);
          lu.dram_addr = in_addr[0];
          if (lu.ndims == 0) {
            lu.ndims = 1;
            lu.dims[0] = {1, 0, lu.row_bytes, 0, 1};
          }
          lu.dims[0].valid_lo = lu.dims[0].valid_hi = 0;
          lu.pad = l.fill;
        }
        lu.region = static_cast<int16_t>(std::max(0, u.input));
        su.region = static_cast<int16_t>(in_addr.size() + u.output);
        add(ld, QueueKind::kLoad, lu);
        add(st, QueueKind::kStore, su);
        off += u.bytes();
      }
      if (transposing) {
        add(ld, QueueKind::kLoad, Instr{.op = Opcode::kSignal, .sem = kLoaded});
        add(vec, QueueKind::kVector, Instr{.op = Opcode::kSignal, .sem = kFull});
      } else {
        add(ld, QueueKind::kLoad, Instr{.op = Opcode::kSignal, .sem = kFull});
      }
      add(st, QueueKind::kStore, Instr{.op = Opcode::kSignal, .sem = kFree});
      s = (s + 1) % nbuf;
    }
    p.instrs.insert(p.instrs.end(), ld.begin(), ld.end());
    p.instrs.insert(p.instrs.end(), vec.begin(), vec.end());
    p.instrs.insert(p.instrs.end(), st.begin(), st.end());
  }
  p.instrs.push_back(Instr{.op = Opcode::kTaskEnd, .sem = 0});
  p.task_names = {fmt::format("{} ({} {} B)", l.name, l.what, l.bytes())};
  return p;
}

}  // namespace edgec::npu
