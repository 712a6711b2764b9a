#include "tools/common/file_io.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cds::tools {
namespace {

bool Fail(std::string* error, std::string_view what, const std::string& path, int err) {
  *error = fmt::format("cannot {} '{}': {}", what, path, std::strerror(err));
  return false;
}

// write(2) until everything is out; false with errno set on failure.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ > STDERR_FILENO) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

// The permissions a file created by open(2) with 0666 would get.
mode_t NewFileMode() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

bool ReadInputFile(const std::string& path, std::string* text, std::string* error, size_t limit) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail(error, "read", path, errno);
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Fail(error, "read", path, errno);
  if (S_ISDIR(st.st_mode)) return Fail(error, "read", path, EISDIR);
  const size_t cap = limit == std::numeric_limits<size_t>::max() ? limit : limit + 1;
  // One read fills a regular file's buffer; the byte to spare sees its end.
  size_t size = S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) + 1 : size_t{1} << 16;
  size = std::min(size, cap);
  text->resize(size);
  size_t used = 0;
  while (used < cap) {
    if (used == text->size()) text->resize(std::min(cap, text->size() * 2));
    ssize_t n = ::read(fd, text->data() + used, text->size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(error, "read", path, errno);
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  text->resize(used);
  return true;
}

bool WriteOutputFile(const std::string& path, std::string_view data, std::string* error) {
  if (path == "-") {
    if (!WriteAll(STDOUT_FILENO, data)) return Fail(error, "write", "<stdout>", errno);
    return true;
  }
  // A symbolic link stays a link: its target is what gets replaced.
  std::string target = path;
  if (char* resolved = ::realpath(path.c_str(), nullptr)) {
    target = resolved;
    std::free(resolved);
  }
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return Fail(error, "write", path, EISDIR);
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or a pipe holds no previous content to protect.
    const int fd = ::open(target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return Fail(error, "write", path, errno);
    FdCloser closer(fd);
    if (!WriteAll(fd, data)) return Fail(error, "write", path, errno);
    return true;
  }
  std::string temp = target + ".tmp-XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return Fail(error, "write", path, errno);
  auto abandon = [&](int err) {
    ::close(fd);
    ::unlink(temp.c_str());
    return Fail(error, "write", path, err);
  };
  if (::fchmod(fd, exists ? (st.st_mode & 07777) : NewFileMode()) != 0) return abandon(errno);
  if (!WriteAll(fd, data)) return abandon(errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return Fail(error, "write", path, err);
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return Fail(error, "write", path, err);
  }
  return true;
}

}  // namespace cds::tools
