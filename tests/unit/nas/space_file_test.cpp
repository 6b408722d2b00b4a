// The search-space file of `capsgen dse nas`: defaults, a round trip, and errors that name the field.
#include <gtest/gtest.h>

#include "core/input_error.hpp"
#include "nas/space_file.hpp"

namespace capsgen::nas {
namespace {

const std::string kRoot = CAPSGEN_REPO_ROOT;

std::string error_of(const std::string& yaml) {
  try {
    parse_search_space(yaml, "s.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NasSpaceFile, EmptyKeysTakeThePapersSpace) {
  const SearchSpace s = parse_search_space("classes: 10\n", "s.yaml");
  const SearchSpace d;
  EXPECT_EQ(s.conv_channels, d.conv_channels);
  EXPECT_EQ(s.routing, d.routing);
  EXPECT_EQ(s.max_convs, d.max_convs);
  // configs/nas/capsnet-space.yaml writes those defaults out.
  const SearchSpace f = load_search_space(kRoot + "/configs/nas/capsnet-space.yaml");
  EXPECT_EQ(search_space_yaml(f), search_space_yaml(d));
}

TEST(NasSpaceFile, RoundTrip) {
  const SearchSpace s = load_search_space(kRoot + "/configs/nas/tiny-space.yaml");
  EXPECT_EQ(s.conv_channels, (std::vector<int>{4, 8}));
  EXPECT_EQ(s.max_convs, 1);
  EXPECT_EQ(search_space_yaml(parse_search_space(search_space_yaml(s), "t.yaml")), search_space_yaml(s));
}

TEST(NasSpaceFile, ErrorsNameLineAndField) {
  EXPECT_NE(error_of("conv_kernel: [3]\n").find("s.yaml:1:1: unknown key 'conv_kernel' (did you mean 'conv_kernels'?"),
            std::string::npos);
  EXPECT_NE(error_of("classes: 10\nconv_channels: [8, 4]\n").find("s.yaml:2:"), std::string::npos);
  EXPECT_NE(error_of("conv_channels: [8, 4]\n").find("ascending"), std::string::npos);
  EXPECT_NE(error_of("conv_channels: []\n").find("at least one"), std::string::npos);
  EXPECT_NE(error_of("conv_channels: 8\n").find("list of integers"), std::string::npos);
  EXPECT_NE(error_of("routing: [0, 1]\n").find("routing[0]"), std::string::npos);
  EXPECT_NE(error_of("min_convs: 3\nmax_convs: 2\n").find("max_convs: 2 is below min_convs 3"), std::string::npos);
  EXPECT_NE(error_of("input: {channels: 1, height: 28}\n").find("input"), std::string::npos);
}

}  // namespace
}  // namespace capsgen::nas
