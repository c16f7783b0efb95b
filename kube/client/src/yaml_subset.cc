#include "yaml_subset.h"

#include <vector>

namespace kube::internal {
namespace {

struct Line {
  int number;
  int indent;
  std::string text;  // without indent, comment or trailing blanks
};

class ParseError {
 public:
  ParseError(int line, std::string what) : line_(line), what_(std::move(what)) {}
  std::string Describe() const { return "line " + std::to_string(line_) + ": " + what_; }

 private:
  int line_;
  std::string what_;
};

// Cuts a comment: '#' at the start or after a blank, outside quotes.
std::string StripComment(std::string_view s) {
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return std::string(s.substr(0, i));
    }
  }
  return std::string(s);
}

std::string TrimRight(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::vector<Line> SplitLines(std::string_view text) {
  std::vector<Line> lines;
  int number = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    int indent = 0;
    while (static_cast<std::size_t>(indent) < raw.size() && raw[indent] == ' ') ++indent;
    std::string body = TrimRight(StripComment(raw.substr(indent)));
    if (body.empty() || body == "---" || body.rfind("%YAML", 0) == 0) continue;
    if (body[0] == '\t') throw ParseError(number, "tab used for indentation");
    lines.push_back(Line{number, indent, std::move(body)});
  }
  return lines;
}

std::string UnquoteDouble(std::string_view s, int line) {
  std::string out;
  for (std::size_t i = 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i + 1 >= s.size() + 1) break;
    switch (s[i]) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '0': out += '\0'; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      default: throw ParseError(line, std::string("unsupported escape \\") + s[i]);
    }
  }
  return out;
}

nlohmann::json Scalar(std::string_view s, int line) {
  if (s.size() >= 2 && s.front() == '"') {
    if (s.back() != '"') throw ParseError(line, "unterminated double-quoted string");
    return UnquoteDouble(s, line);
  }
  if (s.size() >= 2 && s.front() == '\'') {
    if (s.back() != '\'') throw ParseError(line, "unterminated single-quoted string");
    std::string out;
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
      out += s[i];
      if (s[i] == '\'' && s[i + 1] == '\'') ++i;
    }
    return out;
  }
  if (s == "\"" || s == "'") throw ParseError(line, "unterminated quoted string");
  if (s.front() == '{' || s.front() == '[') {
    auto j = nlohmann::json::parse(s, nullptr, false);
    if (j.is_discarded()) throw ParseError(line, "flow collections other than JSON are not supported");
    return j;
  }
  if (s.front() == '|' || s.front() == '>') throw ParseError(line, "block scalars are not supported");
  if (s.front() == '&' || s.front() == '*' || s.front() == '!') {
    throw ParseError(line, "anchors, aliases and tags are not supported");
  }
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s == "null" || s == "~" || s == "Null" || s == "NULL") return nullptr;
  return std::string(s);
}

bool IsDash(const std::string& t) { return t == "-" || t.rfind("- ", 0) == 0; }

// Finds the ':' that ends a mapping key (followed by a blank or the end), outside quotes.
std::size_t KeyColon(const std::string& t) {
  char quote = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if ((c == '"' || c == '\'') && i == 0) {
      quote = c;
    } else if (c == ':' && (i + 1 == t.size() || t[i + 1] == ' ')) {
      return i;
    }
  }
  return std::string::npos;
}

class Parser {
 public:
  explicit Parser(std::vector<Line> lines) : lines_(std::move(lines)) {}

  nlohmann::json Document() {
    if (lines_.empty()) return nlohmann::json::object();
    nlohmann::json root = Node(lines_[0].indent);
    if (pos_ < lines_.size()) throw ParseError(lines_[pos_].number, "unexpected indentation");
    return root;
  }

 private:
  nlohmann::json Node(int indent) {
    if (IsDash(lines_[pos_].text)) return Sequence(indent);
    if (KeyColon(lines_[pos_].text) == std::string::npos) {
      // A lone scalar (a document that is just a value, or a continuation we do not support).
      const Line& l = lines_[pos_++];
      if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
        throw ParseError(lines_[pos_].number, "multi-line scalars are not supported");
      }
      return Scalar(l.text, l.number);
    }
    return Map(indent);
  }

  nlohmann::json Sequence(int indent) {
    nlohmann::json seq = nlohmann::json::array();
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && IsDash(lines_[pos_].text)) {
      Line& l = lines_[pos_];
      std::size_t offset = 1;
      while (offset < l.text.size() && l.text[offset] == ' ') ++offset;
      if (offset >= l.text.size()) {  // "-" alone: the item is the indented block below
        ++pos_;
        if (pos_ >= lines_.size() || lines_[pos_].indent <= indent) {
          seq.push_back(nullptr);
        } else {
          seq.push_back(Node(lines_[pos_].indent));
        }
        continue;
      }
      // "- key: v" starts a map whose further keys sit at the indent of "key".
      l.indent += static_cast<int>(offset);
      l.text = l.text.substr(offset);
      seq.push_back(Node(l.indent));
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
      throw ParseError(lines_[pos_].number, "unexpected indentation in a list");
    }
    return seq;
  }

  nlohmann::json Map(int indent) {
    nlohmann::json map = nlohmann::json::object();
    while (pos_ < lines_.size() && lines_[pos_].indent == indent && !IsDash(lines_[pos_].text)) {
      const Line& l = lines_[pos_];
      std::size_t colon = KeyColon(l.text);
      if (colon == std::string::npos) throw ParseError(l.number, "expected \"key: value\"");
      std::string key_text = TrimRight(l.text.substr(0, colon));
      nlohmann::json key = Scalar(key_text, l.number);
      std::string key_str = key.is_string() ? key.get<std::string>() : key.dump();
      std::string value = l.text.substr(colon + 1);
      std::size_t start = value.find_first_not_of(' ');
      value = start == std::string::npos ? std::string() : value.substr(start);
      const int number = l.number;
      ++pos_;
      if (map.contains(key_str)) throw ParseError(number, "duplicate key \"" + key_str + "\"");
      if (!value.empty()) {
        map[key_str] = Scalar(value, number);
        if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
          throw ParseError(lines_[pos_].number, "multi-line scalars are not supported");
        }
      } else if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
        map[key_str] = Node(lines_[pos_].indent);
      } else if (pos_ < lines_.size() && lines_[pos_].indent == indent && IsDash(lines_[pos_].text)) {
        map[key_str] = Sequence(indent);  // kubectl writes lists at the key's own indent
      } else {
        map[key_str] = nullptr;
      }
    }
    if (pos_ < lines_.size() && lines_[pos_].indent > indent) {
      throw ParseError(lines_[pos_].number, "unexpected indentation");
    }
    return map;
  }

  std::vector<Line> lines_;
  std::size_t pos_ = 0;
};

}  // namespace

bool ParseYamlSubset(std::string_view text, nlohmann::json* out, std::string* error) {
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) {
      *error = "not valid JSON";
      return false;
    }
    *out = std::move(j);
    return true;
  }
  try {
    Parser parser(SplitLines(text));
    *out = parser.Document();
    return true;
  } catch (const ParseError& e) {
    *error = e.Describe();
    return false;
  }
}

}  // namespace kube::internal
