// Settings-file parser with includes (include/walseg/guc_file.h).
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "file_lexer.h"
#include "text_util.h"
#include "walseg/error.h"
#include "walseg/guc_file.h"

namespace walseg::guc {

namespace {

using detail::Lexer;
using detail::Token;
using detail::TokenKind;

// The including file's directory joined with `target`, as PostgreSQL's AbsoluteConfigLocation
// does with the calling file (an absolute target is used as is).
std::string resolve(const std::string& including_file, const std::string& target) {
  if (target.starts_with('/') || including_file.empty()) return target;
  std::size_t slash = including_file.rfind('/');
  if (slash == std::string::npos) return target;
  return including_file.substr(0, slash + 1) + target;
}

class Parser {
 public:
  Parser(ConfigSource& source, ParsedFiles& out) : source_(source), out_(out) {}

  // Parses one file's text; `identity` joins the include stack for cycle detection.
  void parse_text(std::string_view text, const std::string& path, const std::string& identity,
                  int depth);
  // Reads and parses `path` (already resolved). `at` is the include directive, if any.
  void parse_file(const std::string& path, const ConfigItem* at, int depth, bool missing_ok);

 private:
  struct Frame {
    std::string identity;
    std::string path;
  };

  void directive(const ConfigItem& item, int depth);
  void parse_dir(const std::string& dir, const ConfigItem& at, int depth);
  void include_error(const ConfigItem* at, std::string message);
  // The chain "a -> b -> path" if `identity` is already being parsed, else nullopt.
  std::optional<std::string> cycle(const std::string& identity, const std::string& path) const;
  bool syntax_error(const std::string& path, const Token& t, int& count);

