#include "support/image.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>

#include <jpeglib.h>
#include <png.h>

namespace edgec {
namespace {

// An image's header may claim any size and decoding allocates it before reading any pixel, so a
// few bytes could ask for gigabytes: fuzz_image found a JPEG claiming 3.5 GB
// (tests/fuzz/make_regressions.py, huge_claimed_size.jpg). Calibration images larger than
// this are refused.
constexpr int64_t kMaxImagePixels = int64_t{1} << 26;  // 64 Mpx, e.g. 8192 x 8192

Status CheckImageSize(const std::string& path, int64_t width, int64_t height) {
  if (width * height > kMaxImagePixels)
    return InvalidArgument("{}: the image claims {} x {} pixels, over the limit of {} pixels", path, width,
                           height, kMaxImagePixels);
  return Status::Ok();
}

StatusOr<RgbImage> ReadPng(const std::string& path) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path.c_str()))
    return IoError("{}: cannot read PNG: {}", path, img.message);
  img.format = PNG_FORMAT_RGB;
  if (Status st = CheckImageSize(path, img.width, img.height); !st.ok()) {
    png_image_free(&img);
    return st;
  }
  RgbImage out;
  out.height = img.height, out.width = img.width;
  out.pixels.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, out.pixels.data(), 0, nullptr)) {
    std::string msg = img.message;
    png_image_free(&img);
    return IoError("{}: cannot decode PNG: {}", path, msg);
  }
  return out;
}

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void OnJpegError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

StatusOr<RgbImage> ReadJpeg(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) return IoError("{}: cannot open", path);
  jpeg_decompress_struct cinfo;
  JpegError err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = OnJpegError;
  err.mgr.output_message = [](j_common_ptr) {};  // warnings (e.g. a truncated file) stay quiet
  RgbImage out;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return IoError("{}: cannot decode JPEG: {}", path, err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, f.get());
  jpeg_read_header(&cinfo, TRUE);
  if (Status st = CheckImageSize(path, cinfo.image_width, cinfo.image_height); !st.ok()) {
    jpeg_destroy_decompress(&cinfo);
    return st;
  }
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  out.height = cinfo.output_height, out.width = cinfo.output_width;
  out.pixels.resize(static_cast<size_t>(out.height) * out.width * 3);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out.pixels.data() + static_cast<size_t>(cinfo.output_scanline) * out.width * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  const long warnings = err.mgr.num_warnings;
  jpeg_destroy_decompress(&cinfo);
  if (warnings > 0) return IoError("{}: corrupt or truncated JPEG ({} decoder warning(s))", path, warnings);
  return out;
}

}  // namespace

StatusOr<RgbImage> ReadImage(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) return IoError("{}: cannot open", path);
  unsigned char magic[8] = {};
  const size_t got = std::fread(magic, 1, sizeof magic, f.get());
  f.reset();
  if (got >= 8 && png_sig_cmp(magic, 0, 8) == 0) return ReadPng(path);
  if (got >= 3 && magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF) return ReadJpeg(path);
  return InvalidArgument("{}: not a PNG or JPEG file", path);
}

Status WritePng(const std::string& path, const RgbImage& image) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = static_cast<png_uint_32>(image.width);
  img.height = static_cast<png_uint_32>(image.height);
  img.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&img, path.c_str(), 0, image.pixels.data(), 0, nullptr))
    return IoError("{}: cannot write PNG: {}", path, img.message);
  return Status::Ok();
}

}  // namespace edgec
