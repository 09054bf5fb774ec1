// Settings-file lexer (file_lexer.h). Character classes follow PostgreSQL's guc-file.l:
// bytes >= 0x80 count as letters so UTF-8 words need no quotes.
#include "file_lexer.h"

namespace walseg::guc::detail {

namespace {

bool is_letter(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
bool is_ascii_letter(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
bool is_word_char(char c) {
  return is_letter(c) || is_digit(c) || c == '-' || c == '.' || c == ':' || c == '/';
}
bool is_identifier(std::string_view s) {
  if (s.empty() || !is_letter(s[0])) return false;
  for (char c : s)
    if (!is_letter(c) && !is_digit(c)) return false;
  return true;
}

// The body of a quoted string (outer quotes removed) with PostgreSQL's escapes applied.
std::string deescape(std::string_view in) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '\'' && i + 1 < in.size() && in[i + 1] == '\'') {
      out += '\'';
      ++i;
    } else if (c != '\\' || i + 1 == in.size()) {
      out += c;
    } else {
      c = in[++i];
      switch (c) {
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        default:
          if (c >= '0' && c <= '7') {
            int v = c - '0';
            for (int k = 1; k < 3 && i + 1 < in.size() && in[i + 1] >= '0' && in[i + 1] <= '7'; ++k)
              v = v * 8 + (in[++i] - '0');
            out += static_cast<char>(v & 0xff);
          } else {
            out += c;  // \' is a quote, \\ a backslash, anything else itself
          }
      }
    }
  }
  return out;
}

}  // namespace

bool is_setting_name(std::string_view word) {
  std::size_t dot = word.find('.');
  if (dot == std::string_view::npos) return is_identifier(word);
  return is_identifier(word.substr(0, dot)) && is_identifier(word.substr(dot + 1));
}

Token Lexer::make(TokenKind kind, std::size_t start) {
  Token t;
  t.kind = kind;
  t.text = text_.substr(start, pos_ - start);
  t.value = std::string(t.text);
  t.line = line_;
  return t;
}

Token Lexer::next() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  std::size_t start = pos_;
  if (pos_ >= text_.size()) return make(TokenKind::kEof, start);
  char c = text_[pos_];
  bool sign = (c == '+' || c == '-') && pos_ + 1 < text_.size() &&
              (is_digit(text_[pos_ + 1]) || text_[pos_ + 1] == '.');
  if (c == '\n') {
    ++pos_;
    Token t = make(TokenKind::kEol, start);
    ++line_;
    return t;
  }
  if (c == '=') {
    ++pos_;
    return make(TokenKind::kEquals, start);
  }
  if (c == '\'') return lex_string(start);
  if (is_letter(c)) {
    while (pos_ < text_.size() && is_word_char(text_[pos_])) ++pos_;
    return make(TokenKind::kWord, start);
  }
  if (is_digit(c) || c == '.' || sign) return lex_number(start);
  ++pos_;
  return make(TokenKind::kBad, start);
}

Token Lexer::lex_string(std::size_t start) {
  pos_ = start + 1;
  while (true) {
    if (pos_ >= text_.size() || text_[pos_] == '\n') {
      // Unterminated: the token is the rest of the line, which is what the user must fix.
      return make(TokenKind::kBad, start);
    }
    char c = text_[pos_];
    if (c == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] != '\n') {
      pos_ += 2;
    } else if (c == '\'' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\'') {
      pos_ += 2;
    } else if (c == '\'') {
      ++pos_;
      Token t = make(TokenKind::kString, start);
      t.value = deescape(t.text.substr(1, t.text.size() - 2));
      return t;
    } else {
      ++pos_;
    }
  }
}

Token Lexer::lex_number(std::size_t start) {
  auto at = [&](std::size_t i) { return i < text_.size() ? text_[i] : '\0'; };
  if (at(pos_) == '+' || at(pos_) == '-') ++pos_;
  if (at(pos_) == '0' && (at(pos_ + 1) | 0x20) == 'x' && is_hex(at(pos_ + 2))) {
    pos_ += 2;
    while (is_hex(at(pos_))) ++pos_;
  } else {
    while (is_digit(at(pos_))) ++pos_;
    if (at(pos_) == '.') {
      ++pos_;
      while (is_digit(at(pos_))) ++pos_;
    }
    // An exponent only when digits follow, so "1e" stays a number with unit letters.
    std::size_t e = pos_ + 1;
    if (at(e) == '+' || at(e) == '-') ++e;
    if ((at(pos_) | 0x20) == 'e' && is_digit(at(e))) {
      pos_ = e;
      while (is_digit(at(pos_))) ++pos_;
    }
  }
  while (is_ascii_letter(at(pos_))) ++pos_;
  return make(TokenKind::kNumber, start);
}

void Lexer::skip_line(const Token& last) {
  if (last.kind == TokenKind::kEol || last.kind == TokenKind::kEof) return;
  while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  if (pos_ < text_.size()) {
    ++pos_;
    ++line_;
  }
}

}  // namespace walseg::guc::detail
