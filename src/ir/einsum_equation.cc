#include "ir/einsum_equation.h"

#include <algorithm>
#include <map>
#include <string>

#include "ir/types.h"

namespace edgec {

namespace {

// One side of an equation term: letters in order, and where "..." sits (-1: nowhere).
struct Term {
  std::string letters;
  int ellipsis_at = -1;  // index into letters before which the ellipsis dims go
};

bool IsLabelLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

StatusOr<Term> ParseTerm(std::string_view s, std::string_view what) {
  Term t;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (IsLabelLetter(c)) {
      t.letters += c;
    } else if (c == '.') {
      if (s.substr(i, 3) != "..." || t.ellipsis_at != -1) {
        return InvalidArgument("einsum {} '{}': '.' must appear only as one '...'", what, s);
      }
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
    } else {
      return InvalidArgument("einsum {} '{}': unexpected character '{}' (labels are letters)", what,
                             s, c);
    }
  }
  return t;
}

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

// Merges a dim into a label's size: letters must agree; ellipsis dims broadcast.
Status MergeSize(int64_t& size, int64_t dim, bool broadcasts, std::string_view label_name,
                 int operand) {
  if (dim == kUnknownDim) return Status::Ok();
  if (size == kUnknownDim || (broadcasts && size == 1)) {
    size = dim;
    return Status::Ok();
  }
  if (size == dim || (broadcasts && dim == 1)) return Status::Ok();
  return InvalidArgument("einsum label {} has size {} in operand {} but {} elsewhere", label_name,
                         dim, operand, size);
}

}  // namespace

Dims EinsumBinding::OutputDims() const {
  Dims d;
  for (int l : output_labels) d.push_back(label_sizes[l]);
  return d;
}

StatusOr<EinsumBinding> BindEinsum(std::string_view equation, const std::vector<Dims>& operands) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ' && c != '\t') eq += c;
  }
  std::string_view lhs = eq, rhs;
  const size_t arrow = eq.find("->");
  const bool explicit_output = arrow != std::string::npos;
  if (explicit_output) {
    lhs = std::string_view(eq).substr(0, arrow);
    rhs = std::string_view(eq).substr(arrow + 2);
    if (rhs.find("->") != std::string_view::npos) {
      return InvalidArgument("einsum equation '{}' has more than one '->'", equation);
    }
  }
  const std::vector<std::string_view> term_text = SplitOn(lhs, ',');
  if (term_text.size() != operands.size()) {
    return InvalidArgument("einsum equation '{}' has {} operand terms but the node has {} inputs",
                           equation, term_text.size(), operands.size());
  }

  EinsumBinding b;
  std::map<char, int> letter_id;
  std::map<char, int> letter_count;
  std::vector<Term> terms;
  int ellipsis_rank = 0;
  for (size_t i = 0; i < term_text.size(); ++i) {
    ASSIGN_OR_RETURN(Term t, ParseTerm(term_text[i], fmt::format("operand {}", i)));
    const int rank = static_cast<int>(operands[i].size());
    const int letters = static_cast<int>(t.letters.size());
    if (t.ellipsis_at == -1 ? rank != letters : rank < letters) {
      return InvalidArgument("einsum term '{}' names {} dims but operand {} has rank {}",
                             term_text[i], letters, i, rank);
    }
    if (t.ellipsis_at != -1) ellipsis_rank = std::max(ellipsis_rank, rank - letters);
    for (char c : t.letters) {
      if (!letter_id.count(c)) {
        letter_id[c] = static_cast<int>(letter_id.size());
      }
      ++letter_count[c];
    }
    terms.push_back(std::move(t));
  }
  // Ellipsis dims get the ids after the letters.
  const int num_letters = static_cast<int>(letter_id.size());
  b.label_sizes.assign(num_letters + ellipsis_rank, kUnknownDim);
  auto ellipsis_label = [&](int j) { return num_letters + j; };

  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    const int rank = static_cast<int>(operands[i].size());
    const int covered = rank - static_cast<int>(t.letters.size());
    std::vector<int> labels;
    std::vector<std::string> names;  // for messages
    for (int pos = 0; pos <= static_cast<int>(t.letters.size()); ++pos) {
      if (pos == t.ellipsis_at) {
        for (int j = 0; j < covered; ++j) {
          const int e = ellipsis_rank - covered + j;
          labels.push_back(ellipsis_label(e));
          names.push_back(fmt::format("'...'[{}]", e));
        }
      }
      if (pos < static_cast<int>(t.letters.size())) {
        labels.push_back(letter_id[t.letters[pos]]);
        names.push_back(fmt::format("'{}'", t.letters[pos]));
      }
    }
    for (int d = 0; d < rank; ++d) {
      const int l = labels[d];
      RETURN_IF_ERROR(MergeSize(b.label_sizes[l], operands[i][d], l >= num_letters, names[d],
                                static_cast<int>(i)));
    }
    b.operand_labels.push_back(std::move(labels));
  }

  if (explicit_output) {
    ASSIGN_OR_RETURN(Term out, ParseTerm(rhs, "output"));
    std::string seen;
    for (int pos = 0; pos <= static_cast<int>(out.letters.size()); ++pos) {
      if (pos == out.ellipsis_at) {
        for (int j = 0; j < ellipsis_rank; ++j) b.output_labels.push_back(ellipsis_label(j));
      }
      if (pos == static_cast<int>(out.letters.size())) break;
      const char c = out.letters[pos];
      if (!letter_id.count(c)) {
        return InvalidArgument("einsum output label '{}' does not appear in any operand", c);
      }
      if (seen.find(c) != std::string::npos) {
        return InvalidArgument("einsum output label '{}' appears more than once", c);
      }
      seen += c;
      b.output_labels.push_back(letter_id[c]);
    }
  } else {
    // Implicit output: the ellipsis dims, then the letters used once, in alphabetical order.
    for (int j = 0; j < ellipsis_rank; ++j) b.output_labels.push_back(ellipsis_label(j));
    for (const auto& [c, count] : letter_count) {  // std::map: ASCII order, as numpy
      if (count == 1) b.output_labels.push_back(letter_id[c]);
    }
  }
  return b;
}

}  // namespace edgec
