#include "kube/json_skim.h"

#include <cstring>

namespace kube {
namespace {

class Skimmer {
 public:
  Skimmer(std::string_view text, const std::vector<MemberPath>& paths) : s_(text), paths_(paths) {}

  bool Run(std::string* out) {
    out_ = out;
    std::vector<const MemberPath*> all;
    for (const MemberPath& p : paths_) {
      if (!p.empty()) all.push_back(&p);
    }
    if (!Value(all, 0)) return false;
    Ws();
    return i_ == s_.size();
  }

 private:
  void Ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }

  // Moves past a string starting at its opening quote.
  bool SkipString() {
    ++i_;
    while (i_ < s_.size()) {
      const char* p = static_cast<const char*>(std::memchr(s_.data() + i_, '"', s_.size() - i_));
      if (p == nullptr) return false;
      std::size_t q = p - s_.data();
      std::size_t backslashes = 0;
      while (q - backslashes > i_ && s_[q - backslashes - 1] == '\\') ++backslashes;
      i_ = q + 1;
      if (backslashes % 2 == 0) return true;
    }
    return false;
  }

  // Moves past one value (any kind), checking only that brackets and strings close.
  bool SkipValue() {
    Ws();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '"') return SkipString();
    if (c == '{' || c == '[') {
      int depth = 0;
      while (i_ < s_.size()) {
        const char d = s_[i_];
        if (d == '"') {
          if (!SkipString()) return false;
          continue;
        }
        if (d == '{' || d == '[') ++depth;
        if (d == '}' || d == ']') {
          if (--depth == 0) {
            ++i_;
            return true;
          }
        }
        ++i_;
      }
      return false;
    }
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ']' && s_[i_] != ' ' && s_[i_] != '\n' &&
           s_[i_] != '\r' && s_[i_] != '\t') {
      ++i_;
    }
    return i_ > start;
  }

  // One value at `depth`, given the paths that run through it (their keys before `depth` matched).
  bool Value(const std::vector<const MemberPath*>& through, std::size_t depth) {
    Ws();
    if (through.empty() || i_ >= s_.size() || s_[i_] != '{') {
      const std::size_t start = i_;
      if (!SkipValue()) return false;
      out_->append(s_.substr(start, i_ - start));
      return true;
    }
    ++i_;
    out_->push_back('{');
    bool first = true;
    Ws();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      out_->push_back('}');
      return true;
    }
    for (;;) {
      Ws();
      if (i_ >= s_.size() || s_[i_] != '"') return false;
      const std::size_t key_start = i_;
      if (!SkipString()) return false;
      const std::size_t key_end = i_;
      const std::string_view key = s_.substr(key_start + 1, key_end - key_start - 2);
      Ws();
      if (i_ >= s_.size() || s_[i_] != ':') return false;
      ++i_;
      bool drop = false;
      std::vector<const MemberPath*> deeper;
      for (const MemberPath* p : through) {
        if ((*p)[depth] != key) continue;
        if (p->size() == depth + 1) drop = true;
        else deeper.push_back(p);
      }
      if (drop) {
        if (!SkipValue()) return false;
      } else {
        if (!first) out_->push_back(',');
        first = false;
        out_->append(s_.substr(key_start, key_end - key_start));
        out_->push_back(':');
        if (!Value(deeper, depth + 1)) return false;
      }
      Ws();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (s_[i_] == '}') {
        ++i_;
        out_->push_back('}');
        return true;
      }
      return false;
    }
  }

  std::string_view s_;
  const std::vector<MemberPath>& paths_;
  std::string* out_ = nullptr;
  std::size_t i_ = 0;
};

}  // namespace

MemberPath ParseMemberPath(std::string_view dotted) {
  MemberPath out;
  while (!dotted.empty()) {
    const std::size_t dot = dotted.find('.');
    out.emplace_back(dotted.substr(0, dot));
    if (dot == std::string_view::npos) break;
    dotted.remove_prefix(dot + 1);
  }
  return out;
}

std::optional<std::string> DropMembers(std::string_view text, const std::vector<MemberPath>& paths) {
  std::string out;
  out.reserve(text.size() / 4);
  if (!Skimmer(text, paths).Run(&out)) return std::nullopt;
  return out;
}

}  // namespace kube
