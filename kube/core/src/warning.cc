#include "kube/warning.h"

#include <cctype>
#include <optional>

namespace kube {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  bool Done() const { return pos_ >= text_.size(); }
  void SkipSpaces() {
    while (!Done() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool Take(char c) {
    if (Done() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  // A token up to the next space: the code or the agent.
  std::string_view Token() {
    const std::size_t start = pos_;
    while (!Done() && text_[pos_] != ' ' && text_[pos_] != '\t' && text_[pos_] != ',') ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // A quoted-string; nullopt when it does not start with a quote or is not closed.
  std::optional<std::string> Quoted() {
    if (!Take('"')) return std::nullopt;
    std::string out;
    while (!Done()) {
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (c == '\\' && !Done()) {
        out.push_back(text_[pos_++]);
      } else {
        out.push_back(c);
      }
    }
    return std::nullopt;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

bool IsCode(std::string_view code) {
  return code.size() == 3 && std::isdigit(static_cast<unsigned char>(code[0])) &&
         std::isdigit(static_cast<unsigned char>(code[1])) && std::isdigit(static_cast<unsigned char>(code[2]));
}

}  // namespace

std::vector<std::string> ParseWarningHeader(std::string_view value) {
  std::vector<std::string> out;
  Reader in(value);
  for (;;) {
    in.SkipSpaces();
    if (in.Done()) return out;
    const std::string_view code = in.Token();
    in.SkipSpaces();
    const std::string_view agent = in.Token();
    in.SkipSpaces();
    std::optional<std::string> text = in.Quoted();
    if (!IsCode(code) || agent.empty() || !text) return out;
    in.SkipSpaces();
    if (!in.Done() && !in.Take(',')) {
      if (!in.Quoted()) return out;  // the optional date
      in.SkipSpaces();
      if (!in.Done() && !in.Take(',')) return out;
    }
    if (code == "299" && !text->empty()) out.push_back(std::move(*text));
  }
}

}  // namespace kube
