"""The bad-input corpus: malformed .npy files, command lines and output paths, each with the
message a user should see. Files are generated here, at test time, into a work directory.

A case is a Usage (the binary must refuse it: exit 2, one line on stderr naming the option or
file and matching `pattern`) or an Accepted (valid input: the binary must not refuse it; it
runs on a GPU, or exits 3 where there is none).

The reader accepts what np.load reads as a 2-D C-order float32 array and refuses the rest;
each .npy case below was loaded with np.load (numpy 1.24.2 and 2.1.3) to decide which side it
is on (numpy_verdicts.py repeats that check where numpy is installed). Where the harness is
stricter than numpy, the case says why: its limits (2^31 elements, 1000000 rows, finite
values, rows and columns >= 1) or Python syntax numpy never writes.
"""
import os
import struct
from dataclasses import dataclass, field
from typing import Callable, Optional


@dataclass
class Usage:
    name: str
    args: list
    pattern: str                      # regular expression the one-line message must match
    env: dict = field(default_factory=dict)
    after: Optional[Callable] = None  # after(result) -> error text or None: state left behind
    stdin: Optional[bytes] = None     # written to the binary's standard input (a pipe)


@dataclass
class Accepted:
    name: str
    args: list
    # after(result, gpu) -> error text or None; gpu says whether the run used a GPU (exit 0).
    after: Optional[Callable] = None
    stdin: Optional[bytes] = None     # written to the binary's standard input (a pipe)


# --- .npy bytes -------------------------------------------------------------------------

def npy(header, data=b"", version=(1, 0), length=None, pad=True):
    """A .npy file: magic, version, header length (`length` overrides it), header, data."""
    h = header.encode("latin-1") if isinstance(header, str) else header
    prefix = 10 if version[0] == 1 else 12
    if pad:  # as numpy writes it: blanks and a newline up to a multiple of 64 bytes
        h += b" " * ((64 - (prefix + len(h) + 1) % 64) % 64) + b"\n"
    n = len(h) if length is None else length
    size = struct.pack("<H", n) if version[0] == 1 else struct.pack("<I", n)
    return b"\x93NUMPY" + bytes(version) + size + h + data


