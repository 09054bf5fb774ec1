// Where write and create may start a new WAL: a new or empty directory, as initdb starts a
// cluster only in one. A mistyped --dir ("." or "~") otherwise filled a home directory with
// segments beside the user's files (new-user trial 16), which walseg never touches but which
// then share its space and its `ls`.
#pragma once

#include <string>

#include "walseg/directory.h"

namespace walseg::tool {

/// Throws std::invalid_argument (a usage error, before anything is made) when `dir` exists,
/// has no walseg.control, and holds anything but walseg's own file names (segments, temporary
/// files, walseg.lock, walseg.auto, walseg.control.tmp: the library's rules judge those) and
/// lost+found (an empty filesystem's root). The message names up to three of the files and
/// suggests a new directory inside. A directory that cannot be listed is left to the opening's
/// own error. Never changes anything.
void refuse_new_wal_beside_other_files(const std::string& dir);
/// The same check of the entries, on the directory as opened (MadeDirectory), where the
/// command's WAL will be: the path may lead elsewhere by then (break-it round 39 H1: a link
/// in it re-pointed between the check by path and the open, and a WAL was started beside a
/// user's files). Throws std::invalid_argument as above; nothing when it holds walseg.control.
void refuse_new_wal_beside_other_files(const Directory& opened, const std::string& dir);

}  // namespace walseg::tool
