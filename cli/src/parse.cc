#include <algorithm>

#include "cli/program.h"

namespace cli {
namespace {

ParseOutcome Refuse(const Program& program, const std::string& why) {
  ParseOutcome refused;
  refused.error = why + " (see " + program.name + " --help)";
  return refused;
}

ParseOutcome HelpWanted() {
  ParseOutcome help;
  help.help = true;
  return help;
}

ParseOutcome VersionWanted() {
  ParseOutcome version;
  version.version = true;
  return version;
}

const Flag* Find(const Program& program, const std::string& name) {
  auto it = std::find_if(program.flags.begin(), program.flags.end(), [&](const Flag& f) { return f.name == name; });
  return it == program.flags.end() ? nullptr : &*it;
}

}  // namespace

ParseOutcome Parse(const Program& program, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") return HelpWanted();
    if (arg == "--version") return VersionWanted();
    if (!arg.starts_with("--")) return Refuse(program, "unexpected argument \"" + arg + "\"");
    std::string name = arg.substr(2);
    std::string value;
    const std::size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const Flag* flag = Find(program, name);
    if (flag == nullptr) return Refuse(program, "unknown flag --" + name);
    if (flag->is_switch && !inline_value) {
      value = "true";
    } else if (!inline_value) {
      if (i + 1 >= args.size()) return Refuse(program, "--" + name + " needs a value: " + flag->takes);
      value = args[++i];
    }
    if (!flag->set(value)) {
      return Refuse(program, "--" + name + " must be " + flag->takes + ", got \"" + value + "\"");
    }
  }
  return {};
}

}  // namespace cli
