// Fuzz target: a `.edgec` file through the mapping and verifier (identifier, FlatBuffers
// offsets, version), the metadata copy and the graph reader (graph_io + ir::Verify).
//
// The file's CRC-32 trailer ("EDGCSUM1" + CRC, runtime/artifact.cc) would refuse nearly every
// mutation before the verifier sees it, so the harness drops any trailer the input ends with
// and appends the right one for the bytes before it: the mutations reach the FlatBuffers
// verifier and the graph reader. (The checksum itself is checked by tests/bad_models.)
#include <zlib.h>

#include <cstring>
#include <vector>

#include "runtime/artifact_run.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr char kMagic[8] = {'E', 'D', 'G', 'C', 'S', 'U', 'M', '1'};
  if (size >= 16 && std::memcmp(data + size - 16, kMagic, 8) == 0) size -= 16;
  std::vector<uint8_t> file(data, data + size);
  const uint32_t crc = static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0), data, static_cast<uInt>(size)));
  file.insert(file.end(), kMagic, kMagic + 8);
  for (int i = 0; i < 8; ++i) file.push_back(i < 4 ? static_cast<uint8_t>(crc >> (8 * i)) : 0);
  const std::string path = edgec::fuzz::WriteInput(file.data(), file.size(), ".edgec");
  auto mapped = edgec::artifact_io::MappedArtifact::Open(path);
  if (!mapped.ok()) return 0;
  auto loaded = edgec::LoadArtifact(**mapped);
  (void)loaded;
  return 0;
}
