// Calibration inputs: .npy files and sample folders, PNG round trip, image preprocessing
// (resize, center crop, mean/std, channel order, layout), clear errors, and the progress
// report's text.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <jpeglib.h>

#include "ir/infer.h"
#include "quant/calibration_data.h"
#include "support/npy.h"
#include "support/progress.h"

namespace edgec::quant {
namespace {
namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("edgec_calib_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Graph OneInput(Dims dims) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, dims));
  Node* n = g.AddNode(OpKind::kRelu, "r", {x}, 1);
  g.MarkOutput(n->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(CalibrationData, NpyFilesAndErrors) {
  Graph g = OneInput({1, 2});
  fs::path d = FreshDir("npy");
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(WriteNpy((d / fmt::format("s{}.npy", i)).string(),
                         Tensor::FromVector<float>(DType::kF32, {1, 2}, {float(i), 1.f})).ok());
  auto s = LoadCalibrationSet(g, d.string(), {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[2].at("x").data<float>()[0], 2.f);  // file-name order
  EXPECT_EQ(LoadCalibrationSet(g, d.string(), {}, 2)->size(), 2u);
  ASSERT_TRUE(WriteNpy((d / "s9.npy").string(), Tensor(DType::kF32, {1, 3})).ok());
  auto bad = LoadCalibrationSet(g, d.string(), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("s9.npy"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(LoadCalibrationSet(g, (d / "missing").string(), {}).ok());
}

TEST(CalibrationData, SampleFoldersForSeveralInputs) {
  Graph g;
  Value* a = g.AddInput("a", MakeType(DType::kF32, {2}));
  Value* b = g.AddInput("in/b", MakeType(DType::kF32, {2}));
  g.MarkOutput(g.AddNode(OpKind::kAdd, "add", {a, b}, 1)->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  fs::path d = FreshDir("folders");
  fs::create_directories(d / "0");
  ASSERT_TRUE(WriteNpy((d / "0" / "a.npy").string(), Tensor(DType::kF32, {2})).ok());
  ASSERT_TRUE(WriteNpy((d / "0" / "in_b.npy").string(), Tensor(DType::kF32, {2})).ok());
  auto s = LoadCalibrationSet(g, d.string(), {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->size(), 1u);
  fs::create_directories(d / "1");
  ASSERT_TRUE(WriteNpy((d / "1" / "a.npy").string(), Tensor(DType::kF32, {2})).ok());
  auto bad = LoadCalibrationSet(g, d.string(), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no in_b.npy for model input 'in/b'"), std::string::npos)
      << bad.status().message();
}

TEST(CalibrationData, PngRoundTripAndPreprocessing) {
  RgbImage img;
  img.height = 6, img.width = 10;
  for (int64_t i = 0; i < img.height * img.width; ++i) {
    img.pixels.insert(img.pixels.end(), {255, 0, 128});
  }
  img.pixels[(2 * 10 + 4) * 3] = 0;  // one darker red pixel at (y 2, x 4)
  fs::path d = FreshDir("png");
  ASSERT_TRUE(WritePng((d / "a.png").string(), img).ok());
  auto back = ReadImage((d / "a.png").string());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->pixels, img.pixels);

  ImagePreprocess pre;
  pre.mean = {0.5f, 0.5f, 0.5f};
  pre.std = {0.25f, 0.25f, 0.25f};
  // Center crop 4x4 of 10x6: rows 1..4, columns 3..6, so the dark pixel lands at (1, 1).
  auto t = PreprocessImage(img, {1, 3, 4, 4}, pre, "a.png");
  ASSERT_TRUE(t.ok()) << t.status().message();
  const float* p = t->data<float>();
  EXPECT_FLOAT_EQ(p[0], 2.0f);                       // R: (1 - .5) / .25
  EXPECT_FLOAT_EQ(p[1 * 4 + 1], -2.0f);              // the dark pixel's R
  EXPECT_FLOAT_EQ(p[16], -2.0f);                     // G plane
  EXPECT_NEAR(p[32], (128 / 255.0 - 0.5) / 0.25, 1e-6);  // B plane
  pre.bgr = true;
  pre.layout = "auto";
  auto nhwc = PreprocessImage(img, {1, 4, 4, 3}, pre, "a.png");
  ASSERT_TRUE(nhwc.ok());
  EXPECT_NEAR(nhwc->data<float>()[0], (128 / 255.0 - 0.5) / 0.25, 1e-6);  // B first
  EXPECT_FLOAT_EQ(nhwc->data<float>()[2], 2.0f);
  // Resize the shorter side to 3 first: 5x3, smaller than the crop: a clear error.
  pre.resize = 3;
  auto small = PreprocessImage(img, {1, 3, 4, 4}, pre, "a.png");
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("smaller than the input"), std::string::npos);
  // Loading a folder of images.
  Graph g = OneInput({1, 3, 4, 4});
  auto s = LoadCalibrationSet(g, d.string(), {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->size(), 1u);
  std::ofstream(d / "b.jpg") << "not a jpeg";
  auto bad = LoadCalibrationSet(g, d.string(), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("b.jpg: not a PNG or JPEG"), std::string::npos)
      << bad.status().message();
}

// A JPEG written with libjpeg's compressor (quality 95) for the decoder to read back.
void WriteJpeg(const std::string& path, const RgbImage& img) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = static_cast<JDIMENSION>(img.width);
  c.image_height = static_cast<JDIMENSION>(img.height);
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 95, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(img.pixels.data()) + c.next_scanline * img.width * 3;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::fclose(f);
}

TEST(CalibrationData, JpegDecodes) {
  RgbImage img;
  img.height = 16, img.width = 24;
  for (int64_t i = 0; i < img.height * img.width; ++i) img.pixels.insert(img.pixels.end(), {200, 40, 90});
  fs::path d = FreshDir("jpeg");
  WriteJpeg((d / "a.jpg").string(), img);
  auto back = ReadImage((d / "a.jpg").string());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->height, 16);
  EXPECT_EQ(back->width, 24);
  for (size_t i = 0; i < back->pixels.size(); ++i)
    ASSERT_NEAR(back->pixels[i], img.pixels[i], 3) << i;  // lossy, but a flat colour survives
  // A truncated file (half of a real JPEG) is refused, not half-decoded.
  {
    std::ifstream in(d / "a.jpg", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(d / "c.jpg", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  auto truncated = ReadImage((d / "c.jpg").string());
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("c.jpg"), std::string::npos);
  std::ofstream(d / "b.jpg", std::ios::binary) << std::string("\xFF\xD8\xFF\xE0garbage", 11);
  auto bad = ReadImage((d / "b.jpg").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("b.jpg: cannot decode JPEG"), std::string::npos)
      << bad.status().message();
}

TEST(Progress, TextAndPlainLines) {
  EXPECT_EQ(Progress::Format("calibrating", 5, 10, 2.0, true),
            "calibrating [############............] 5/10 2.5/s ETA 0:02");
  EXPECT_EQ(Progress::Format("x", 10, 10, 4.0, false), "x 10/10 2.5/s in 0:04");
  const fs::path f = FreshDir("progress") / "log.txt";
  FILE* out = std::fopen(f.string().c_str(), "w");
  {
    Progress p("step", 20, out, /*tty=*/0);
    for (int i = 0; i < 20; ++i) p.Step();
    p.Done();
  }
  std::fclose(out);
  std::ifstream in(f);
  std::string line, last;
  int lines = 0;
  while (std::getline(in, line)) ++lines, last = line;
  EXPECT_LE(lines, 11);  // one line per 10%, not per step
  EXPECT_GE(lines, 10);
  EXPECT_EQ(last.rfind("step 20/20", 0), 0u) << last;
  EXPECT_EQ(last.find('\r'), std::string::npos);
}

}  // namespace
}  // namespace edgec::quant
