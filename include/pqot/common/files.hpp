// Small files that matter: key and identity files written once (never overwritten, flushed to disk
// before success is reported) and read with a size bound (nothing larger is buffered).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>

namespace pqot::common {

/// Writes all of `content` to `fd`, fsyncs and closes it (whatever happens): 0, or the errno of
/// the first failure.
inline int write_sync_close(int fd, std::string_view content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      return err;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return err;
  }
  return ::close(fd) != 0 ? errno : 0;
}

/// Creates `path` (it must not exist, not even as a symbolic link: O_EXCL) with permissions
/// exactly `mode` (whatever the umask), writes `content`, fsyncs and closes it. An existing path
/// throws std::system_error with code EEXIST ("cannot create '...': File exists"); on any other
/// failure the partial file is removed and std::system_error is thrown, its message naming the
/// path. The one create-never-overwrite writer of the project (key files, identities,
/// certificates, broker configuration).
inline void write_new_file(const std::string& path, std::string_view content, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot create '" + path + "'");
  if (::fchmod(fd, mode) != 0) {  // the umask may have cleared bits
    const int err = errno;
    ::close(fd);
    ::unlink(path.c_str());
    throw std::system_error(err, std::generic_category(), "setting the mode of '" + path + "'");
  }
  if (const int err = write_sync_close(fd, content); err != 0) {
    ::unlink(path.c_str());
    throw std::system_error(err, std::generic_category(), "writing '" + path + "'");
  }
}

/// Flushes a directory's entries (after creating files in it), so the new names survive a crash.
inline void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot open directory '" + dir + "'");
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw std::system_error(err, std::generic_category(), "syncing directory '" + dir + "'");
}

/// Replaces `path` with `content` atomically and durably: `path`.tmp (created with `mode`, not
/// following a link), written and fsynced, renamed over `path`, the directory fsynced. A crash
/// leaves the old content or the new one. On failure the temporary file is removed and
/// std::system_error is thrown, its message naming the path.
inline void replace_file(const std::string& path, std::string_view content, mode_t mode) {
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());  // a leftover of a crash; O_EXCL below then refuses a racing writer
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot create '" + tmp + "'");
  auto fail = [&](int err, const char* what) {
    ::unlink(tmp.c_str());
    throw std::system_error(err, std::generic_category(), std::string(what) + " '" + path + "'");
  };
  if (const int err = write_sync_close(fd, content); err != 0) fail(err, "writing");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(errno, "cannot replace");
  const std::string dir = [&] {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : slash == 0 ? std::string("/") : path.substr(0, slash);
  }();
  sync_directory(dir);
}

/// Reads the whole file at `path` into a `Container` of bytes (a wiping one for secrets), refusing
/// files over `max_size` bytes before buffering more than that. Unbuffered reads straight into the
/// container, so no copy is left in a stream buffer. Throws std::system_error for I/O errors and
/// std::length_error for a file that is too large.
template <class Container>
Container read_bounded_file(const std::string& path, std::size_t max_size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot read '" + path + "'");
  Container out;
  out.reserve(4096 < max_size + 1 ? 4096 : max_size + 1);
  for (;;) {
    if (out.size() > max_size) {
      ::close(fd);
      throw std::length_error("'" + path + "' is larger than " + std::to_string(max_size) + " bytes");
    }
    const std::size_t used = out.size();
    out.resize(used + 4096);
    const ssize_t n = ::read(fd, reinterpret_cast<char*>(out.data()) + used, 4096);
    if (n < 0 && errno == EINTR) {
      out.resize(used);
      continue;
    }
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw std::system_error(err, std::generic_category(), "reading '" + path + "'");
    }
    out.resize(used + static_cast<std::size_t>(n));
    if (n == 0) break;
  }
  ::close(fd);
  return out;
}

}  // namespace pqot::common
