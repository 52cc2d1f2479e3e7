// Tensors in and out of files and text: .npy files, seeded random inputs, dims as text and a
// tensor's values for printing — what a program needs to feed a Session from disk and show
// what came out (the CLI's `--input NAME=FILE.npy`, `--shape NAME=1x3x224x224`, `run`'s
// summary lines).
//
//   auto x = edgec::ReadNpyFile("image.npy");                     // StatusOr<TensorView> (owning)
//   auto r = edgec::RandomTensor(edgec::DataType::kF32, {1, 3, 224, 224}, 7);
//   edgec::WriteNpyFile("out.npy", (*outputs)[0].tensor);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgec/export.h"
#include "edgec/status.h"
#include "edgec/tensor.h"

namespace edgec {
inline namespace v1 {

// A .npy file (format 1.0-3.0, C order, little-endian numeric or bool): an owning view.
EDGEC_API StatusOr<TensorView> ReadNpyFile(const std::string& path);
EDGEC_API Status WriteNpyFile(const std::string& path, const TensorView& tensor);

// Seeded random data of this dtype and dims (a dim < 0 becomes 1): floats normal(0, 1),
// integers 0-9, bools half true. The same seed gives the same tensor in every edgec.
EDGEC_API TensorView RandomTensor(DataType dtype, std::vector<int64_t> dims, uint64_t seed);

// "1x3x224x224" (also "1,3,224,224") as dims; an error names the text.
EDGEC_API StatusOr<std::vector<int64_t>> ParseDimsText(const std::string& text);

// Values written as text, "16000" or "0.5,1,2", as a tensor of this dtype and dims (an owning
// view): the count must be the dims' product; an integer or bool dtype takes only integral
// values in its range (bool: 0, 1, true, false). An error names the text and the value.
EDGEC_API StatusOr<TensorView> TensorFromText(const std::string& text, DataType dtype, std::vector<int64_t> dims);

// "f32[1,3,224,224]".
EDGEC_API std::string TypeString(const TensorView& tensor);

// Every element as a double, in row-major order (f16/bf16 widened).
EDGEC_API std::vector<double> ToDoubles(const TensorView& tensor);

}  // namespace v1
}  // namespace edgec
