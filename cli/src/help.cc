#include <algorithm>
#include <sstream>

#include "cli/program.h"
#include "contract/release_version.h"

namespace cli {
namespace {

constexpr std::size_t kWidth = 100;
// Flags spelled longer than this put their help on the next line, so one long name does not
// push every help text to the right.
constexpr std::size_t kLongestInline = 32;
constexpr const char* kVersionHelp = "print the program's name and version, then exit";

std::string Spelling(const Flag& flag) {
  return "--" + flag.name + (flag.is_switch ? "" : "=" + flag.placeholder);
}

// "(a number from 1 to 64; default 4)", "(default: all namespaces)", or "" when there is nothing to say.
std::string Details(const Flag& flag) {
  std::string details = flag.takes_in_help ? flag.takes : "";
  if (!flag.default_shown.empty()) {
    if (!details.empty()) details += "; ";
    details += (flag.default_is_literal ? "default " : "default: ") + flag.default_shown;
  }
  return details.empty() ? "" : "(" + details + ")";
}

std::string MarkdownCell(std::string text) {
  std::string cell;
  for (char c : text) {
    if (c == '|') cell += '\\';
    cell += c == '\n' ? ' ' : c;
  }
  return cell;
}

}  // namespace

std::string Wrap(const std::string& text, std::size_t width, std::size_t indent) {
  const std::size_t room = width > indent ? width - indent : 1;
  std::string out;
  std::istringstream lines(text);
  std::string line;
  bool first_line = true;
  while (std::getline(lines, line)) {
    if (!first_line) out += "\n" + std::string(indent, ' ');
    first_line = false;
    std::istringstream words(line);
    std::string word;
    std::size_t used = 0;
    while (words >> word) {
      if (used > 0 && used + 1 + word.size() > room) {
        out += "\n" + std::string(indent, ' ');
        used = 0;
      } else if (used > 0) {
        out += ' ';
        ++used;
      }
      out += word;
      used += word.size();
    }
  }
  return out;
}

std::string HelpText(const Program& program) {
  std::size_t column = 0;
  for (const Flag& flag : program.flags) column = std::max(column, Spelling(flag).size());
  column = 2 + std::min(column, kLongestInline) + 2;

  std::string text = program.summary + "\n\nUsage: " + program.name + " [flags]\n\n" +
                     "Flags (--name=VALUE or --name VALUE; a switch also takes =true or =false):\n";
  auto row = [&](const std::string& spelling, const std::string& help) {
    std::string left = "  " + spelling;
    left += left.size() + 2 <= column ? std::string(column - left.size(), ' ') : "\n" + std::string(column, ' ');
    text += left + Wrap(help, kWidth, column) + "\n";
  };
  for (const Flag& flag : program.flags) {
    const std::string details = Details(flag);
    row(Spelling(flag), flag.help + (details.empty() ? "" : " " + details));
  }
  row("-h, --help", "this text");
  row("--version", kVersionHelp);
  if (!program.epilogue.empty()) text += "\n" + program.epilogue;
  if (!text.ends_with('\n')) text += '\n';
  return text;
}

std::string MarkdownTable(const Program& program) {
  std::string table = "| flag | default | meaning |\n| --- | --- | --- |\n";
  for (const Flag& flag : program.flags) {
    std::string shown = flag.default_shown;
    if (flag.default_is_literal && !shown.empty()) shown = "`" + shown + "`";
    std::string meaning = flag.help + (flag.takes_in_help ? " (" + flag.takes + ")" : "");
    table += "| `" + MarkdownCell(Spelling(flag)) + "` | " + MarkdownCell(shown) + " | " + MarkdownCell(meaning) + " |\n";
  }
  table += "| `-h`, `--help` |  | this text |\n";
  table += std::string("| `--version` |  | ") + kVersionHelp + " |\n";
  return table;
}

std::string VersionText(const Program& program) {
  return program.name + " " + std::string(contract::kReleaseVersion) + "\n";
}

}  // namespace cli