def hdr(shape="(2, 3)", fortran="False", descr="'<f4'"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


def f32(*values):
    return struct.pack("<%df" % len(values), *values)


def zeros(n):
    return b"\0" * (4 * n)


NAN, INF = float("nan"), float("inf")
A_VALUES = (1, 2, 3, 4, 5, 6)


def build(work):
    """Writes the corpus files under `work` and returns the list of cases."""
    os.makedirs(work, exist_ok=True)

    def put(name, data):
        path = os.path.join(work, name)
        if os.path.lexists(path):  # a previous run may have made it read-only
            os.remove(path)
        with open(path, "wb") as f:
            f.write(data)
        return path

    a = put("a.npy", npy(hdr("(2, 3)"), f32(*A_VALUES)))   # 2 x 3: M = 2, K = 3
    b = put("b.npy", npy(hdr("(3, 2)"), f32(*A_VALUES)))   # 3 x 2: N = 2
    c = put("c.npy", npy(hdr("(2, 2)"), f32(1, 2, 3, 4)))  # 2 x 2
    cases = []

    # Bad .npy files, each given as --load-a with a good B: (file name, bytes, message).
    bad_a = [
        # size, magic, version, header length
        ("empty", b"", r"is empty"),
        ("magic_cut", b"\x93NUM", r"not a \.npy file"),
        ("magic_wrong", b"\x93NUMPZ\x01\x00" + b"x" * 100, r"not a \.npy file"),
        ("text", b"hello, this is not numpy at all\n", r"not a \.npy file"),
        ("npz", b"PK\x03\x04" + b"\0" * 60, r"is a zip archive \(an \.npz\?\)"),
        ("version_cut", b"\x93NUMPY\x01", r"ends inside its version number"),
        ("length_cut_v1", b"\x93NUMPY\x01\x00\x10", r"ends inside its header length"),
        ("length_cut_v2", b"\x93NUMPY\x02\x00\x10\x00\x00", r"ends inside its header length"),
        ("version_0_0", npy(hdr(), zeros(6), version=(0, 0)), r"version 0\.0; this reader knows 1\.0, 2\.0 and 3\.0"),
        ("version_1_1", npy(hdr(), zeros(6), version=(1, 1)), r"version 1\.1; this reader knows"),
        ("version_4_0", npy(hdr(), zeros(6), version=(4, 0)), r"version 4\.0; this reader knows"),
        ("version_255", npy(hdr(), zeros(6), version=(255, 255)), r"version 255\.255"),
        ("header_len_65535", npy(hdr(), zeros(6), length=65535), r"header length 65535 is more than the 10000 bytes"),
        ("header_len_4g_v2", npy(hdr(), zeros(6), version=(2, 0), length=0xFFFFFFFF),
         r"header length 4294967295 is more than the 10000"),
        ("header_len_4g_v3", npy(hdr(), zeros(6), version=(3, 0), length=0xFFFFFFFF),
         r"header length 4294967295 is more than the 10000"),
        ("header_len_10002", npy("{" + " " * 10000 + "}", pad=False, version=(2, 0)), r"header length 10002 is more"),
        # The header that overflowed the stack of a regular expression: 26 KB of blanks.
        ("blanks_26k", npy(hdr().replace(", 'shape'", "," + " " * 26000 + "'shape'"), zeros(6), version=(2, 0)),
         r"header length 26\d\d\d is more than the 10000 bytes this reader \(like numpy's np\.load\) accepts"),
        ("header_past_eof", npy(hdr(), b"", length=300), r"ends inside its header \(the header is 300 bytes"),
        ("header_len_short", npy(hdr(), zeros(6), length=20, pad=False), r"header has a string that is never closed"),
        ("header_len_short_2", npy(hdr(), zeros(6), length=16, pad=False), r"header ends before the dict's closing '\}'"),
        ("header_len_zero", npy(b"", zeros(6), length=0, pad=False), r"not a Python dict: it starts with the end of the header"),
        # dict syntax
        ("no_closing_brace", npy(hdr()[:-1].rstrip(" ,"), zeros(6)), r"header ends before the dict's closing '\}'"),
        ("not_a_dict", npy("[1, 2, 3]", zeros(6)), r"header is not a Python dict: it starts with '\[1', not '\{'"),
        ("empty_dict", npy("{}", zeros(6)), r"header has no 'descr'"),
        ("nested_dict_descr", npy(hdr(descr="{'a': '<f4'}"), zeros(6)), r"'descr' is a structured dtype"),
        ("structured_descr", npy(hdr(descr="[('x', '<f4')]"), zeros(6)), r"'descr' is a structured dtype"),
        ("deep_tuple", npy(hdr(shape="(" * 4000 + ")" * 4000), zeros(6), version=(2, 0)),
         r"'shape' must be a tuple of integers such as \(3, 4\), found '\('"),
        ("deep_braces", npy("{" * 9000, zeros(6), version=(2, 0)), r"header: expected a quoted key, found '\{'"),
        ("duplicate_key", npy("{'shape': (2, 3), " + hdr()[1:], zeros(6)), r"header gives 'shape' twice"),
        ("unknown_key", npy(hdr()[:-1] + "'extra': 1, }", zeros(6)),
         r"header has the key 'extra'; a \.npy header holds exactly 'descr', 'fortran_order' and 'shape'"),
        ("unquoted_key", npy(hdr().replace("'descr'", "descr"), zeros(6)), r"header: expected a quoted key, found 'descr'"),
        ("missing_colon", npy(hdr().replace("'descr':", "'descr'"), zeros(6)), r"expected ':' after 'descr', found ''<f4''"),
        ("missing_comma", npy(hdr().replace("'<f4', ", "'<f4' "), zeros(6)),
         r"expected ',' or '\}' after the value of 'descr', found ''fortran_order''"),
        ("text_after_dict", npy(hdr() + " trailing", zeros(6)), r"header has text after its closing '\}': 'trailing'"),
        ("unclosed_string", npy("{'descr: '<f4'", zeros(6)), r"expected ':' after 'descr: ', found '<f4''"),
        ("string_never_closed", npy("{'descr", zeros(6)), r"header has a string that is never closed"),
        ("backslash", npy(hdr(descr="'<f\\x34'"), zeros(6)), r"header has a string with a backslash"),
        ("nul_in_descr", npy(hdr(descr="'<f4\0'"), zeros(6)), r"dtype must be little-endian float32 \('<f4'\), found '<f4\\x00'"),
        ("latin1_in_descr", npy(hdr(descr="'<f4\xe9'"), zeros(6)), r"found '<f4\\xe9'"),
        # fortran_order
        ("fortran_true", npy(hdr(fortran="True"), zeros(6)), r"is in Fortran order; save it with np\.ascontiguousarray"),
        ("fortran_0", npy(hdr(fortran="0"), zeros(6)), r"'fortran_order' must be True or False, found '0'"),
        ("fortran_1", npy(hdr(fortran="1"), zeros(6)), r"'fortran_order' must be True or False, found '1'"),
        ("fortran_lowercase", npy(hdr(fortran="false"), zeros(6)), r"must be True or False, found 'false'"),
        ("fortran_string", npy(hdr(fortran="'False'"), zeros(6)), r"must be True or False, found ''False''"),
        ("fortran_missing", npy("{'descr': '<f4', 'shape': (2, 3), }", zeros(6)), r"header has no 'fortran_order'"),
        ("descr_missing", npy("{'fortran_order': False, 'shape': (2, 3), }", zeros(6)), r"header has no 'descr'"),
        ("shape_missing", npy("{'descr': '<f4', 'fortran_order': False, }", zeros(6)), r"header has no 'shape'"),
        # dtype
        ("dtype_f8", npy(hdr(descr="'<f8'"), zeros(12)), r"found '<f8' \(float64; convert with a\.astype\(np\.float32\)\)"),
        ("dtype_big_endian", npy(hdr(descr="'>f4'"), zeros(6)), r"found '>f4' \(big-endian float32"),
        ("dtype_u1", npy(hdr(descr="'|u1'"), b"\0" * 6), r"found '\|u1'"),
        ("dtype_i4", npy(hdr(descr="'<i4'"), zeros(6)), r"found '<i4'"),
        ("dtype_f2", npy(hdr(descr="'<f2'"), b"\0" * 12), r"found '<f2' \(float16"),
        # np.load reads 'f4', '=f4', '|f4', 'f', 'float32' and 'single' as float32 (ok.dtype_*
        # below), but not these.
        ("dtype_c8", npy(hdr(descr="'<c8'"), zeros(12)), r"found '<c8'"),
        ("dtype_bang_f4", npy(hdr(descr="'!f4'"), zeros(6)), r"found '!f4'"),
        ("dtype_float", npy(hdr(descr="'float'"), zeros(12)), r"found 'float'"),
        ("dtype_blank", npy(hdr(descr="'<f4 '"), zeros(6)), r"found '<f4 '"),
        ("dtype_not_string", npy(hdr(descr="4"), zeros(6)), r"expected a dtype string such as '<f4' for 'descr', found '4'"),
        # shape
        ("shape_0d", npy(hdr(shape="()"), zeros(1)), r"shape \(\) has 0 dimensions; a matrix has 2 \(rows, cols\)"),
        ("shape_1d", npy(hdr(shape="(6,)"), zeros(6)), r"shape \(6,\) has 1 dimension; a matrix has 2"),
        ("shape_3d", npy(hdr(shape="(1, 2, 3)"), zeros(6)), r"shape \(1, 2, 3\) has 3 dimensions"),
        ("shape_many_dims", npy(hdr(shape="(" + "1, " * 40 + ")"), zeros(1)), r"shape \(1, 1, 1, 1, \.\.\.\) has 40 dimensions"),
        ("shape_zero_rows", npy(hdr(shape="(0, 3)")), r"shape \(0, 3\) is empty; rows and cols must be at least 1"),
        ("shape_zero_cols", npy(hdr(shape="(2, 0)")), r"shape \(2, 0\) is empty"),
        ("shape_minus_zero", npy(hdr(shape="(-0, 3)")), r"shape \(-0, 3\) is empty"),
        ("shape_negative_rows", npy(hdr(shape="(-1, 3)"), zeros(6)), r"shape \(-1, 3\) has a negative dimension"),
        ("shape_negative_cols", npy(hdr(shape="(2, -3)"), zeros(6)), r"shape \(2, -3\) has a negative dimension"),
        ("shape_plus_sign", npy(hdr(shape="(+2, 3)"), zeros(5)), r"holds 20 bytes of data, but shape \(\+2, 3\) of float32 needs 24"),
        ("shape_over_64_bits", npy(hdr(shape="(99999999999999999999999, 1)"), zeros(1)),
         r"shape \(99999999999999999999999, 1\) is too large: a matrix must have fewer than 2\^31 elements"),
        ("shape_2_31", npy(hdr(shape="(2147483648, 1)"), zeros(1)), r"shape \(2147483648, 1\) is too large"),
        ("shape_elements_over_2_31", npy(hdr(shape="(46341, 46341)"), zeros(1)), r"shape \(46341, 46341\) is too large"),
        # Past 64 bits (numpy: OverflowError). These once wrapped round: 2^64 + 2 rows read as 2.
        ("shape_2_64_plus_2", npy(hdr(shape="(18446744073709551618, 3)"), zeros(6)),
         r"shape \(18446744073709551618, 3\) is too large: a matrix must have fewer than 2\^31 elements"),
        ("shape_2_64_plus_1_twice", npy(hdr(shape="(18446744073709551617, 18446744073709551617)"), zeros(1)),
         r"shape \(18446744073709551617, 18446744073709551617\) is too large"),
        ("shape_2_64_twice", npy(hdr(shape="(18446744073709551616, 18446744073709551616)")),
         r"shape \(18446744073709551616, 18446744073709551616\) is too large"),
        # Python reads no integer with a leading zero but 0 (numpy: "Cannot parse header").
        ("shape_leading_zero", npy(hdr(shape="(02, 3)"), zeros(6)),
         r"'shape' has the integer 02 with a leading zero, which np\.load does not read"),
        ("shape_leading_zero_cols", npy(hdr(shape="(2, 03)"), zeros(6)), r"'shape' has the integer 03 with a leading zero"),
        ("shape_zeros", npy(hdr(shape="(00, 3)")), r"shape \(00, 3\) is empty"),  # numpy: 0 rows
        ("shape_vertical_tab", npy(hdr(shape="(2,\v3)"), zeros(6)), r"'shape' must be a tuple of integers.*found '\\x0b3'"),
        ("shape_two_trailing_commas", npy(hdr(shape="(2, 3,,)"), zeros(6)), r"'shape' must be a tuple of integers.*found ','"),
        ("shape_only_comma", npy(hdr(shape="(,)"), zeros(6)), r"'shape' must be a tuple of integers.*found ','"),
        ("shape_string_dim", npy(hdr(shape="(2, 'a')"), zeros(6)), r"'shape' must be a tuple of integers such as \(3, 4\), found ''a''"),
        ("shape_float_dim", npy(hdr(shape="(2.0, 3)"), zeros(6)), r"'shape' must be a tuple of integers.*found '\.0' after 2"),
        ("shape_no_comma", npy(hdr(shape="(2 3)"), zeros(6)), r"'shape' must be a tuple of integers.*found '3' after 2"),
        ("shape_double_comma", npy(hdr(shape="(2,, 3)"), zeros(6)), r"'shape' must be a tuple of integers.*found ','"),
        ("shape_list", npy(hdr(shape="[2, 3]"), zeros(6)), r"'shape' must be a tuple of integers such as \(3, 4\), found '\[2'"),
        ("shape_underscore", npy(hdr(shape="(1_000, 2)"), zeros(6)), r"'shape' must be a tuple of integers.*found '_000'"),
        ("shape_string", npy(hdr(shape="'(2, 3)'"), zeros(6)), r"'shape' must be a tuple of integers"),
        ("shape_unclosed", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, }", zeros(6)),
         r"'shape' must be a tuple of integers.*found '\}'"),
        # data against shape
        ("data_short_1_byte", npy(hdr(), zeros(6)[:-1]), r"holds 23 bytes of data, but shape \(2, 3\) of float32 needs 24 \(the file is cut short\)"),
        ("data_short_1_row", npy(hdr(), zeros(3)), r"holds 12 bytes of data, but shape \(2, 3\) of float32 needs 24"),
        ("data_none", npy(hdr()), r"holds 0 bytes of data, but shape \(2, 3\)"),
        ("data_long_1_byte", npy(hdr(), zeros(6) + b"\0"), r"holds 25 bytes of data, but shape \(2, 3\) of float32 needs 24 \(the shape or dtype is wrong\)"),
        ("data_long_1_float", npy(hdr(), zeros(7)), r"holds 28 bytes of data.*\(the shape or dtype is wrong\)"),
        ("data_float64", npy(hdr(), struct.pack("<6d", *A_VALUES)), r"holds 48 bytes of data, but shape \(2, 3\) of float32 needs 24"),
        # The 288-byte file that once made the loader allocate and zero 8 GiB.
        ("claims_2_31_rows", npy(hdr(shape="(2147483647, 1)"), zeros(56)),
         r"holds 224 bytes of data, but shape \(2147483647, 1\) of float32 needs 8589934588 \(the file is cut short\)"),
        ("claims_1e9_elements", npy(hdr(shape="(1000000, 1000)"), zeros(1)), r"needs 4000000000 \(the file is cut short\)"),
        # values
        ("nan_at_1_2", npy(hdr(), f32(1, 2, 3, 4, 5, NAN)),
         r"element \[1, 2\] \(row, column from 0\) is NaN, and inputs must be finite \(1 non-finite value in all\)"),
        ("inf_at_0_1", npy(hdr(), f32(1, INF, 3, 4, 5, 6)), r"element \[0, 1\] \(row, column from 0\) is \+Inf"),
        ("minus_inf", npy(hdr(), f32(1, 2, 3, -INF, 5, 6)), r"element \[1, 0\] .* is -Inf"),
        ("signalling_nan", npy(hdr(), f32(1, 2) + struct.pack("<I", 0x7F800001) + f32(4, 5, 6)), r"element \[0, 2\] .* is NaN"),
        ("all_nan", npy(hdr(), f32(*[NAN] * 6)), r"element \[0, 0\] .* is NaN, .*\(6 non-finite values in all\)"),
    ]
    for name, data, pattern in bad_a:
        path = put(name + ".npy", data)
        cases.append(Usage("npy." + name, ["--check", "--load-a", path, "--load-b", b],
                           r"--load-a \S*/%s\.npy: .*%s" % (name, pattern)))

    # Bad files in other roles and places.
    b_inf = put("b_inf.npy", npy(hdr("(3, 2)"), f32(1, 2, 3, 4, INF, 6)))
    c_nan = put("c_nan.npy", npy(hdr("(2, 2)"), f32(1, 2, 3, NAN)))
    b_bad = put("b_fortran_0.npy", npy(hdr("(3, 2)", fortran="0"), zeros(6)))
    a_wide = put("a_2x4.npy", npy(hdr("(2, 4)"), zeros(8)))
    c_wrong = put("c_3x2.npy", npy(hdr("(3, 2)"), zeros(6)))
    col = put("col_46341.npy", npy(hdr("(46341, 1)"), zeros(46341)))
    row = put("row_46341.npy", npy(hdr("(1, 46341)"), zeros(46341)))
    tall = put("tall.npy", npy(hdr("(1000001, 1)"), zeros(1000001)))
    one = put("one.npy", npy(hdr("(1, 1)"), f32(2)))
    col46000 = put("col_46000.npy", npy(hdr("(46000, 1)"), zeros(46000)))
    row46000 = put("row_46000.npy", npy(hdr("(1, 46000)"), zeros(46000)))
    directory = os.path.join(work, "a_directory.npy")
    os.makedirs(directory, exist_ok=True)
    missing = os.path.join(work, "does_not_exist.npy")
    broken_link = os.path.join(work, "broken_link.npy")
    if not os.path.lexists(broken_link):
        os.symlink(missing, broken_link)
    # A file claiming 8 GB whose shape fits B: only the size check stands between it and an
    # 8 GB allocation (which the address-space limit would turn into a crash or exit 4).
    claim = put("claims_8gb.npy", npy(hdr("(1000000, 2000)"), zeros(16)))
    b_2000 = put("b_2000x1.npy", npy(hdr("(2000, 1)"), zeros(2000)))
    cases += [
        Usage("npy.claims_8gb_matching_b", ["--check", "--load-a", claim, "--load-b", b_2000],
              r"--load-a \S*claims_8gb\.npy: holds 64 bytes of data, but shape \(1000000, 2000\) of float32 needs 8000000000 \(the file is cut short\)"),
        # The same claim through a pipe, whose size is unknown: memory follows the data.
        Usage("npy.pipe_claims_8gb", ["--check", "--load-a", "/dev/stdin", "--load-b", b_2000],
              r"--load-a /dev/stdin: ends after 64 bytes of data, but shape \(1000000, 2000\) of float32 needs 8000000000",
              stdin=npy(hdr("(1000000, 2000)"), zeros(16))),
        Usage("npy.pipe_too_long", ["--check", "--load-a", "/dev/stdin", "--load-b", b],
              r"--load-a /dev/stdin: has more data than its shape \(2, 3\) of float32 needs",
              stdin=npy(hdr("(2, 3)"), zeros(7))),
        Usage("npy.b_inf", ["--check", "--load-a", a, "--load-b", b_inf], r"--load-b \S*b_inf\.npy: element \[2, 0\] .* is \+Inf"),
        Usage("npy.c_nan", ["--check", "--load-a", a, "--load-b", b, "--load-c", c_nan, "--beta", "1"],
              r"--load-c \S*c_nan\.npy: element \[1, 1\] .* is NaN"),
        Usage("npy.b_fortran_0", ["--check", "--load-a", a, "--load-b", b_bad], r"--load-b \S*: 'fortran_order' must be True or False, found '0'"),
        Usage("npy.k_mismatch", ["--check", "--load-a", a_wide, "--load-b", b],
              r"--load-a \S*a_2x4\.npy is 2 x 4 but --load-b \S*b\.npy is 3 x 2: A's columns \(K\) and B's rows must match"),
        Usage("npy.c_mismatch", ["--check", "--load-a", a, "--load-b", b, "--load-c", c_wrong, "--beta", "1"],
              r"--load-c \S*c_3x2\.npy is 3 x 2 but A \* B is 2 x 2"),
        Usage("npy.c_with_beta_0", ["--check", "--load-a", a, "--load-b", b, "--load-c", c], r"--load-c needs a non-zero --beta"),
        Usage("npy.loaded_c_over_2_31", ["--check", "--load-a", col, "--load-b", row],
              r"--load-a \S* and --load-b \S*: size 46341x46341x1 is too large: C is stored as 46341 x 46345"),
        Usage("npy.loaded_m_over_limit", ["--check", "--load-a", tall, "--load-b", one], r"M = 1000001 is more than 1000000"),
        Usage("npy.loaded_ld_pad_over_2_31", ["--check", "--load-a", col46000, "--load-b", row46000, "--ld-pad", "0,0,1024"],
              r"size 46000x46000x1 is too large: C is stored as 46000 x 47028 \(N \+ 4 guard columns \+ ld-pad 1024\)"),
        Usage("npy.directory", ["--check", "--load-a", directory, "--load-b", b], r"--load-a \S*a_directory\.npy: is a directory, not a \.npy file"),
        Usage("npy.missing", ["--check", "--load-a", a, "--load-b", missing],
              r"--load-b \S*does_not_exist\.npy: cannot open: No such file or directory"),
        Usage("npy.broken_symlink", ["--check", "--load-a", broken_link, "--load-b", b], r"cannot open: No such file or directory"),
        Usage("npy.dev_null", ["--check", "--load-a", "/dev/null", "--load-b", b], r"--load-a /dev/null: is empty"),
        Usage("npy.dev_zero", ["--check", "--load-a", "/dev/zero", "--load-b", b], r"--load-a /dev/zero: not a \.npy file"),
        Usage("npy.dev_urandom", ["--check", "--load-a", "/dev/urandom", "--load-b", b], r"--load-a /dev/urandom: (not a \.npy file|is a zip)"),
    ]
    # A FIFO with nobody at the other end: opening it waited for ever. Refused at once, as an
    # input in any role (standard input is the one pipe an input may be: ok.stdin_input).
    fifo = os.path.join(work, "nobody.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    fifo_says = r"\S*nobody\.fifo: is a pipe \(FIFO\), which can block; name a regular file"
    cases += [
        Usage("npy.fifo_load_a", ["--check", "--load-a", fifo, "--load-b", b], r"--load-a " + fifo_says),
        Usage("npy.fifo_load_b", ["--check", "--load-a", a, "--load-b", fifo], r"--load-b " + fifo_says),
        Usage("npy.fifo_load_c", ["--check", "--load-a", a, "--load-b", b, "--load-c", fifo, "--beta", "1"],
              r"--load-c " + fifo_says),
    ]
    if os.geteuid() != 0:  # root reads anything
        unreadable = put("unreadable.npy", npy(hdr(), zeros(6)))
        os.chmod(unreadable, 0)
        cases.append(Usage("npy.unreadable", ["--check", "--load-a", unreadable, "--load-b", b], r"cannot open: Permission denied"))

    # Command lines.
    def u(name, args, pattern, **kw):
        cases.append(Usage("cli." + name, args, pattern, **kw))

    u("size_word", ["--size", "x"], r"size must be an integer, got 'x'|a size is S or MxNxK")
    u("size_zero", ["--size", "0"], r"size must be at least 1, got 0")
    u("size_negative", ["--size", "-5"], r"size must be at least 1, got -5")
    u("size_over_64_bits", ["--size", "99999999999999999999"], r"size is too large")
    u("size_over_limit", ["--size", "1000001"], r"size must be at most 1000000")
    u("size_two_parts", ["--size", "1x2"], r"a size is S or MxNxK, got '1x2'")
    u("size_empty", ["--size", ""], r"empty size")
    u("sizes_empty_item", ["--sizes", "1,,2"], r"a size is S or MxNxK, got ''")
    u("sizes_trailing_comma", ["--sizes", "1,2,"], r"empty size in list")
    u("size_list", ["--size", "1,2"], r"--size takes one size")
    u("size_46340", ["--size", "46340"],
      r"size 46340x46340x46340 is too large: C is stored as 46340 x 46344 \(N \+ 4 guard columns\) = 2147580960 elements")
    u("size_a_over_2_31", ["--size", "46341x1x46341"], r"A is stored as 46341 x 46341")
    u("size_b_over_2_31", ["--size", "1x46341x46341"], r"B is stored as 46341 x 46341")
    u("size_ld_pad_over_2_31", ["--size", "46000", "--ld-pad", "0,0,1024"],
      r"C is stored as 46000 x 47028 \(N \+ 4 guard columns \+ ld-pad 1024\)")
    u("ld_pad_two", ["--ld-pad", "1,2"], r"--ld-pad takes three comma-separated counts")
    u("ld_pad_four", ["--ld-pad", "1,2,3,4"], r"--ld-pad takes three")
    u("ld_pad_large", ["--ld-pad", "1025,0,0"], r"ld-pad A must be at most 1024")
    u("ld_pad_negative", ["--ld-pad", "0,-1,0"], r"ld-pad B must be at least 0")
    u("ld_pad_word", ["--ld-pad", "a,b,c"], r"ld-pad A must be an integer")
    u("mnk_missing_k", ["-m", "5", "-n", "6"], r"give -m, -n and -k together")
    u("mnk_and_size", ["-m", "5", "-n", "6", "-k", "7", "--size", "4"], r"not both")
    for opt, v1, v2 in [("-m", "5", "6"), ("--alpha", "1", "2"), ("--beta", "1", "2"), ("--seed", "1", "2"),
                        ("--reps", "1", "2"), ("--warmup", "1", "1"), ("--device", "0", "0"), ("--csv", "a.csv", "b.csv"),
                        ("--save-c", "a.npy", "b.npy"), ("--variant", "x", "y"), ("--ld-pad", "0,0,0", "1,1,1"),
                        ("--load-a", a, a)]:
        u("twice" + opt.replace("-", "_"), [opt, v1, opt, v2], r"option %s given twice; give it once" % opt)
    for flag in ["--check", "--time-only", "--no-cublas-timing", "--record-failures", "--specials"]:
        u("twice" + flag.replace("-", "_"), [flag, flag], r"option %s given twice" % flag)
    u("size_and_sizes", ["--size", "4", "--sizes", "5"], r"give the sizes once")
    u("check_time_only", ["--check", "--time-only"], r"--check and --time-only exclude each other")
    u("check_csv", ["--check", "--csv", os.path.join(work, "never.csv")],
      r"--csv writes timed rows, and --check does not time: drop one of them \(or add --record-failures",
      after=lambda r: "the CSV file was created" if os.path.exists(os.path.join(work, "never.csv")) else None)
    u("check_reps", ["--check", "--reps", "3"], r"--reps belongs to timing")
    u("check_warmup", ["--warmup", "0", "--check"], r"--warmup belongs to timing")
    u("check_no_cublas_timing", ["--check", "--no-cublas-timing"], r"--no-cublas-timing belongs to timing")
    u("variant_without_csv", ["--variant", "X=1"], r"--variant labels CSV rows; it needs --csv")
    u("specials_time_only", ["--specials", "--time-only"], r"--specials is a check of IEEE special values, and --time-only does not check")
    u("specials_loaded", ["--specials", "--load-a", a, "--load-b", b], r"--specials plants into the harness's random inputs")
    u("specials_alpha_0", ["--check", "--specials", "--alpha", "0"], r"--specials needs a non-zero --alpha")
    u("specials_value", ["--specials", "yes"], r"unexpected argument 'yes'")
    u("exponents_one", ["--exponents", "5"], r"--exponents takes two comma-separated integers EA,EB")
    u("exponents_three", ["--exponents", "1,2,3"], r"--exponents takes two comma-separated integers EA,EB")
    u("exponents_word", ["--exponents", "a,1"], r"--exponents EA must be an integer, got 'a'")
    u("exponents_past_flt_max", ["--exponents", "0,128"], r"--exponents EB must be at most 127, got 128")
    u("exponents_below_140", ["--exponents", "-141,0"], r"--exponents EA must be at least -140, got -141")
    u("exponents_loaded", ["--exponents", "-118,118", "--load-a", a, "--load-b", b],
      r"--exponents scales the harness's random inputs, and loaded files are taken as they are")
    u("exponents_specials", ["--exponents", "-118,118", "--specials"], r"--exponents and --specials exclude each other")
    u("exponents_sum_overflows", ["--exponents", "100,20", "--size", "1x1x256"],
      r"--exponents 100,20: at K = 256 an FP32 sum of products up to 2\^120 may pass FLT_MAX")
    u("exponents_twice", ["--exponents", "1,1", "--exponents", "1,1"], r"option --exponents given twice")
    u("time_only_save_c", ["--time-only", "--save-c", "c.npy"], r"--save-c needs a verified result")
    u("csv_is_save_c", ["--csv", "same", "--save-c", "same"], r"--csv and --save-c name the same file 'same'")
    u("csv_empty", ["--csv", ""], r"--csv needs a file name, got an empty one")
    u("save_c_empty", ["--save-c", ""], r"--save-c needs a file name, got an empty one")
    u("load_empty", ["--load-a", "", "--load-b", ""], r"--load-a needs a file name, got an empty one")
    u("load_b_empty", ["--load-a", a, "--load-b", ""], r"--load-b needs a file name")
    u("csv_then_option", ["--csv", "--check"], r"option --csv needs a value, but is followed by the option --check",
      after=lambda r: "a file named --check was written" if os.path.exists("--check") else None)
    u("save_c_then_option", ["--save-c", "--check"], r"option --save-c needs a value, but is followed by the option --check")
    u("load_a_then_option", ["--load-a", "--load-b", b], r"option --load-a needs a value, but is followed by the option --load-b")
    u("alpha_then_option", ["--alpha", "--beta", "1"], r"option --alpha needs a value, but is followed by the option --beta")
    u("m_then_option", ["-m", "-n", "5", "-k", "5"], r"option -m needs a value, but is followed by the option -n")
    u("variant_then_option", ["--variant", "--csv", "f.csv"], r"option --variant needs a value, but is followed by the option --csv")
    u("csv_dash", ["--csv", "-"], r"--csv '-' looks like an option; name a file .*/dev/stdout")
    u("save_c_dash_name", ["--save-c", "-c.npy"], r"--save-c '-c\.npy' looks like an option; name a file \(\./-c\.npy")
    u("reps_huge", ["--reps", "2147483647"], r"reps must be at most 10000, got 2147483647")
    u("reps_10001", ["--reps", "10001"], r"reps must be at most 10000")
    u("warmup_huge", ["--warmup", "2147483647"], r"warmup must be at most 1000, got 2147483647")
    u("reps_zero", ["--reps", "0"], r"reps must be at least 1")
    u("warmup_negative", ["--warmup", "-1"], r"warmup must be at least 0")
    u("device_negative", ["--device", "-1"], r"device must be at least 0")
    u("device_huge", ["--device", "2147483648"], r"device is too large")
    u("alpha_underflow", ["--alpha", "1e-50"], r"alpha 1e-50 is below the smallest float \(1\.4e-45\) and would round to 0")
    u("alpha_overflow", ["--alpha", "1e39"], r"alpha 1e39 is beyond the largest finite float")
    u("alpha_nan", ["--alpha", "nan"], r"alpha must be a finite float, got 'nan'")
    u("alpha_inf", ["--alpha", "inf"], r"alpha must be a finite float, got 'inf'")
    u("beta_minus_inf", ["--beta", "-inf"], r"beta must be a finite float")
    u("beta_blank", ["--beta", " 1"], r"beta must be a number, got ' 1'")
    u("alpha_comma", ["--alpha", "1,5"], r"alpha must be a number, got '1,5'")
    u("alpha_newline", ["--alpha", "1\n2"], r"alpha must be a number, got '1\\n2'")
    u("seed_negative", ["--seed", "-1"], r"seed must be a non-negative integer")
    u("seed_2_64", ["--seed", "18446744073709551616"], r"seed is too large")
    u("alpha_no_value", ["--alpha"], r"option --alpha needs a value")
    u("csv_no_value", ["--csv"], r"option --csv needs a value")
    u("m_no_value", ["-m"], r"option -m needs a value")
    # Typed text is echoed cut short: 100,000 zeros and then 10001 is a valid integer past the cap.
    u("reps_100k_zeros", ["--reps", "0" * 100000 + "10001"], r"reps must be at most 10000, got 0{20,}\.\.\. \(see --help\)$")
    u("size_100k_zeros", ["--size", "0" * 100000 + "1000001"], r"size must be at most 1000000 .*got 0{20,}\.\.\. \(see --help\)$")
    u("alpha_100k_digits", ["--alpha", "1" * 100000], r"alpha .*beyond the largest finite float")
    u("unknown_100k", ["--" + "x" * 100000], r"unknown option '--x{20,}\.\.\.'")
    # A variant label is one CSV field: no control character may reach the file.
    v_csv = os.path.join(work, "variant.csv")
    for label, text in (("carriage_return", "a\rb"), ("tab", "a\tb"), ("escape", "\x1b[31mred"), ("delete", "a\x7f")):
        u("variant_" + label, ["--csv", v_csv, "--variant", text, "--size", "4"],
          r"--variant label must not contain commas, quotes or control characters, got '.*\\x[0-9a-f]{2}")
    u("unknown_option", ["--frobnicate"], r"unknown option '--frobnicate'")
    u("unknown_short", ["-x"], r"unknown option '-x'")
    u("unknown_newline", ["--fro\nb"], r"unknown option '--fro\\nb'")
    u("stray_argument", ["stray"], r"unexpected argument 'stray' \(options start with --\)")
    u("equals_form", ["--alpha=2"], r"write '--alpha 2', not '--alpha=2'")
    u("load_a_alone", ["--load-a", a], r"--load-a and --load-b go together")
    u("load_c_alone", ["--load-c", c, "--beta", "1"], r"--load-c needs --load-a and --load-b")
    u("load_and_size", ["--load-a", a, "--load-b", b, "--size", "4"], r"sizes come from the loaded files")
    u("tf32_override", ["--check", "--size", "4"], r"NVIDIA_TF32_OVERRIDE is set", env={"NVIDIA_TF32_OVERRIDE": "1"})

    # Output paths: refused before the run, and nothing left behind.
    foreign = put("foreign.csv", b"a,b,c\n1,2,3\n")
    header_only_cut = put("cut.csv", b"step,variant\n01_initial,,4")
    out_dir = os.path.join(work, "out_dir")
    os.makedirs(out_dir, exist_ok=True)
    no_dir = os.path.join(work, "no_such_dir", "x")

    def unchanged(path, data):
        return lambda r: None if open(path, "rb").read() == data else "%s was changed" % path

    def absent(path):
        return lambda r: "%s was left behind" % path if os.path.exists(path) else None

    time_args = ["--size", "4", "--reps", "1", "--warmup", "0"]
    u("csv_dev_full", ["--csv", "/dev/full"] + time_args, r"--csv /dev/full: write failed: No space left on device")
    u("csv_directory", ["--csv", out_dir] + time_args, r"--csv \S*out_dir: cannot open for writing: Is a directory")
    u("csv_no_directory", ["--csv", no_dir + ".csv"] + time_args, r"--csv \S*x\.csv: cannot open for writing: No such file or directory")
    u("csv_foreign_header", ["--csv", foreign] + time_args,
      r"--csv \S*foreign\.csv: its first line is not this harness's CSV header", after=unchanged(foreign, b"a,b,c\n1,2,3\n"))
    u("csv_cut_off", ["--csv", header_only_cut] + time_args, r"its first line is not this harness's CSV header|its last line is cut off")
    u("csv_is_input", ["--csv", a, "--load-a", a, "--load-b", b, "--reps", "1"], r"--csv \S*a\.npy is the same file as --load-a")
    # No output may be an input or the other output, however the path is spelled, whether or
    # not the file exists yet.
    a_bytes, b_bytes, c_bytes = (open(p, "rb").read() for p in (a, b, c))
    a_link = os.path.join(work, "a_link.npy")
    if not os.path.lexists(a_link):
        os.symlink(a, a_link)
    out_link = os.path.join(work, "out_dir_link")
    if not os.path.lexists(out_link):
        os.symlink(out_dir, out_link)
    load_ab = ["--check", "--load-a", a, "--load-b", b]
    u("save_c_is_load_a", load_ab + ["--save-c", a], r"--save-c \S*a\.npy is the same file as --load-a \S*a\.npy",
      after=unchanged(a, a_bytes))
    u("save_c_is_load_b_dot", load_ab + ["--save-c", os.path.join(work, ".", "b.npy")],
      r"--save-c \S*/\./b\.npy is the same file as --load-b", after=unchanged(b, b_bytes))
    u("save_c_is_load_a_dotdot", load_ab + ["--save-c", os.path.join(out_dir, "..", "a.npy")],
      r"--save-c \S*out_dir/\.\./a\.npy is the same file as --load-a", after=unchanged(a, a_bytes))
    u("save_c_is_load_a_symlink", load_ab + ["--save-c", a_link], r"--save-c \S*a_link\.npy is the same file as --load-a",
      after=unchanged(a, a_bytes))
    u("save_c_is_load_c", load_ab + ["--load-c", c, "--beta", "1", "--save-c", c],
      r"--save-c \S*c\.npy is the same file as --load-c", after=unchanged(c, c_bytes))
    u("csv_is_load_b_symlink_dir", ["--csv", os.path.join(out_link, "..", "b.npy"), "--load-a", a, "--load-b", b,
                                    "--reps", "1"], r"--csv \S*out_dir_link/\.\./b\.npy is the same file as --load-b",
      after=unchanged(b, b_bytes))
    for name, csv_path, npy_path in (
            ("dot", os.path.join(out_dir, "x.csv"), os.path.join(out_dir, ".", "x.csv")),
            ("dotdot", os.path.join(out_dir, "y.csv"), os.path.join(out_dir, "..", "out_dir", "y.csv")),
            ("symlinked_dir", os.path.join(out_dir, "z.csv"), os.path.join(out_link, "z.csv"))):
        u("csv_is_save_c_new_" + name, ["--csv", csv_path, "--save-c", npy_path] + time_args,
          r"--csv \S+ and --save-c \S+ are the same file; name two files", after=absent(csv_path))
    # FIFOs as outputs: refused at once, whether or not anybody reads them.
    u("csv_fifo", ["--csv", fifo] + time_args, r"--csv \S*nobody\.fifo: is a pipe \(FIFO\), which can block")
    u("save_c_fifo", ["--check", "--size", "4", "--save-c", fifo], r"--save-c \S*nobody\.fifo: is a pipe \(FIFO\)")
    u("save_c_dev_full", ["--check", "--size", "4", "--save-c", "/dev/full"], r"--save-c /dev/full: write failed: No space left on device")
    u("save_c_directory", ["--check", "--size", "4", "--save-c", out_dir], r"--save-c \S*out_dir: cannot open for writing: Is a directory")
    u("save_c_no_directory", ["--check", "--size", "4", "--save-c", no_dir + ".npy"], r"No such file or directory")
    fresh_csv = os.path.join(work, "fresh_from_bad_run.csv")
    fresh_npy = os.path.join(work, "fresh_from_bad_run.npy")
    u("bad_input_leaves_no_output", ["--load-a", put("bad_for_outputs.npy", b""), "--load-b", b, "--reps", "1",
                                     "--csv", fresh_csv], r"is empty", after=absent(fresh_csv))
    u("bad_input_leaves_no_npy", ["--check", "--load-a", put("bad_for_outputs2.npy", b"x"), "--load-b", b,
                                  "--save-c", fresh_npy], r"not a \.npy file", after=absent(fresh_npy))
    if os.geteuid() != 0:
        readonly = put("readonly.csv", b"")
        os.chmod(readonly, 0o444)
        u("csv_read_only", ["--csv", readonly] + time_args, r"cannot open for writing: Permission denied")
        u("save_c_read_only", ["--check", "--size", "4", "--save-c", readonly], r"cannot open for writing: Permission denied")
    return cases + accepted_cases(work, put, a, b, c, time_args)


def accepted_cases(work, put, a, b, c, time_args):
    """Valid inputs: not refused. Without a GPU they exit 3; with one they run (small sizes)."""
    def exists_after(path, gpu_check):
        def check(r, gpu):
            if not gpu:
                return "%s was left behind by a run that never started" % path if os.path.exists(path) else None
            return gpu_check(path)
        return check

    def npy_ok(path):
        data = open(path, "rb").read() if os.path.exists(path) else b""
        return None if data.startswith(b"\x93NUMPY") and len(data) == 128 + 4 * 16 else "%s is not a 4 x 4 .npy" % path

    def csv_rows(n):
        def check(path):
            lines = open(path).read().splitlines() if os.path.exists(path) else []
            return None if len(lines) == 1 + n and lines[0].startswith("step,") else "%s: %d lines" % (path, len(lines))
        return check

    def stdout_csv(r, gpu):
        lines = r.stdout.splitlines()
        header = [l for l in lines if l.startswith("step,variant,")]
        rows = [l for l in lines if l.count(",") == header[0].count(",") and l not in header] if header else []
        want_rows = 1 if gpu else 0
        if len(header) != 1 or len(rows) != want_rows:
            return "stdout has %d CSV headers and %d rows, wanted 1 and %d" % (len(header), len(rows), want_rows)
        return None

    old_npy = put("old.npy", b"old contents")
    v2 = put("a_v2.npy", npy(hdr("(2, 3)"), f32(*A_VALUES), version=(2, 0)))
    v3 = put("b_v3.npy", npy(hdr("(3, 2)"), f32(*A_VALUES), version=(3, 0)))
    spaced = put("spaced_9k.npy", npy(hdr().replace(", 'shape'", "," + " " * 9000 + "'shape'"), f32(*A_VALUES), version=(2, 0)))
    odd = put("odd_spelling.npy", npy('{"shape": (2,3),\n "fortran_order":False,"descr":"<f4"}', f32(*A_VALUES), pad=False))
    subnormal = put("subnormal.npy", npy(hdr(), f32(1e-40, -1e-45, 0.0, -0.0, 3.4e38, 1)))
    # Spellings np.load reads as a 2-D float32 array (checked with numpy 1.24.2 and 2.1.3).
    spellings = []
    for label, descr in (("f4", "f4"), ("eq_f4", "=f4"), ("bar_f4", "|f4"), ("f", "f"), ("bar_f", "|f"),
                         ("float32", "float32"), ("single", "single")):
        path = put("dtype_%s.npy" % label, npy(hdr(descr=repr(descr)), f32(*A_VALUES)))
        spellings.append(Accepted("ok.dtype_" + label, ["--check", "--load-a", path, "--load-b", b]))
    for label, shape in (("blanks", "( 2 , 3 )"), ("tabs", "(\t2,\t3\t)"), ("trailing_comma", "(2, 3,)"),
                         ("blank_trailing_comma", "(2,3 , )"), ("line_break", "(2,\r\n3)"), ("form_feed", "(2,\f3)"),
                         ("signed", "(+ 2, +3)")):
        path = put("shape_%s.npy" % label, npy(hdr(shape=shape), f32(*A_VALUES)))
        spellings.append(Accepted("ok.shape_" + label, ["--check", "--load-a", path, "--load-b", b]))
    tabbed = put("dict_tabs.npy", npy("{'descr':\t'<f4',\t'fortran_order':\tFalse,\t'shape':\t(2,\t3)}", f32(*A_VALUES)))
    spellings.append(Accepted("ok.dict_tabs", ["--check", "--load-a", tabbed, "--load-b", b]))
    new_csv = os.path.join(work, "new.csv")
    new_npy = os.path.join(work, "new.npy")
    for p in (new_csv, new_npy):
        if os.path.exists(p):
            os.remove(p)

    return [
        Accepted("ok.help", ["--help"]),
        Accepted("ok.subnormal_alpha", ["--check", "--size", "4", "--alpha", "1e-40"]),
        Accepted("ok.smallest_subnormal", ["--check", "--size", "4", "--alpha", "0x1p-149", "--beta", "-0"]),
        Accepted("ok.load_v1", ["--check", "--load-a", a, "--load-b", b]),
        Accepted("ok.load_v2_v3_with_c", ["--check", "--load-a", v2, "--load-b", v3, "--load-c", c, "--beta", "0.5"]),
        Accepted("ok.header_9000_blanks", ["--check", "--load-a", spaced, "--load-b", b]),
        Accepted("ok.double_quotes_newline_any_order", ["--check", "--load-a", odd, "--load-b", b]),
        Accepted("ok.subnormal_values", ["--check", "--load-a", subnormal, "--load-b", b]),
        Accepted("ok.stdin_input", ["--check", "--load-a", "/dev/stdin", "--load-b", b], stdin=open(a, "rb").read()),
        Accepted("ok.csv_dev_stdout", ["--csv", "/dev/stdout"] + time_args, after=stdout_csv),
        Accepted("ok.csv_dev_null", ["--csv", "/dev/null", "--variant", ""] + time_args),
        Accepted("ok.csv_new_file", ["--csv", new_csv] + time_args, after=exists_after(new_csv, csv_rows(1))),
        Accepted("ok.save_c_new_file", ["--check", "--size", "4", "--save-c", new_npy], after=exists_after(new_npy, npy_ok)),
        Accepted("ok.save_c_existing", ["--check", "--size", "4", "--save-c", old_npy],
                 after=lambda r, gpu: npy_ok(old_npy) if gpu else
                 (None if open(old_npy, "rb").read() == b"old contents" else "old.npy changed by a run that never started")),
        Accepted("ok.save_c_dev_null", ["--check", "--size", "4", "--save-c", "/dev/null"]),
        Accepted("ok.reps_warmup_at_cap", ["--time-only", "--size", "1", "--reps", "10000", "--warmup", "1000", "--no-cublas-timing"]),
        Accepted("ok.ld_pad", ["--check", "-m", "3", "-n", "5", "-k", "7", "--ld-pad", "1,2,3"]),
        Accepted("ok.specials", ["--check", "--size", "17x31x13", "--specials", "--beta", "0.5"]),
        Accepted("ok.exponents", ["--check", "--size", "17x31x13", "--exponents", "-40,40", "--beta", "0.5"]),
    ] + spellings
