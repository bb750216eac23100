// The audit tool's input readers (verify/audit/*_reader.hpp): every format read bit for bit, every malformed input
// rejected with one line naming the file, the place and the defect, and text rounded correctly to every dtype.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "npy_reader.hpp"
#include "raw_reader.hpp"
#include "text_reader.hpp"

namespace detred::audit {
namespace {

std::vector<std::byte> file_bytes(const std::string& name) {
  std::ifstream in(std::string(DETRED_AUDIT_TEST_FILES) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  std::vector<std::byte> bytes(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) bytes[i] = std::byte(static_cast<unsigned char>(text[i]));
  return bytes;
}

std::string file_text(const std::string& name) {
  const auto bytes = file_bytes(name);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The four values every well-formed test file holds, widened exactly to double.
std::vector<double> as_doubles(const dataset& data) {
  return std::visit(
      [](const auto& v) {
        std::vector<double> out;
        for (auto x : v) out.push_back(widen<double>(x));
        return out;
      },
      data.values);
}

const std::vector<double> expected{1.5, -2.25, 0.5, 4.0};

const dataset& ok(const read_result& r) {
  if (const auto* e = std::get_if<input_error>(&r)) ADD_FAILURE() << e->message;
  return std::get<dataset>(r);
}

std::string error_of(const read_result& r) {
  const auto* e = std::get_if<input_error>(&r);
  return e ? e->message : "(no error)";
}

TEST(NpyReader, ReadsEveryDtypeInBothByteOrders) {
  for (auto [name, type] : {std::pair{"f64_le.npy", element_type::f64},
                            {"f64_be.npy", element_type::f64},
                            {"f32_le.npy", element_type::f32},
                            {"f32_be.npy", element_type::f32},
                            {"f16_le.npy", element_type::f16},
                            {"f16_be.npy", element_type::f16},
                            {"f64_v2.npy", element_type::f64},
                            {"fortran_1d.npy", element_type::f64}}) {
    const auto result = parse_npy(file_bytes(name), name);
    ASSERT_TRUE(std::holds_alternative<dataset>(result)) << error_of(result);
    EXPECT_EQ(ok(result).type(), type) << name;
    EXPECT_EQ(as_doubles(ok(result)), expected) << name;
    EXPECT_EQ(ok(result).shape, std::vector<std::uint64_t>{4}) << name;
  }
}

TEST(NpyReader, ReadsMatricesInCOrder) {
  const auto result = parse_npy(file_bytes("matrix_2x3.npy"), "m");
  EXPECT_EQ(as_doubles(ok(result)), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ok(result).shape, (std::vector<std::uint64_t>{2, 3}));
}

TEST(NpyReader, RejectsEachDefectWithFileOffsetAndReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"empty.npy", "empty.npy: offset 0: empty file"},
      {"wrong_magic.npy", "wrong_magic.npy: offset 0: wrong magic"},
      {"truncated_data.npy", "truncated_data.npy: offset 152: truncated"},
      {"truncated_header.npy", "truncated_header.npy: offset 8: truncated"},
      {"trailing_bytes.npy", "trailing_bytes.npy: offset 160: 3 unexpected bytes"},
      {"int32.npy", "int32.npy: offset 10: unsupported dtype '<i4'"},
      {"complex.npy", "unsupported dtype '<c8'"},
      {"fortran_2x2.npy", "fortran_2x2.npy: offset 10: Fortran-order array of shape (2, 2)"},
      {"zero_elements.npy", "no values to audit"},
      {"bad_header.npy", "unexpected key 'shap'"},
  };
  for (auto [name, message] : cases) {
    const std::string error = error_of(parse_npy(file_bytes(name), name));
    EXPECT_NE(error.find(message), std::string::npos) << name << ": " << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << name;
  }
}

TEST(NpyReader, NeverReadsPastTheEndOfAnyPrefix) {
  // Every prefix of a valid file is rejected (none is a valid file), never read out of bounds (ASan would say).
  const auto bytes = file_bytes("f32_be.npy");
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_TRUE(std::holds_alternative<input_error>(parse_npy(std::span(bytes).first(n), "p"))) << n;
}

TEST(RawReader, ReadsEveryDtype) {
  for (auto [name, type] : {std::pair{"values.f64.bin", element_type::f64},
                            {"values.f32.bin", element_type::f32},
                            {"values.f16.bin", element_type::f16},
                            {"values.bf16.bin", element_type::bf16}}) {
    const auto result = parse_raw(file_bytes(name), type, byte_order::little, name);
    EXPECT_EQ(as_doubles(ok(result)), expected) << name;
  }
  EXPECT_EQ(as_doubles(ok(parse_raw(file_bytes("values_be.f32.bin"), element_type::f32, byte_order::big, "b"))),
            expected);
}

TEST(RawReader, RejectsTruncatedAndEmptyFiles) {
  EXPECT_NE(error_of(parse_raw(file_bytes("truncated.f32.bin"), element_type::f32, byte_order::little, "t.bin"))
                .find("t.bin: offset 12: truncated"),
            std::string::npos);
  EXPECT_NE(error_of(parse_raw({}, element_type::f64, byte_order::little, "e.bin")).find("e.bin: offset 0: empty"),
            std::string::npos);
}

TEST(TextReader, ReadsDecimalHexCommaAndWhitespaceSeparatedNumbers) {
  for (const char* name : {"decimal.txt", "hexfloat.txt", "comma.csv", "whitespace.txt"})
    for (element_type type : {element_type::f16, element_type::bf16, element_type::f32, element_type::f64})
      EXPECT_EQ(as_doubles(ok(parse_text(file_text(name), type, name))), expected) << name;
}

TEST(TextReader, RejectsEachDefectWithFileLineAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"non_numeric.txt", "non_numeric.txt: line 3, column 1: not a number: '0.5x'"},
      {"empty_field.csv", "empty_field.csv: line 1, column 5: empty field"},
      {"empty.txt", "empty.txt: line 1: empty file"},
      {"comments_only.txt", "comments_only.txt: line 2: no numbers"},
  };
  for (auto [name, message] : cases) {
    const std::string error = error_of(parse_text(file_text(name), element_type::f64, name));
    EXPECT_NE(error.find(message), std::string::npos) << name << ": " << error;
  }
}

