// .npy reading and writing: round trips for versions 1-3, and a clear error
// (never a crash or an allocation from an unchecked size) for each malformed file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/npy.h"

namespace relugrad {
namespace {

std::string TempDir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/relugrad-npy-test-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  return dir;
}

std::string WriteRaw(const std::string& name, const std::string& bytes) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A raw .npy image with a given header dict and payload.
std::string Image(int major, const std::string& dict, size_t payload_bytes, char magic0 = '\x93') {
  std::string head = std::string(1, magic0) + "NUMPY";
  head += static_cast<char>(major);
  head += '\0';
  std::string d = dict;
  const size_t pre = major == 1 ? 10 : 12;
  while ((pre + d.size() + 1) % 64 != 0) d += ' ';
  d += '\n';
  const uint32_t len = static_cast<uint32_t>(d.size());
  head += static_cast<char>(len & 0xff);
  head += static_cast<char>(len >> 8);
  if (major != 1) {
    head += '\0';
    head += '\0';
  }
  return head + d + std::string(payload_bytes, '\x01');
}

std::string ReadError(const std::string& path) {
  npy::Array a;
  std::string error;
  EXPECT_FALSE(npy::Read(path, &a, &error)) << path;
  return error;
}

TEST(Npy, RoundTrip) {
  std::vector<float> v = {1, -2, 3.5f, 0, -0.0f, 7};
  std::string error;
  const std::string path = TempDir() + "/rt.npy";
  ASSERT_TRUE(npy::Write(path, "<f4", {2, 3}, v.data(), v.size() * 4, &error)) << error;
  npy::Array a;
  ASSERT_TRUE(npy::Read(path, &a, &error)) << error;
  EXPECT_EQ(a.descr, "<f4");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.count, 6);
  EXPECT_EQ(std::memcmp(a.data.data(), v.data(), 24), 0);
  // Scalars, empty arrays, 1-D shapes with the trailing comma.
  ASSERT_TRUE(npy::Write(path, "<f8", {}, v.data(), 8, &error));
  ASSERT_TRUE(npy::Read(path, &a, &error));
  EXPECT_EQ(a.count, 1);
  ASSERT_TRUE(npy::Write(path, "<f2", {0}, nullptr, 0, &error));
  ASSERT_TRUE(npy::Read(path, &a, &error));
  EXPECT_EQ(a.count, 0);
}

TEST(Npy, ReadsVersions2And3) {
  for (int major : {2, 3}) {
    const std::string path =
        WriteRaw("v" + std::to_string(major) + ".npy",
                 Image(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16));
    npy::Array a;
    std::string error;
    ASSERT_TRUE(npy::Read(path, &a, &error)) << error;
    EXPECT_EQ(a.count, 4);
  }
}

