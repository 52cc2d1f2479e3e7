// Reference kernels for the signal family (see ops.def): window functions, the discrete
// Fourier transform (a direct sum in double, O(n²) per transform), the short-time Fourier
// transform (windowed frames, each through the same sum) and the mel filter bank.
#include <cmath>
#include <complex>
#include <vector>

#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

using Complex = std::complex<double>;

// w[n] = a0 − a1 cos(2πn/d) + a2 cos(4πn/d), d = size (periodic) or size − 1.
Status CosineWindow(KernelContext& ctx, double a0, double a1, double a2) {
  Tensor& y = ctx.outputs[0];
  const int64_t size = y.numel();
  const bool periodic = ctx.attrs.GetInt("periodic", 1) != 0;
  const double d = static_cast<double>(periodic ? size : size - 1);
  for (int64_t n = 0; n < size; ++n) {
    const double t = d > 0 ? 2 * M_PI * static_cast<double>(n) / d : 0;
    StoreFromDouble(y.dtype(), y.raw(), n, a0 - a1 * std::cos(t) + a2 * std::cos(2 * t));
  }
  return Status::Ok();
}

// out[k] = Σ_n in[n] e^{∓2πi kn/len} over n < min(len, in.size()) (zero padding beyond),
// for k < out.size(); the inverse uses +, divided by len.
void Dft(const std::vector<Complex>& in, int64_t len, bool inverse, std::vector<Complex>& out) {
  const double sign = inverse ? 1.0 : -1.0;
  const int64_t used = std::min<int64_t>(len, static_cast<int64_t>(in.size()));
  for (size_t k = 0; k < out.size(); ++k) {
    Complex sum = 0;
    for (int64_t n = 0; n < used; ++n) {
      // k·n mod len keeps the angle small and exact for long transforms.
      const double angle = sign * 2 * M_PI * static_cast<double>((static_cast<int64_t>(k) * n) % len) / static_cast<double>(len);
      sum += in[n] * Complex(std::cos(angle), std::sin(angle));
    }
    out[k] = inverse ? sum / static_cast<double>(len) : sum;
  }
}

// Writes every out[k] as a (real, imaginary) pair from element at(k) of y.
template <typename At>
void StoreComplex(Tensor& y, const std::vector<Complex>& out, At at) {
  for (int64_t k = 0; k < static_cast<int64_t>(out.size()); ++k) {
    StoreFromDouble(y.dtype(), y.raw(), at(k), out[k].real());
    StoreFromDouble(y.dtype(), y.raw(), at(k) + 1, out[k].imag());
  }
}

}  // namespace

Status HannWindow(KernelContext& ctx) { return CosineWindow(ctx, 0.5, 0.5, 0); }
Status HammingWindow(KernelContext& ctx) { return CosineWindow(ctx, 25.0 / 46.0, 21.0 / 46.0, 0); }
Status BlackmanWindow(KernelContext& ctx) { return CosineWindow(ctx, 0.42, 0.5, 0.08); }

Status DFT(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const std::vector<double> x = xt.ToDoubleVector();
  Tensor& y = ctx.outputs[0];
  const int rank = xt.rank();
  int64_t axis = ctx.attrs.GetInt("axis", 1);
  if (axis < 0) axis += rank;
  const bool inverse = ctx.attrs.GetInt("inverse", 0) != 0;
  const int64_t n = xt.dim(static_cast<int>(axis)), parts = xt.dim(rank - 1);
  const int64_t len = ctx.input(1) ? ctx.input(1)->ToInt64Vector()[0] : n;
  const int64_t m = y.dim(static_cast<int>(axis));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= xt.dim(d);
  for (int d = static_cast<int>(axis) + 1; d < rank - 1; ++d) inner *= xt.dim(d);
  std::vector<Complex> in(static_cast<size_t>(n)), out(static_cast<size_t>(m));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = ((o * n + k) * inner + i) * parts;
        in[k] = Complex(x[at], parts == 2 ? x[at + 1] : 0.0);
      }
      Dft(in, len, inverse, out);
      StoreComplex(y, out, [&](int64_t k) { return ((o * m + k) * inner + i) * 2; });
    }
  }
  return Status::Ok();
}