TEST(TextReader, SkipsAUtf8ByteOrderMark) {
  EXPECT_EQ(as_doubles(ok(parse_text("\xEF\xBB\xBF"
                                     "1.5,-2.25\n0.5,4\n",
                                     element_type::f64, "bom.csv"))),
            expected);
  EXPECT_NE(error_of(parse_text("\xEF\xBB\xBF", element_type::f64, "b")).find("b: line 1: no numbers"),
            std::string::npos);
}

// The rounding of decimal text to a 16-bit type must be single: the value just above a binary16 midpoint rounds up
// even though its nearest double is the midpoint itself (which would round to even: down).
TEST(TextReader, RoundsCorrectlyToSixteenBitTypesWithoutDoubleRounding) {
  EXPECT_EQ(parse_number<half>("1.00048828125000000001")->bits, 0x3c01u);  // 1 + 2^-11 + tiny: up
  EXPECT_EQ(parse_number<half>("1.00048828125")->bits, 0x3c00u);           // the midpoint itself: to even
  EXPECT_EQ(parse_number<half>("1.00048828124999999999")->bits, 0x3c00u);
  EXPECT_EQ(parse_number<half>("1.00146484375")->bits, 0x3c02u);  // 1 + 3 * 2^-11: tie to even, up
  EXPECT_EQ(parse_number<bfloat16>("1.00390625000000000001")->bits, 0x3f81u);
  EXPECT_EQ(parse_number<bfloat16>("1.00390625")->bits, 0x3f80u);
  EXPECT_EQ(parse_number<bfloat16>("-1.00390625000000000001")->bits, 0xbf81u);
  EXPECT_EQ(parse_number<half>("65519.99999")->bits, 0x7bffu);  // just below max + ulp/2: max
  EXPECT_EQ(parse_number<half>("65520")->bits, 0x7c00u);        // the tie at max + ulp/2 overflows
  EXPECT_EQ(parse_number<half>("1e-30")->bits, 0x0000u);
  EXPECT_EQ(parse_number<half>("-0x1p-24")->bits, 0x8001u);                                    // the smallest subnormal
  EXPECT_EQ(std::bit_cast<std::uint32_t>(*parse_number<float>("0x1.000001p0")), 0x3f800000u);  // tie to even
  EXPECT_EQ(std::bit_cast<std::uint64_t>(*parse_number<double>("0.1")), 0x3fb999999999999aull);
  EXPECT_TRUE(std::isinf(*parse_number<double>("1e400")));
  EXPECT_FALSE(parse_number<double>("1e").has_value());
  EXPECT_FALSE(parse_number<double>("").has_value());
}

}  // namespace
}  // namespace detred::audit
