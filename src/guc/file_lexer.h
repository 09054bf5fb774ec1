// Tokens of the settings-file syntax (not installed; the rules are in guc_file.h). A hand
// lexer rather than flex so the library needs no generator and the fuzzer sees all of it.
#pragma once

#include <string>
#include <string_view>

namespace walseg::guc::detail {

enum class TokenKind {
  kWord,    ///< letter first, then letters, digits, _ - . : / (identifier or unquoted string)
  kNumber,  ///< sign, digits / 0x hex / fraction / exponent, then unit letters
  kString,  ///< single-quoted; `value` is de-escaped
  kEquals,
  kEol,
  kEof,
  kBad,  ///< an unexpected character, or an unterminated string (to the end of the line)
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string_view text;  ///< as written, quotes included
  std::string value;      ///< the value the token stands for
  int line = 1;           ///< line the token is on
};

/// True if `word` is an identifier or an identifier qualified once (`walseg.recycle`).
bool is_setting_name(std::string_view word);

class Lexer {
 public:
  /// text must outlive the lexer and its tokens.
  explicit Lexer(std::string_view text) : text_(text) {}
  Token next();
  /// Drops the rest of the current line (after a syntax error); the next token is the first
  /// of the following line. Does nothing if `last` was already the end of a line.
  void skip_line(const Token& last);

 private:
  Token make(TokenKind kind, std::size_t start);
  Token lex_string(std::size_t start);
  Token lex_number(std::size_t start);

  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace walseg::guc::detail
