// While bench measures through its own scratch WALs (the switch, commit and append phases),
// the library's LOG lines about them ("created walseg.control in .../switch/pooled", one per
// configuration) are bench's internals, not something its user acts on (the new-user trial:
// they filled stderr between the tables). WARNINGs still print: they are about the
// filesystem being measured (copy-on-write, memory-backed), which the user should know, each
// kind once per instance (one per phase), whatever scratch directory it names.
//
// Thread-safety: the library's sink is called under its own mutex, so the swap is safe while
// other threads log; create and destroy on main's thread.
#pragma once

namespace walseg::tool {

class BenchLogWarningsOnly {
 public:
  BenchLogWarningsOnly();   ///< LOG lines dropped from now on
  ~BenchLogWarningsOnly();  ///< LOG and WARNING printed again, as the tool's default
  BenchLogWarningsOnly(const BenchLogWarningsOnly&) = delete;
  BenchLogWarningsOnly& operator=(const BenchLogWarningsOnly&) = delete;
};

}  // namespace walseg::tool
