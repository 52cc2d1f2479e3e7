// TfIdfVectorizer's n-gram pool (ONNX ai.onnx TfIdfVectorizer over integer tokens), shared by
// its shape inference and its reference kernel: the pool's n-grams of each length with the
// output index each one counts into.
#pragma once

#include <map>
#include <vector>

#include "ir/attributes.h"
#include "support/status.h"

namespace edgec {

struct TfIdfPool {
  int64_t min_n = 1, max_n = 1, max_skip = 0;
  int64_t width = 0;  // output length: max(ngram_indexes) + 1
  // mode: 0 TF (counts), 1 IDF (weight where the count is > 0), 2 TFIDF (count · weight)
  int mode = 0;
  std::vector<float> weights;  // per output index; empty: 1
  // n-grams of length n (index n - 1) -> output index
  std::vector<std::map<std::vector<int64_t>, int64_t>> grams;
};

// Reads and checks the attributes (pool_int64s, ngram_counts, ngram_indexes, min/max_gram_length,
// max_skip_count, mode, weights); `label` names the node in errors. String pools are refused.
StatusOr<TfIdfPool> ParseTfIdfPool(const Attributes& a, const std::string& label);

}  // namespace edgec