  ConfigSource& source_;
  ParsedFiles& out_;
  std::vector<Frame> stack_;  ///< files and directories being parsed, outermost first
};

void Parser::include_error(const ConfigItem* at, std::string message) {
  ConfigError e;
  e.kind = ErrorKind::kInclude;
  if (at != nullptr) {
    e.file = at->file;
    e.line = at->line;
  }
  e.message = std::move(message);
  out_.errors.push_back(std::move(e));
}

// Records a syntax error at token `t`; returns false once the file has too many.
bool Parser::syntax_error(const std::string& path, const Token& t, int& count) {
  ConfigError e;
  e.kind = ErrorKind::kSyntax;
  e.file = path;
  e.line = t.line;
  if (t.kind == TokenKind::kEol || t.kind == TokenKind::kEof)
    e.message = fmt::format("syntax error in file \"{}\" line {}, near end of line", path, t.line);
  else
    e.message = fmt::format("syntax error in file \"{}\" line {}, near token \"{}\"", path,
                            t.line, detail::printable_cut(t.text));
  out_.errors.push_back(std::move(e));
  if (++count < kMaxSyntaxErrors) return true;
  include_error(nullptr, fmt::format("too many syntax errors found, abandoning file \"{}\"", path));
  return false;
}

void Parser::parse_text(std::string_view text, const std::string& path,
                        const std::string& identity, int depth) {
  stack_.push_back(Frame{identity, path});
  // Editors on Windows start UTF-8 files with EF BB BF. PostgreSQL reads it as part of the
  // first name (a syntax error there); walseg took the first setting for someone else's and
  // ignored it. Skipped, and said, so that the file can be fixed before PostgreSQL reads it.
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) {
    text.remove_prefix(kBom.size());
    out_.warnings.push_back(fmt::format("configuration file \"{}\" starts with a UTF-8 byte-order mark, which "
                                        "walseg skips and PostgreSQL does not: remove it", path));
  }
  Lexer lexer(text);
  int errors = 0;
  for (Token t = lexer.next(); t.kind != TokenKind::kEof; t = lexer.next()) {
    if (t.kind == TokenKind::kEol) continue;
    ConfigItem item;
    item.file = path;
    item.line = t.line;
    bool ok = t.kind == TokenKind::kWord && detail::is_setting_name(t.text);
    if (ok) {
      item.name = std::string(t.text);
      t = lexer.next();
      if (t.kind == TokenKind::kEquals) t = lexer.next();
      ok = t.kind == TokenKind::kWord || t.kind == TokenKind::kNumber ||
           t.kind == TokenKind::kString;
    }
    if (ok) {
      item.value = std::move(t.value);
      t = lexer.next();
      ok = t.kind == TokenKind::kEol || t.kind == TokenKind::kEof;
    }
    if (!ok) {
      if (!syntax_error(path, t, errors)) break;
      lexer.skip_line(t);
      continue;
    }
    directive(item, depth);
    if (t.kind == TokenKind::kEof) break;
  }
  stack_.pop_back();
}

// An include directive, or a plain item to keep.
void Parser::directive(const ConfigItem& item, int depth) {
  bool include = detail::iequals(item.name, "include");
  bool if_exists = detail::iequals(item.name, "include_if_exists");
  if (detail::iequals(item.name, "include_dir")) {
    if (item.value.empty())
      return include_error(&item, fmt::format("empty configuration directory name: \"{}\"", item.value));
    return parse_dir(resolve(item.file, item.value), item, depth + 1);
  }
  if (!include && !if_exists) {
    out_.items.push_back(item);
    return;
  }
  if (item.value.empty())
    return include_error(&item, fmt::format("empty configuration file name: \"{}\"", item.value));
  parse_file(resolve(item.file, item.value), &item, depth + 1, if_exists);
}

void Parser::parse_file(const std::string& path, const ConfigItem* at, int depth,
                        bool missing_ok) {
  if (depth > kMaxIncludeDepth)
    return include_error(at, fmt::format("could not open configuration file \"{}\": maximum "
                                         "nesting depth exceeded",
                                         detail::printable(path)));
  ConfigSource::Text text = source_.read(path);
  if (text.err == ENOENT && missing_ok) {
    out_.notes.push_back(fmt::format("skipping missing configuration file \"{}\"", path));
    return;
  }
  if (text.err != 0)
    return include_error(at, fmt::format("could not open configuration file \"{}\": {}",
                                         detail::printable(path),
                                         text.why.empty() ? errno_text(text.err) : text.why));
  if (auto chain = cycle(text.identity, path))
    return include_error(at, fmt::format("could not open configuration file \"{}\": include "
                                         "cycle {}",
                                         detail::printable(path), detail::printable(*chain)));
  parse_text(text.contents, path, text.identity, depth);
}

std::optional<std::string> Parser::cycle(const std::string& identity,
                                         const std::string& path) const {
  auto first = std::find_if(stack_.begin(), stack_.end(),
                            [&](const Frame& f) { return f.identity == identity; });
  if (first == stack_.end()) return std::nullopt;
  std::string chain;
  for (auto it = first; it != stack_.end(); ++it) chain += it->path + " -> ";
  return chain + path;
}

void Parser::parse_dir(const std::string& dir, const ConfigItem& at, int depth) {
  ConfigSource::Listing listing = source_.list(dir);
  if (listing.err != 0)
    return include_error(&at, fmt::format("could not open configuration directory \"{}\": {}",
                                          detail::printable(dir), errno_text(listing.err)));
  // A directory that (through its files) includes itself again is a cycle even when each
  // file is new on the stack: N files that all say `include_dir '.'` would otherwise be
  // expanded in N! orders before the depth bound stops them.
  std::string identity = "dir:" + source_.identity(dir);
  if (auto chain = cycle(identity, dir))
    return include_error(&at, fmt::format("could not open configuration directory \"{}\": "
                                          "include cycle {}",
                                          detail::printable(dir), detail::printable(*chain)));
  std::vector<std::string> names;
  for (auto& e : listing.entries) {
    // As PostgreSQL: only *.conf, never dot-files (editor and package-manager leftovers).
    if (e.is_dir || e.name.starts_with('.') || e.name.size() <= 5 || !e.name.ends_with(".conf"))
      continue;
    names.push_back(std::move(e.name));
  }
  std::sort(names.begin(), names.end());
  std::string base = dir.ends_with('/') ? dir : dir + "/";
  stack_.push_back(Frame{identity, dir});
  for (const auto& name : names) parse_file(base + name, &at, depth, false);
  stack_.pop_back();
}

}  // namespace

ParsedFiles parse_config_file(const std::string& path, ConfigSource& source) {
  ParsedFiles out;
  out.top_file = path;
  Parser(source, out).parse_file(path, nullptr, 0, false);
  return out;
}

ParsedFiles parse_config_file(const std::string& path) {
  DiskSource disk;
  return parse_config_file(path, disk);
}

ParsedFiles parse_config_text(std::string_view text, const std::string& path,
                              ConfigSource& source) {
  ParsedFiles out;
  out.top_file = path;
  Parser(source, out).parse_text(text, path, source.identity(path), 0);
  return out;
}

}  // namespace walseg::guc
