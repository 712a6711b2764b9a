#pragma once

// Input and output files as every tool handles them: an input is read whole with
// one sized read, and an output file is replaced only by a complete new version,
// so a run that fails (or is killed) never leaves a damaged or empty file behind.
// Failures are described with the system's reason (strerror).

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace cds::tools {

// Reads `path` ("-": stdin) into `text`. At most `limit` + 1 bytes are read, so a
// caller with a size limit sees that the input exceeds it without reading an
// endless one (/dev/zero) to the end. On failure returns false and sets `error`
// to "cannot read 'PATH': REASON" (a directory gives "Is a directory").
bool ReadInputFile(const std::string& path, std::string* text, std::string* error,
                   size_t limit = std::numeric_limits<size_t>::max());

// Writes `data` to `path` ("-": stdout). A regular file (or a new one) is written
// to a temporary file beside it that is renamed over `path` once complete, keeping
// an existing file's permissions; a device or pipe (/dev/null, a FIFO) is written
// in place. On failure `path` is unchanged, no temporary is left, and `error` is
// set to "cannot write 'PATH': REASON".
bool WriteOutputFile(const std::string& path, std::string_view data, std::string* error);

}  // namespace cds::tools
