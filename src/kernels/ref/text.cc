// Reference kernel of the text family: TfIdfVectorizer over integer tokens. For each row, each
// n in [min_gram_length, max_gram_length] and each skip s in [0, max_skip_count] (unigrams
// once: a skip means nothing for them), the n tokens at i, i+s+1, ..., i+(n-1)(s+1) of the
// row form an n-gram; one found in the pool adds 1 to its output index. Then TF keeps the
// counts, IDF puts the weight where a count is > 0, TFIDF multiplies count and weight.
// Guarded by the ONNX node tests (tfidfvectorizer_*).
#include "ir/tfidf.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

Status TfIdfVectorizer(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  ASSIGN_OR_RETURN(TfIdfPool pool, ParseTfIdfPool(ctx.attrs, ctx.label));
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t c = x.rank() == 2 ? x.dim(1) : x.dim(0);
  const std::vector<int64_t> tokens = x.ToInt64Vector();
  float* out = y.data<float>();
  std::vector<int64_t> gram;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* row = tokens.data() + r * c;
    float* counts = out + r * pool.width;
    for (int64_t n = pool.min_n; n <= pool.max_n; ++n) {
      const auto& grams = pool.grams[n - 1];
      if (grams.empty()) continue;
      const int64_t skips = n == 1 ? 0 : pool.max_skip;
      for (int64_t s = 0; s <= skips; ++s) {
        const int64_t step = s + 1;
        for (int64_t i = 0; i + (n - 1) * step < c; ++i) {
          gram.clear();
          for (int64_t t = 0; t < n; ++t) gram.push_back(row[i + t * step]);
          if (auto it = grams.find(gram); it != grams.end()) counts[it->second] += 1;
        }
      }
    }
    for (int64_t j = 0; j < pool.width; ++j) {
      const float w = pool.weights.empty() ? 1.0f : pool.weights[j];
      if (pool.mode == 1) counts[j] = counts[j] > 0 ? w : 0;
      else if (pool.mode == 2) counts[j] *= w;
    }
  }
  return Status::Ok();
}

}  // namespace edgec::ref
