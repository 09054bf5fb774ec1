// Unit tests for include/walseg/guc_file.h: the postgresql.conf syntax, quoting, includes,
// include cycles and depth (case C19). Files are written under a mkdtemp directory that the
// fixture removes; syntax-only tests parse from memory.
#define BOOST_TEST_MODULE guc_file
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "walseg/guc_file.h"

using namespace walseg::guc;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    const char* tmp = ::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/guc_file_test.XXXXXX";
    BOOST_TEST_REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& rel, const std::string& text) const {
    fs::path p = fs::path(path) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

ParsedFiles parse(std::string_view text) {
  MemorySource none;
  return parse_config_text(text, "/mem/main.conf", none);
}

const ConfigError& only_error(const ParsedFiles& p) {
  BOOST_TEST_REQUIRE(p.errors.size() == 1u, to_string(p.errors));
  return p.errors[0];
}

std::string values(const ParsedFiles& p) {
  std::string out;
  for (const auto& i : p.items) out += i.name + "=" + i.value + ";";
  return out;
}

// A chain main -> f1 -> ... -> f<n>, each in memory.
MemorySource chain(int n) {
  MemorySource src;
  for (int i = 1; i <= n; ++i)
    src.add_file("/m/f" + std::to_string(i) + ".conf",
                 i < n ? "include 'f" + std::to_string(i + 1) + ".conf'\n" : "deep = 1\n");
  return src;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(syntax)

BOOST_AUTO_TEST_CASE(name_equals_value_and_name_space_value_both_parse) {
  auto p = parse("a = 1\nb 2\n  c=3  \n");
  BOOST_TEST(p.ok());
  BOOST_TEST(values(p) == "a=1;b=2;c=3;");
}

BOOST_AUTO_TEST_CASE(comments_and_blank_lines_are_skipped_and_lines_counted) {
  auto p = parse("# header\n\n   \nwalseg.recycle = off # trailing\n\r\nx = 'a#b'\n");
  BOOST_TEST_REQUIRE(p.items.size() == 2u);
  BOOST_TEST(p.items[0].line == 4);
  BOOST_TEST(p.items[0].file == "/mem/main.conf");
  BOOST_TEST(p.items[1].value == "a#b");
  BOOST_TEST(p.items[1].line == 6);
}

BOOST_AUTO_TEST_CASE(last_line_without_newline_is_parsed) {
  BOOST_TEST(values(parse("a = 1\nb = 'two'")) == "a=1;b=two;");
}

BOOST_AUTO_TEST_CASE(values_are_kept_exactly_as_written) {
  auto p = parse("WalSeg.Label = '/mnt/mb/X'\nm = MB\nn = 16MB\nw = Read_Committed\n");
  BOOST_TEST(values(p) == "WalSeg.Label=/mnt/mb/X;m=MB;n=16MB;w=Read_Committed;");
}

BOOST_AUTO_TEST_CASE(unquoted_words_may_hold_path_characters) {
  BOOST_TEST(values(parse("a = host:port/x-y.z\nb = a.b\n")) == "a=host:port/x-y.z;b=a.b;");
}

BOOST_AUTO_TEST_CASE(numbers_in_every_form_are_single_tokens) {
  auto p = parse("a = -1\nb = 0x1F\nc = 1.5MB\nd = 1e3\ne = .5\nf = +2kB\n");
  BOOST_TEST(values(p) == "a=-1;b=0x1F;c=1.5MB;d=1e3;e=.5;f=+2kB;");
}

BOOST_AUTO_TEST_CASE(quoted_strings_handle_escapes_as_postgresql) {
  auto p = parse(R"(a = 'tab\there'
b = 'back\\slash'
c = '\101\102'
d = 'new\nline'
e = ''
f = 'sp ace'
g = '\q'
)");
  BOOST_TEST(p.ok());
  BOOST_TEST_REQUIRE(p.items.size() == 7u);
  BOOST_TEST(p.items[0].value == "tab\there");
  BOOST_TEST(p.items[1].value == "back\\slash");
  BOOST_TEST(p.items[2].value == "AB");
  BOOST_TEST(p.items[3].value == "new\nline");
  BOOST_TEST(p.items[4].value == "");
  BOOST_TEST(p.items[5].value == "sp ace");
  BOOST_TEST(p.items[6].value == "q");
}

BOOST_AUTO_TEST_CASE(utf8_words_need_no_quotes) {
  BOOST_TEST(values(parse("a = caf\xc3\xa9\n")) == "a=caf\xc3\xa9;");
}

BOOST_AUTO_TEST_CASE(C19_doubled_quote_and_backslash_quote_both_parse_to_its) {
  auto p = parse("archive_dir = 'it''s'\narchive_dir = 'it\\'s'\n");
  BOOST_TEST(p.ok());
  BOOST_TEST_REQUIRE(p.items.size() == 2u);
  BOOST_TEST(p.items[0].value == "it's");
  BOOST_TEST(p.items[1].value == "it's");
}

BOOST_AUTO_TEST_SUITE_END()

// ---- syntax error paths: outcome (item dropped, parsing goes on) and message ----

BOOST_AUTO_TEST_SUITE(syntax_errors)

BOOST_AUTO_TEST_CASE(C19_unquoted_value_with_a_space_is_a_syntax_error_near_second_word) {
  auto p = parse("a = 1\nmethod_note = read committed\nb = 2\n");
  const auto& e = only_error(p);
  BOOST_TEST((e.kind == ErrorKind::kSyntax));
  BOOST_TEST(e.line == 2);
  BOOST_TEST(e.message ==
             "syntax error in file \"/mem/main.conf\" line 2, near token \"committed\"");
  BOOST_TEST(values(p) == "a=1;b=2;");
}

BOOST_AUTO_TEST_CASE(C19_unterminated_string_is_a_syntax_error) {
  auto p = parse("archive_dir = 'unterminated\nb = 2\n");
  const auto& e = only_error(p);
  BOOST_TEST(e.message ==
             "syntax error in file \"/mem/main.conf\" line 1, near token \"'unterminated\"");
  BOOST_TEST(values(p) == "b=2;");
  BOOST_TEST((only_error(parse("a = 'it\\'")).kind == ErrorKind::kSyntax));
  BOOST_TEST((only_error(parse("a = 'x''")).kind == ErrorKind::kSyntax));
}

BOOST_AUTO_TEST_CASE(name_without_value_is_an_error_near_end_of_line) {
  auto e = only_error(parse("# c\nwalseg.recycle\n"));
  BOOST_TEST(e.message == "syntax error in file \"/mem/main.conf\" line 2, near end of line");
  BOOST_TEST(only_error(parse("a =")).message ==
             "syntax error in file \"/mem/main.conf\" line 1, near end of line");
}

BOOST_AUTO_TEST_CASE(unexpected_characters_and_bad_names_are_errors_near_them) {
  BOOST_TEST(only_error(parse("a = 1;\n")).message ==
             "syntax error in file \"/mem/main.conf\" line 1, near token \";\"");
  BOOST_TEST(only_error(parse("a.b.c = 1\n")).message ==
             "syntax error in file \"/mem/main.conf\" line 1, near token \"a.b.c\"");
  BOOST_TEST(only_error(parse("1abc = 1\n")).message.find("near token \"1abc\"") != std::string::npos);
  BOOST_TEST(only_error(parse("a = \"x\"\n")).message.find("near token \"\"\"") != std::string::npos);
  BOOST_TEST(only_error(parse("a = 16 MB\n")).message.find("near token \"MB\"") != std::string::npos);
  BOOST_TEST(only_error(parse("a = /mnt/x\n")).message.find("near token \"/\"") != std::string::npos);
  BOOST_TEST(only_error(parse("a = = 1\n")).message.find("near token \"=\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(control_characters_in_tokens_are_escaped_in_messages) {
  auto e = only_error(parse(std::string("a = 1\x01\n")));
  BOOST_TEST(e.message.find("near token \"\\x01\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(every_error_of_a_file_is_reported) {
  auto p = parse("a = x y\nb = 2\nc\nd = 'e\n");
  BOOST_TEST(p.errors.size() == 3u);
  BOOST_TEST(values(p) == "b=2;");
  BOOST_TEST(p.errors[0].line == 1);
  BOOST_TEST(p.errors[1].line == 3);
  BOOST_TEST(p.errors[2].line == 4);
}

BOOST_AUTO_TEST_CASE(file_is_abandoned_after_too_many_syntax_errors) {
  std::string text;
  for (int i = 0; i < 150; ++i) text += "bad bad bad\n";
  auto p = parse(text);
  BOOST_TEST(p.errors.size() == static_cast<std::size_t>(kMaxSyntaxErrors) + 1);
  BOOST_TEST(p.errors.back().message ==
             "too many syntax errors found, abandoning file \"/mem/main.conf\"");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(includes)

BOOST_AUTO_TEST_CASE(include_expands_in_place_with_its_own_file_and_line) {
  TempDir d;
  d.write("b.conf", "\nb = 2\n");
  auto top = d.write("a.conf", "a = 1\ninclude 'b.conf'\nc = 3\n");
  auto p = parse_config_file(top);
  BOOST_TEST(p.ok(), to_string(p.errors));
  BOOST_TEST(values(p) == "a=1;b=2;c=3;");
  BOOST_TEST(p.items[1].file == d.path + "/b.conf");
  BOOST_TEST(p.items[1].line == 2);
}

BOOST_AUTO_TEST_CASE(C19_relative_include_resolves_against_the_including_file) {
  TempDir d;
  d.write("etc/sub/x.conf", "x = 1\ninclude = 'y.conf'\n");  // y.conf is etc/sub/y.conf
  d.write("etc/sub/y.conf", "y = 2\n");
  auto top = d.write("etc/main.conf", "include 'sub/x.conf'\n");
  auto cwd = fs::current_path();
  fs::current_path("/");  // so that resolving against the working directory would fail
  auto p = parse_config_file(top);
  fs::current_path(cwd);
  BOOST_TEST(p.ok(), to_string(p.errors));
  BOOST_TEST(values(p) == "x=1;y=2;");
}

BOOST_AUTO_TEST_CASE(C19_missing_include_if_exists_is_only_a_note) {
  TempDir d;
  auto top = d.write("a.conf", "include_if_exists 'missing.conf'\na = 1\n");
  auto p = parse_config_file(top);
  BOOST_TEST(p.ok());
  BOOST_TEST_REQUIRE(p.notes.size() == 1u);
  BOOST_TEST(p.notes[0] == "skipping missing configuration file \"" + d.path + "/missing.conf\"");
  BOOST_TEST(values(p) == "a=1;");
}

BOOST_AUTO_TEST_CASE(include_dir_reads_conf_files_in_name_order_only) {
  TempDir d;
  d.write("conf.d/20-b.conf", "v = b\n");
  d.write("conf.d/10-a.conf", "v = a\n");
  d.write("conf.d/.hidden.conf", "v = hidden\n");
  d.write("conf.d/notes.txt", "v = txt\n");
  d.write("conf.d/.conf", "v = dotconf\n");
  d.write("conf.d/sub.conf/inner.conf", "v = inner\n");  // a directory named *.conf
  d.write("real/30-c.conf", "v = c\n");
  fs::create_symlink(d.path + "/real/30-c.conf", d.path + "/conf.d/30-c.conf");
  auto top = d.write("main.conf", "include_dir 'conf.d'\n");
  auto p = parse_config_file(top);
  BOOST_TEST(p.ok(), to_string(p.errors));
  BOOST_TEST(values(p) == "v=a;v=b;v=c;");
}

BOOST_AUTO_TEST_CASE(same_file_included_twice_is_not_a_cycle) {
  TempDir d;
  d.write("common.conf", "c = 1\n");
  d.write("b.conf", "include 'common.conf'\n");
  auto top = d.write("a.conf", "include 'common.conf'\ninclude 'b.conf'\n");
  auto p = parse_config_file(top);
  BOOST_TEST(p.ok(), to_string(p.errors));
  BOOST_TEST(values(p) == "c=1;c=1;");
}

BOOST_AUTO_TEST_CASE(include_names_are_case_insensitive) {
  MemorySource src;
  src.add_file("/m/b.conf", "b = 2\n");
  auto p = parse_config_text("INCLUDE 'b.conf'\n", "/m/a.conf", src);
  BOOST_TEST(values(p) == "b=2;");
}

BOOST_AUTO_TEST_CASE(nesting_exactly_at_the_depth_bound_is_accepted) {
  MemorySource src = chain(kMaxIncludeDepth);
  auto p = parse_config_text("include 'f1.conf'\n", "/m/main.conf", src);
  BOOST_TEST(p.ok(), to_string(p.errors));
  BOOST_TEST(values(p) == "deep=1;");
}

BOOST_AUTO_TEST_CASE(memory_source_serves_includes_for_text_parsed_from_memory) {
  MemorySource src;
  src.add_file("/fuzz/conf.d/a.conf", "a = 1\n");
  src.add_file("/fuzz/inc.conf", "i = 2\n");
  auto p = parse_config_text("include_dir 'conf.d'\ninclude '../fuzz/./inc.conf'\n",
                             "/fuzz/main.conf", src);
  BOOST_TEST(p.ok(), to_string(p.errors));
  BOOST_TEST(values(p) == "a=1;i=2;");
}

BOOST_AUTO_TEST_SUITE_END()

// ---- include error paths: outcome and message ----

BOOST_AUTO_TEST_SUITE(include_errors)

BOOST_AUTO_TEST_CASE(C19_missing_include_is_an_error_naming_file_and_includer) {
  TempDir d;
  auto top = d.write("a.conf", "a = 1\ninclude 'missing.conf'\n");
  auto p = parse_config_file(top);
  const auto& e = only_error(p);
  BOOST_TEST((e.kind == ErrorKind::kInclude));
  BOOST_TEST(e.message == "could not open configuration file \"" + d.path +
                              "/missing.conf\": No such file or directory");
  BOOST_TEST(e.file == top);
  BOOST_TEST(e.line == 2);
  BOOST_TEST(e.to_string().ends_with("(file \"" + top + "\", line 2)"));
  BOOST_TEST(values(p) == "a=1;");
}

BOOST_AUTO_TEST_CASE(C19_file_including_itself_stops_with_the_cycle_shown) {
  TempDir d;
  auto a = d.write("a.conf", "x = 1\ninclude 'a.conf'\n");
  auto p = parse_config_file(a);
  const auto& e = only_error(p);
  BOOST_TEST(e.message == "could not open configuration file \"" + a + "\": include cycle " + a +
                              " -> " + a);
  BOOST_TEST(values(p) == "x=1;");
}

BOOST_AUTO_TEST_CASE(C19_two_files_including_each_other_stop_with_the_chain) {
  TempDir d;
  auto a = d.write("a.conf", "include 'b.conf'\n");
  auto b = d.write("b.conf", "include './a.conf'\n");
  auto p = parse_config_file(a);
  const auto& e = only_error(p);
  BOOST_TEST(e.message.find("include cycle " + a + " -> " + b + " -> " + d.path + "/./a.conf") !=
             std::string::npos, e.message);
  BOOST_TEST(e.file == b);
}

BOOST_AUTO_TEST_CASE(C19_include_dir_that_includes_its_own_directory_stops) {
  TempDir d;
  d.write("conf.d/00.conf", "include_dir '.'\n");
  auto top = d.write("main.conf", "include_dir 'conf.d'\n");
  auto p = parse_config_file(top);
  const auto& e = only_error(p);
  BOOST_TEST(e.message == "could not open configuration directory \"" + d.path +
                              "/conf.d/.\": include cycle " + d.path + "/conf.d -> " + d.path +
                              "/conf.d/00.conf -> " + d.path + "/conf.d/.");
  BOOST_TEST(e.file == d.path + "/conf.d/00.conf");
}

BOOST_AUTO_TEST_CASE(many_files_that_each_include_their_directory_stop_at_once) {
  // Without the directory check this expands 12! orders before the depth bound.
  TempDir d;
  for (int i = 10; i < 22; ++i) d.write("conf.d/" + std::to_string(i) + ".conf", "include_dir '.'\n");
  auto top = d.write("main.conf", "include_dir 'conf.d'\n");
  auto p = parse_config_file(top);
  BOOST_TEST(p.errors.size() == 12u);
  for (const auto& e : p.errors) BOOST_TEST(e.message.find("include cycle") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(same_directory_included_twice_side_by_side_is_not_a_cycle) {
  TempDir d;
  d.write("conf.d/a.conf", "a = 1\n");
  auto top = d.write("main.conf", "include_dir 'conf.d'\ninclude_dir 'conf.d/'\n");
  auto p = parse_config_file(top);
  BOOST_TEST(p.ok(), to_string(p.errors));
  BOOST_TEST(values(p) == "a=1;a=1;");
}

BOOST_AUTO_TEST_CASE(C19_main_file_copied_into_its_include_dir_stops) {
  TempDir d;
  std::string text = "a = 1\ninclude_dir 'conf.d'\n";
  auto top = d.write("main.conf", text);
  fs::create_directories(d.path + "/conf.d");
  fs::create_symlink(top, d.path + "/conf.d/main.conf");  // same file under another name
  auto p = parse_config_file(top);
  const auto& e = only_error(p);
  BOOST_TEST(e.message.find("include cycle " + top + " -> ") != std::string::npos, e.message);
}

BOOST_AUTO_TEST_CASE(nesting_beyond_the_depth_bound_is_refused) {
  MemorySource src = chain(kMaxIncludeDepth + 1);
  auto p = parse_config_text("include 'f1.conf'\n", "/m/main.conf", src);
  const auto& e = only_error(p);
  BOOST_TEST(e.message == "could not open configuration file \"/m/f11.conf\": maximum nesting "
                          "depth exceeded");
  BOOST_TEST(e.file == "/m/f10.conf");
}

BOOST_AUTO_TEST_CASE(missing_top_file_and_directory_and_empty_names_are_errors) {
  TempDir d;
  BOOST_TEST(only_error(parse_config_file(d.path + "/none.conf")).message ==
             "could not open configuration file \"" + d.path + "/none.conf\": No such file or directory");
  auto top = d.write("a.conf", "include_dir 'nodir'\n");
  BOOST_TEST(only_error(parse_config_file(top)).message ==
             "could not open configuration directory \"" + d.path + "/nodir\": No such file or directory");
  BOOST_TEST(only_error(parse("include ''\n")).message == "empty configuration file name: \"\"");
  BOOST_TEST(only_error(parse("include_dir ''\n")).message ==
             "empty configuration directory name: \"\"");
}

BOOST_AUTO_TEST_CASE(including_a_directory_as_a_file_is_an_error) {
  TempDir d;
  d.write("sub/x.conf", "");
  auto top = d.write("a.conf", "include 'sub'\n");
  BOOST_TEST(only_error(parse_config_file(top)).message ==
             "could not open configuration file \"" + d.path + "/sub\": Is a directory");
}

BOOST_AUTO_TEST_CASE(including_a_fifo_is_an_error_not_a_wait) {
  // Break-it finding: check-config hung forever on an include of a FIFO (open waited for a
  // writer). It is not a configuration file.
  TempDir d;
  BOOST_REQUIRE(::mkfifo((d.path + "/pipe.conf").c_str(), 0600) == 0);
  auto top = d.write("a.conf", "include 'pipe.conf'\n");
  BOOST_TEST(only_error(parse_config_file(top)).message ==
             "could not open configuration file \"" + d.path + "/pipe.conf\": it is a FIFO, not a regular file");
}

BOOST_AUTO_TEST_CASE(errors_in_included_files_name_the_included_file) {
  TempDir d;
  auto b = d.write("b.conf", "ok = 1\nbad value here\n");
  auto top = d.write("a.conf", "include 'b.conf'\n");
  auto e = only_error(parse_config_file(top));
  BOOST_TEST(e.message == "syntax error in file \"" + b + "\" line 2, near token \"here\"");
}

BOOST_AUTO_TEST_SUITE_END()