TEST(Npy, RejectsMalformedFilesClearly) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  EXPECT_NE(ReadError(TempDir() + "/missing.npy").find("cannot open"), std::string::npos);
  EXPECT_NE(ReadError(WriteRaw("empty.npy", "")).find("truncated"), std::string::npos);
  EXPECT_NE(ReadError(WriteRaw("magic.npy", Image(1, ok_dict, 16, 'X'))).find("wrong magic"),
            std::string::npos);
  EXPECT_NE(ReadError(WriteRaw("ver.npy", Image(9, ok_dict, 16))).find("version"),
            std::string::npos);
  EXPECT_NE(ReadError(WriteRaw("trunc.npy", Image(1, ok_dict, 15))).find("truncated"),
            std::string::npos);
  EXPECT_NE(ReadError(WriteRaw("trail.npy", Image(1, ok_dict, 17))).find("trailing"),
            std::string::npos);
  EXPECT_NE(ReadError(WriteRaw("huge.npy", Image(1,
                                                 "{'descr': '<f4', 'fortran_order': False, "
                                                 "'shape': (4000000000000, 4000000000000), }",
                                                 16)))
                .find("overflow"),
            std::string::npos);
  EXPECT_NE(
      ReadError(
          WriteRaw("big.npy",
                   Image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }",
                         16)))
          .find("claims"),
      std::string::npos);
  EXPECT_NE(
      ReadError(WriteRaw("be.npy",
                         Image(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", 16)))
          .find("big-endian"),
      std::string::npos);
  EXPECT_NE(
      ReadError(
          WriteRaw("fo.npy",
                   Image(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16)))
          .find("Fortran"),
      std::string::npos);
  EXPECT_NE(
      ReadError(WriteRaw("hdr.npy",
                         Image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,", 16)))
          .find("malformed"),
      std::string::npos);
  EXPECT_NE(
      ReadError(
          WriteRaw("neg.npy",
                   Image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", 16)))
          .find("malformed"),
      std::string::npos);
  EXPECT_NE(ReadError(WriteRaw("key.npy", Image(1, "{'descr': '<f4', 'shape': (4,), }", 16)))
                .find("malformed"),
            std::string::npos);
  EXPECT_NE(
      ReadError(
          WriteRaw(
              "struct.npy",
              Image(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", 16)))
          .find("structured"),
      std::string::npos);
  // A kind that is not a letter; a quote there would also break the written header's quoting
  // (a file Write could not read back).
  EXPECT_NE(
      ReadError(
          WriteRaw("quote.npy",
                   Image(1, "{\"descr\": \"<'4\", \"fortran_order\": False, \"shape\": (1,)}", 4)))
          .find("unsupported dtype"),
      std::string::npos);
  // A header length field pointing far past the end of the file.
  std::string lying = Image(1, ok_dict, 16);
  lying[8] = '\xff';
  lying[9] = '\xff';
  EXPECT_NE(ReadError(WriteRaw("lying.npy", lying)).find("truncated"), std::string::npos);
  EXPECT_NE(ReadError(TempDir()).find("not a regular file"), std::string::npos);
}

TEST(Npy, WriteThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
  const std::string dir = TempDir();
  const float v[2] = {1, 2};
  std::string error;
  ASSERT_TRUE(npy::Write(dir + "/target.npy", "<f4", {1}, v, 4, &error)) << error;
  ASSERT_EQ(::symlink((dir + "/target.npy").c_str(), (dir + "/link.npy").c_str()), 0);
  ASSERT_TRUE(npy::Write(dir + "/link.npy", "<f4", {2}, v, 8, &error)) << error;
  struct stat st;
  ASSERT_EQ(::lstat((dir + "/link.npy").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  npy::Array a;
  ASSERT_TRUE(npy::Read(dir + "/target.npy", &a, &error)) << error;
  EXPECT_EQ(a.shape, std::vector<int64_t>({2}));
}

TEST(Npy, WriteIntoAFifoStreamsAndKeepsTheNode) {
  // A FIFO (as a device such as /dev/null) takes the bytes: replacing the node by a regular
  // file, as a temporary file renamed over it would, destroys it. The read end is opened first
  // (non-blocking), so the writer's open does not wait, and the file fits in the pipe's buffer.
  const std::string fifo = TempDir() + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(rd, 0);
  const float v[2] = {1, 2};
  std::string error;
  const bool ok = npy::Write(fifo, "<f4", {2}, v, 8, &error);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(rd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  ::close(rd);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(got.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(got.size() % 64, 8u);  // header padded to 64 bytes, then 8 bytes of data
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(Npy, FailedWriteLeavesNoFile) {
  std::string error;
  const float v[2] = {1, 2};
  EXPECT_FALSE(npy::Write("/nonexistent-dir/x.npy", "<f4", {2}, v, 8, &error));
  EXPECT_NE(error.find("temporary"), std::string::npos);
  if (geteuid() != 0) {  // root ignores directory permissions
    const std::string ro = TempDir() + "/ro";
    mkdir(ro.c_str(), 0555);
    EXPECT_FALSE(npy::Write(ro + "/x.npy", "<f4", {2}, v, 8, &error));
  }
}

}  // namespace
}  // namespace relugrad
