#include "runtime/artifact.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <zlib.h>

#include "runtime/artifact_generated.h"
#include "support/limits.h"

namespace edgec::artifact_io {

namespace fb = edgec::artifact;

const char* UnitName(Unit u) { return u == Unit::kNpu ? "npu" : "cpu"; }

const char* HandOverName(HandOverKind k) {
  switch (k) {
    case HandOverKind::kFlush: return "flush";
    case HandOverKind::kInvalidate: return "invalidate";
    case HandOverKind::kBarrier: return "barrier";
  }
  return "?";
}

namespace {

// The file is the FlatBuffer followed by a trailer: "EDGCSUM1" and the CRC-32 of the buffer
// (zlib), little-endian in 8 bytes. A flipped bit anywhere (weights included) is refused
// instead of computing a silently wrong answer.
constexpr char kTrailerMagic[8] = {'E', 'D', 'G', 'C', 'S', 'U', 'M', '1'};
constexpr size_t kTrailerBytes = 16;

uint32_t Crc32(const uint8_t* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = crc32(crc, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

void PutTrailer(uint8_t* out, const uint8_t* buffer, size_t size) {
  std::memcpy(out, kTrailerMagic, 8);
  const uint32_t crc = Crc32(buffer, size);
  const uint64_t v = crc;
  for (int i = 0; i < 8; ++i) out[8 + i] = static_cast<uint8_t>(v >> (8 * i));
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> Strings(
    flatbuffers::FlatBufferBuilder& b, const std::vector<std::string>& v) {
  return b.CreateVectorOfStrings(v);
}

flatbuffers::Offset<flatbuffers::Vector<uint8_t>> AlignedBytes(flatbuffers::FlatBufferBuilder& b,
                                                                const std::vector<uint8_t>& v) {
  b.ForceVectorAlignment(v.size(), sizeof(uint8_t), 32);  // FlatBuffers 2.0.8 aligns to at most 32
  return b.CreateVector(v);
}

std::vector<std::string> ToStrings(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (!v) return out;
  for (const auto* s : *v) out.push_back(s ? s->str() : std::string());
  return out;
}

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

}  // namespace

Status WriteArtifact(const std::string& path, const CompiledModel& m) {
  flatbuffers::FlatBufferBuilder b(1 << 20);
  auto graph = AlignedBytes(b, m.graph_onnx);
  auto graph_ir = AlignedBytes(b, m.graph_ir);
  std::vector<flatbuffers::Offset<fb::Segment>> segments;
  for (const Segment& s : m.segments) {
    flatbuffers::Offset<fb::NpuProgram> npu = 0;
    if (s.unit == Unit::kNpu) {
      std::vector<flatbuffers::Offset<fb::Region>> regions;
      for (const Region& r : s.npu.regions) regions.push_back(fb::CreateRegion(b, b.CreateString(r.name), r.addr, r.bytes));
      auto init = AlignedBytes(b, s.npu.dram_init);
      npu = fb::CreateNpuProgram(b, b.CreateVector(s.npu.instructions), Strings(b, s.npu.task_names),
                                 b.CreateVector(regions), s.npu.dram_bytes, init, s.npu.cores_used,
                                 s.npu.semaphores);
    }
    std::vector<flatbuffers::Offset<fb::LayerSram>> layers;
    for (const LayerSram& l : s.layer_plan)
      layers.push_back(fb::CreateLayerSram(b, b.CreateString(l.layer), l.work_addr, l.work_bytes, l.occupancy,
                                           l.prefetch, l.resident_weight_bytes));
    std::vector<flatbuffers::Offset<fb::TensorSram>> tensors;
    for (const TensorSram& x : s.sram_plan)
      tensors.push_back(fb::CreateTensorSram(b, b.CreateString(x.value), x.in_sram, x.addr, x.bytes, x.first, x.last,
                                             b.CreateString(x.reason)));
    std::vector<flatbuffers::Offset<fb::HandOver>> steps;
    for (const HandOver& h : s.hand_over)
      steps.push_back(fb::CreateHandOver(b, static_cast<fb::HandOverKind>(h.kind), b.CreateString(h.value), h.bytes,
                                         h.cycles, h.after));
    segments.push_back(fb::CreateSegment(b, static_cast<fb::Unit>(s.unit), Strings(b, s.nodes), Strings(b, s.inputs),
                                         Strings(b, s.outputs), npu, b.CreateVector(layers), b.CreateVector(tensors),
                                         b.CreateVector(steps)));
  }
  std::vector<flatbuffers::Offset<fb::Placement>> placements;
  for (const Placement& p : m.placements) {
    placements.push_back(fb::CreatePlacement(b, b.CreateString(p.node), static_cast<fb::Unit>(p.unit),
                                             b.CreateString(p.reason), b.CreateString(p.code)));
  }
  std::vector<flatbuffers::Offset<fb::ValuePlacement>> values;
  for (const ValuePlacement& v : m.values) {
    values.push_back(fb::CreateValuePlacement(b, b.CreateString(v.value), v.offset, v.bytes));
  }
  auto root = fb::CreateArtifact(b, kFormatVersion, b.CreateString(m.producer), b.CreateString(m.source_model),
                                 b.CreateString(m.target_json), graph, b.CreateVector(segments),
                                 b.CreateVector(placements), m.arena_bytes, b.CreateVector(values), graph_ir);
  fb::FinishArtifactBuffer(b, root);

  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return InvalidArgument("cannot write '{}'", path);
    out.write(reinterpret_cast<const char*>(b.GetBufferPointer()), static_cast<std::streamsize>(b.GetSize()));
    uint8_t trailer[kTrailerBytes];
    PutTrailer(trailer, b.GetBufferPointer(), b.GetSize());
    out.write(reinterpret_cast<const char*>(trailer), kTrailerBytes);
    if (!out) {
      std::remove(tmp.c_str());
      return InvalidArgument("cannot write '{}' (disk full?)", path);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return InvalidArgument("cannot write '{}'", path);
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<MappedArtifact>> MappedArtifact::Open(const std::string& path) {
  auto a = std::unique_ptr<MappedArtifact>(new MappedArtifact());
  a->path_ = path;
  a->fd_ = ::open(path.c_str(), O_RDONLY);
  if (a->fd_ < 0) return NotFound("cannot open '{}'", path);
  struct stat st{};
  if (::fstat(a->fd_, &st) != 0 || !S_ISREG(st.st_mode)) return InvalidArgument("'{}' is not a regular file", path);
  a->size_ = static_cast<size_t>(st.st_size);
  RETURN_IF_ERROR(CheckModelBytes(st.st_size, path));
  if (a->size_ < 8) return InvalidArgument("'{}' is not an edgec compiled model: {} bytes, too short", path, a->size_);
  void* p = ::mmap(nullptr, a->size_, PROT_READ, MAP_PRIVATE, a->fd_, 0);
  if (p == MAP_FAILED) return InvalidArgument("cannot map '{}'", path);
  a->data_ = static_cast<const uint8_t*>(p);
  if (!fb::ArtifactBufferHasIdentifier(a->data_)) {
    return InvalidArgument("'{}' is not an edgec compiled model (file identifier is not \"EDGC\"; compile one "
                           "with `edgec compile model.onnx -o model.edgec`)", path);
  }
  // The trailer: the buffer's CRC-32 (a file written by this version always has one).
  const size_t body = a->size_ >= kTrailerBytes ? a->size_ - kTrailerBytes : 0;
  if (body < 8 || std::memcmp(a->data_ + body, kTrailerMagic, 8) != 0) {
    return InvalidArgument("'{}' is damaged or truncated: its checksum trailer is missing ({} bytes); recompile it",
                           path, a->size_);
  }
  uint8_t want[kTrailerBytes];
  PutTrailer(want, a->data_, body);
  if (std::memcmp(want + 8, a->data_ + body + 8, 8) != 0) {
    return InvalidArgument("'{}' is damaged: its checksum does not match its contents ({} bytes); recompile it",
                           path, a->size_);
  }
  flatbuffers::Verifier v(a->data_, body, /*max_depth=*/64, /*max_tables=*/10'000'000);
  if (!fb::VerifyArtifactBuffer(v)) {
    return InvalidArgument("'{}' is damaged: its tables or vectors point outside the file ({} bytes); "
                           "recompile it", path, a->size_);
  }
  const fb::Artifact* root = fb::GetArtifact(a->data_);
  if (root->format_version() < kOldestFormatVersion || root->format_version() > kFormatVersion) {
    return InvalidArgument("'{}' has format version {}; this edgec reads versions {} to {} (recompile the model)",
                           path, root->format_version(), kOldestFormatVersion, kFormatVersion);
  }
  const bool has_ir = root->graph_ir() && root->graph_ir()->size() > 0;
  const bool has_onnx = root->graph_onnx() && root->graph_onnx()->size() > 0;
  if (!has_ir && !has_onnx) return InvalidArgument("'{}' holds no graph", path);
  return a;
}

MappedArtifact::~MappedArtifact() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

std::span<const uint8_t> MappedArtifact::graph_onnx() const {
  const auto* g = fb::GetArtifact(data_)->graph_onnx();
  if (!g) return {};
  return {g->data(), g->size()};
}

std::span<const uint8_t> MappedArtifact::graph_ir() const {
  const auto* g = fb::GetArtifact(data_)->graph_ir();
  if (!g) return {};
  return {g->data(), g->size()};
}

std::span<const uint8_t> MappedArtifact::npu_dram_init(size_t segment) const {
  const auto* segs = fb::GetArtifact(data_)->segments();
  if (!segs || segment >= segs->size()) return {};
  const fb::Segment* s = segs->Get(static_cast<flatbuffers::uoffset_t>(segment));
  if (!s->npu() || !s->npu()->dram_init()) return {};
  return {s->npu()->dram_init()->data(), s->npu()->dram_init()->size()};
}

CompiledModel MappedArtifact::Metadata() const {
  const fb::Artifact* r = fb::GetArtifact(data_);
  CompiledModel m;
  m.producer = Str(r->producer());
  m.source_model = Str(r->source_model());
  m.target_json = Str(r->target_json());
  m.arena_bytes = r->arena_bytes();
  if (r->segments()) {
    for (const fb::Segment* s : *r->segments()) {
      Segment seg;
      seg.unit = static_cast<Unit>(s->unit());
      seg.nodes = ToStrings(s->nodes());
      seg.inputs = ToStrings(s->inputs());
      seg.outputs = ToStrings(s->outputs());
      if (const fb::NpuProgram* p = s->npu()) {
        if (p->instructions()) seg.npu.instructions.assign(p->instructions()->begin(), p->instructions()->end());
        seg.npu.task_names = ToStrings(p->task_names());
        if (p->regions()) {
          for (const fb::Region* reg : *p->regions()) seg.npu.regions.push_back({Str(reg->name()), reg->addr(), reg->bytes()});
        }
        seg.npu.dram_bytes = p->dram_bytes();
        seg.npu.cores_used = p->cores_used();
        seg.npu.semaphores = p->semaphores();
      }
      if (s->layer_sram())
        for (const fb::LayerSram* l : *s->layer_sram())
          seg.layer_plan.push_back({Str(l->layer()), l->work_addr(), l->work_bytes(), l->occupancy(), l->prefetch(),
                                    l->resident_weight_bytes()});
      if (s->tensor_sram())
        for (const fb::TensorSram* x : *s->tensor_sram())
          seg.sram_plan.push_back({Str(x->value()), x->in_sram(), x->addr(), x->bytes(), x->first(), x->last(),
                                   Str(x->reason())});
      if (s->hand_over())
        for (const fb::HandOver* h : *s->hand_over()) {
          if (h->kind() > fb::HandOverKind_MAX) continue;
          seg.hand_over.push_back({static_cast<HandOverKind>(h->kind()), Str(h->value()), h->bytes(), h->cycles(),
                                   h->after()});
        }
      m.segments.push_back(std::move(seg));
    }
  }
  if (r->placements()) {
    for (const fb::Placement* p : *r->placements()) {
      m.placements.push_back({Str(p->node()), static_cast<Unit>(p->unit()), Str(p->reason()), Str(p->code())});
    }
  }
  if (r->values()) {
    for (const fb::ValuePlacement* v : *r->values()) m.values.push_back({Str(v->value()), v->offset(), v->bytes()});
  }
  return m;
}

}  // namespace edgec::artifact_io
