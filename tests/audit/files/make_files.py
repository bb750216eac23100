#!/usr/bin/env python3
"""Writes the small input files of detred-audit's end-to-end tests (tests/audit/files/) and the seed corpus of its
parser fuzzer (tests/audit/corpus/). Needs only the standard library (no numpy): .npy files are written byte by byte
as numpy.lib.format specifies. The files are committed; run this again only to change them."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "corpus")

# Every well-formed file holds these four values (in its own type): all exact in f16, bf16, f32 and f64,
# so every method's sum is 3.75 = 0x1.ep+1 exactly.
VALUES = [1.5, -2.25, 0.5, 4.0]
HALF_BITS = [0x3E00, 0xC080, 0x3800, 0x4400]  # the same values as binary16
BF16_BITS = [0x3FC0, 0xC010, 0x3F00, 0x4080]  # and as bfloat16


def npy(descr, shape, payload, fortran=False, version=1, pad=True):
    shape_text = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, "True" if fortran else "False", shape_text)
    length_bytes = 2 if version == 1 else 4
    total = 8 + length_bytes + len(header) + 1
    if pad:
        header += " " * ((64 - total % 64) % 64)
    header += "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode("latin-1") + payload


def pack(fmt_char, endian, values):
    return struct.pack(endian + fmt_char * len(values), *values)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def main():
    # Well-formed .npy files: every supported dtype in both byte orders, a matrix, format version 2.0.
    write("f64_le.npy", npy("<f8", [4], pack("d", "<", VALUES)))
    write("f64_be.npy", npy(">f8", [4], pack("d", ">", VALUES)))
    write("f32_le.npy", npy("<f4", [4], pack("f", "<", VALUES)))
    write("f32_be.npy", npy(">f4", [4], pack("f", ">", VALUES)))
    write("f16_le.npy", npy("<f2", [4], pack("H", "<", HALF_BITS)))
    write("f16_be.npy", npy(">f2", [4], pack("H", ">", HALF_BITS)))
    write("matrix_2x3.npy", npy("<f8", [2, 3], pack("d", "<", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])))  # C order: 1..6
    write("f64_v2.npy", npy("<f8", [4], pack("d", "<", VALUES), version=2))
    write("fortran_1d.npy", npy("<f8", [4], pack("d", "<", VALUES), fortran=True))  # same layout as C order
    write("f64_v3.npy", npy("<f8", [4], pack("d", "<", VALUES), version=3))  # 4-byte header length, as 2.0
    write("f32_native.npy", npy("=f4", [4], pack("f", "<", VALUES)))  # '=': the writer's (here little-endian) order

    # Malformed .npy files, one defect each.
    write("empty.npy", b"")
    write("wrong_magic.npy", b"\x93NUMPZ" + npy("<f8", [4], pack("d", "<", VALUES))[6:])
    write("truncated_data.npy", npy("<f8", [4], pack("d", "<", VALUES))[:-5])
    write("truncated_header.npy", npy("<f8", [4], pack("d", "<", VALUES))[:40])
    write("trailing_bytes.npy", npy("<f8", [4], pack("d", "<", VALUES)) + b"\0\0\0")
    write("int32.npy", npy("<i4", [4], pack("i", "<", [1, 2, 3, 4])))
    write("complex.npy", npy("<c8", [2], pack("f", "<", VALUES)))
    write("fortran_2x2.npy", npy("<f8", [2, 2], pack("d", "<", VALUES), fortran=True))
    write("zero_elements.npy", npy("<f8", [0], b""))
    write("bad_header.npy", npy("<f8", [4], pack("d", "<", VALUES)).replace(b"'shape'", b"'shap' "))

    # Raw binary, little-endian, every --dtype; and one truncated file.
    write("values.f64.bin", pack("d", "<", VALUES))
    write("values.f32.bin", pack("f", "<", VALUES))
    write("values.f16.bin", pack("H", "<", HALF_BITS))
    write("values.bf16.bin", pack("H", "<", BF16_BITS))
    write("values_be.f32.bin", pack("f", ">", VALUES))
    write("truncated.f32.bin", pack("f", "<", VALUES)[:-1])
    write("empty.bin", b"")

    # Text in every accepted spelling; and the text errors.
    write("decimal.txt", b"1.5\n-2.25\n0.5\n4.0\n")
    write("hexfloat.txt", b"0x1.8p+0\n-0x1.2p+1\n0x1p-1\n0x1p2\n")
    write("comma.csv", b"1.5, -2.25,0.5\n4.0\n")
    write("whitespace.txt", b"  1.5 -2.25\t0.5\r\n\n   4e0   # a comment\n")
    write("non_numeric.txt", b"1.5\n-2.25\n0.5x\n4.0\n")
    write("empty_field.csv", b"1.5,,-2.25\n")
    write("empty.txt", b"")
    write("comments_only.txt", b"# nothing here\n\n")

    # Special values: IEEE gives NaN for inf + -inf and for NaN inputs; a finite decimal that overflows when rounded.
    write("inf_minus_inf.txt", b"inf\n-inf\n1\n")
    write("all_nan.txt", b"nan\nnan\n")
    write("plus_inf.txt", b"1\ninf\n2\n")
    write("overflow.txt", b"1\n1e400\n2\n-1e999\n")

    # Fuzzer seeds: the first byte selects the parser (see verify/audit/fuzz/fuzz_parsers.cpp), the rest is the file.
    os.makedirs(CORPUS, exist_ok=True)
    seeds = {
        "npy_f64": (0, "f64_le.npy"), "npy_f16_be": (0, "f16_be.npy"), "npy_matrix": (0, "matrix_2x3.npy"),
        "npy_v2": (0, "f64_v2.npy"), "npy_fortran": (0, "fortran_2x2.npy"), "npy_int": (0, "int32.npy"),
        "raw_f32": (1 | (2 << 2), "values.f32.bin"), "raw_f16_be": (1 | (0 << 2) | (1 << 4), "values.f16.bin"),
        "raw_bf16": (1 | (1 << 2), "values.bf16.bin"), "text_f64": (2 | (3 << 2), "decimal.txt"),
        "text_hex_f16": (2 | (0 << 2), "hexfloat.txt"), "text_csv_bf16": (2 | (1 << 2), "comma.csv"),
        "text_ws_f32": (2 | (2 << 2), "whitespace.txt"),
    }
    for name, (selector, source) in seeds.items():
        with open(os.path.join(HERE, source), "rb") as f:
            data = f.read()
        with open(os.path.join(CORPUS, name), "wb") as f:
            f.write(bytes([selector]) + data)


if __name__ == "__main__":
    main()
