#include "ir/tfidf.h"

#include <algorithm>

namespace edgec {

StatusOr<TfIdfPool> ParseTfIdfPool(const Attributes& a, const std::string& label) {
  if (a.Has("pool_strings")) return Unimplemented("{}: string pools are not supported (pool_strings)", label);
  TfIdfPool p;
  p.min_n = a.GetInt("min_gram_length", 0);
  p.max_n = a.GetInt("max_gram_length", 0);
  p.max_skip = a.GetInt("max_skip_count", 0);
  if (p.min_n < 1 || p.max_n < p.min_n) {
    return InvalidArgument("{}: min_gram_length {} and max_gram_length {} must satisfy 1 <= min <= max", label,
                           p.min_n, p.max_n);
  }
  if (p.max_skip < 0) return InvalidArgument("{}: max_skip_count {} is negative", label, p.max_skip);
  const std::string mode = a.GetString("mode");
  if (mode == "TF") p.mode = 0;
  else if (mode == "IDF") p.mode = 1;
  else if (mode == "TFIDF") p.mode = 2;
  else return InvalidArgument("{}: mode '{}' must be TF, IDF or TFIDF", label, mode);
  const auto pool = a.GetInts("pool_int64s");
  const auto counts = a.GetInts("ngram_counts");
  const auto indexes = a.GetInts("ngram_indexes");
  if (static_cast<int64_t>(counts.size()) < p.max_n) {
    return InvalidArgument("{}: ngram_counts has {} entries, max_gram_length is {}", label, counts.size(), p.max_n);
  }
  p.grams.resize(counts.size());
  size_t k = 0;  // index into ngram_indexes, over the pool's n-grams in order
  for (size_t n = 1; n <= counts.size(); ++n) {
    const int64_t start = counts[n - 1];
    const int64_t end = n < counts.size() ? counts[n] : static_cast<int64_t>(pool.size());
    if (start < 0 || end < start || end > static_cast<int64_t>(pool.size()) || (end - start) % static_cast<int64_t>(n)) {
      return InvalidArgument("{}: ngram_counts {} does not split the pool of {} into {}-grams", label,
                             DimsToString(counts), pool.size(), n);
    }
    for (int64_t at = start; at < end; at += static_cast<int64_t>(n), ++k) {
      if (k >= indexes.size()) return InvalidArgument("{}: ngram_indexes has fewer entries than the pool has n-grams", label);
      if (indexes[k] < 0) return InvalidArgument("{}: ngram_indexes[{}] is negative", label, k);
      p.grams[n - 1][std::vector<int64_t>(pool.begin() + at, pool.begin() + at + n)] = indexes[k];
      p.width = std::max(p.width, indexes[k] + 1);
    }
  }
  p.weights = a.GetFloats("weights");
  if (!p.weights.empty() && static_cast<int64_t>(p.weights.size()) < p.width) {
    return InvalidArgument("{}: weights has {} entries for {} outputs", label, p.weights.size(), p.width);
  }
  return p;
}

}  // namespace edgec