Status STFT(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const std::vector<double> x = xt.ToDoubleVector();
  const int64_t step = ctx.inputs[1]->ToInt64Vector()[0];
  std::vector<double> window;
  if (const Tensor* w = ctx.input(2)) window = w->ToDoubleVector();
  Tensor& y = ctx.outputs[0];
  const int64_t batch = xt.dim(0), length = xt.dim(1), parts = xt.dim(2);
  const int64_t frames = y.dim(1), bins = y.dim(2);
  const int64_t frame = window.empty() ? ctx.inputs[3]->ToInt64Vector()[0] : static_cast<int64_t>(window.size());
  std::vector<Complex> in(static_cast<size_t>(frame)), out(static_cast<size_t>(bins));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t k = 0; k < frame; ++k) {
        const int64_t t = f * step + k;
        if (t >= length) return ctx.Error("frame {} reads past the signal's {} samples", f, length);
        const double w = window.empty() ? 1.0 : window[k];
        const int64_t at = (b * length + t) * parts;
        in[k] = Complex(x[at] * w, parts == 2 ? x[at + 1] * w : 0.0);
      }
      Dft(in, frame, false, out);
      StoreComplex(y, out, [&](int64_t k) { return ((b * frames + f) * bins + k) * 2; });
    }
  }
  return Status::Ok();
}

// MelWeightMatrix: num_mel_bins + 2 points evenly spaced on the mel scale (2595 log10(1 +
// f/700)) from lower to upper edge, each mapped to a spectrogram bin ⌊(dft_length + 1) f /
// sample_rate⌋; filter i rises linearly from point i to point i + 1 and falls to point i + 2
// (ONNX's reference definition, the edges' mel values in f32 as it computes them).
Status MelWeightMatrix(KernelContext& ctx) {
  const int64_t mel_bins = ctx.inputs[0]->ToInt64Vector()[0];
  const int64_t dft_length = ctx.inputs[1]->ToInt64Vector()[0];
  const int64_t rate = ctx.inputs[2]->ToInt64Vector()[0];
  const float lower = static_cast<float>(ctx.inputs[3]->ToDoubleVector()[0]);
  const float upper = static_cast<float>(ctx.inputs[4]->ToDoubleVector()[0]);
  Tensor& y = ctx.outputs[0];
  const int64_t spectrogram_bins = y.dim(0);
  const float low_mel = 2595.0f * std::log10(1.0f + lower / 700.0f);
  const float high_mel = 2595.0f * std::log10(1.0f + upper / 700.0f);
  const double mel_step = static_cast<double>((high_mel - low_mel) / static_cast<float>(mel_bins + 2));
  std::vector<int64_t> points;
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double mel = static_cast<double>(i) * mel_step + static_cast<double>(low_mel);
    const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
    points.push_back(static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate))));
  }
  std::vector<double> w(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
  auto set = [&](int64_t j, int64_t i, double v) -> Status {
    if (j < 0 || j >= spectrogram_bins) {
      return ctx.Error("mel filter {} reaches spectrogram bin {} outside [0, {})", i, j, spectrogram_bins);
    }
    w[j * mel_bins + i] = v;
    return Status::Ok();
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t lo = points[i], center = points[i + 1], hi = points[i + 2];
    if (center == lo) {
      RETURN_IF_ERROR(set(center, i, 1.0));
    } else {
      for (int64_t j = lo; j <= center; ++j) {
        RETURN_IF_ERROR(set(j, i, static_cast<double>(j - lo) / static_cast<double>(center - lo)));
      }
    }
    if (hi > center) {
      for (int64_t j = center; j < hi; ++j) {
        RETURN_IF_ERROR(set(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - center)));
      }
    }
  }
  for (size_t k = 0; k < w.size(); ++k) StoreFromDouble(y.dtype(), y.raw(), static_cast<int64_t>(k), w[k]);
  return Status::Ok();
}

}  // namespace edgec::ref
