// The fuzz targets' shared helper: the readers under test take a path, so each input is
// written to a file of this process's own (in /dev/shm when there is one) and read back.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace edgec::fuzz {

inline std::string InputPath(const char* suffix) {
  const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return std::string(dir) + "/edgec_fuzz_" + std::to_string(getpid()) + suffix;
}

// Writes the input to the process's file and returns its path.
inline std::string WriteInput(const uint8_t* data, size_t size, const char* suffix) {
  const std::string path = InputPath(suffix);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace edgec::fuzz
