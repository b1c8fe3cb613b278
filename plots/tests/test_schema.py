"""The results CSV: both accepted headers, field checks, and errors as `path:line: problem`."""

import shutil
import subprocess
import sys

from plots import schema
from plots.tests.helpers import (FIXTURES, H100, REPO_ROOT, TempDirTestCase, make_repo, run_tool,
                                 snapshot)


class MalformedCsvTest(TempDirTestCase):
    maxDiff = None
    """Bad input is reported as `path:line: problem` with exit code 2 and no traceback."""

    def check_error(self, fixture: str, line: int, message: str):
        repo = make_repo(self.tmp)
        bad = repo / "results" / H100 / fixture
        shutil.copy(FIXTURES / "malformed" / fixture, bad)
        before = snapshot(repo)
        code, _, err = run_tool("--repo", repo)
        self.assertEqual(code, 2)
        self.assertEqual(err.strip(), f"{schema.display_path(bad)}:{line}: {message}")
        self.assertEqual(snapshot(repo), before, "nothing may be written after an error")

    def test_bad_header(self):
        self.check_error("bad_header.csv", 1,
                         "bad header: missing column(s) ms_min; unexpected column(s) ms_minimum")

    def test_non_numeric_field(self):
        self.check_error("non_numeric.csv", 3,
                         "column 'ms_median': expected a number, got 'fast'")

    def test_short_row(self):
        self.check_error("short_row.csv", 2, "expected 27 fields, got 20")

    def write_csv(self, *lines: str):
        path = self.tmp / "one.csv"
        path.write_text("\n".join(lines) + "\n")
        return path

    def new_row(self) -> tuple[str, list[str]]:
        lines = (FIXTURES / "results" / H100 / "02_coalesce.csv").read_text().splitlines()
        return lines[0], lines[1].split(",")

    def test_rows_from_before_the_tuning_columns(self):
        header, fields = self.new_row()
        row = schema.read_results_csv(self.write_csv(header, ",".join(fields)))[0]
        self.assertEqual((row.tuning, row.device_sm_count, row.is_emulation), ("", row.sm_count, False))
        cols = header.split(",")
        at = cols.index("timestamp")
        new_header = ",".join(cols[:at] + ["tuning", "device_sm_count"] + cols[at:])
        emulated = list(fields)
        emulated[cols.index("sm_count")] = "88"
        emulated = emulated[:at] + ["sm_86", "132"] + emulated[at:]
        row = schema.read_results_csv(self.write_csv(new_header, ",".join(emulated)))[0]
        self.assertEqual((row.tuning, row.sm_count, row.device_sm_count, row.is_emulation), ("sm_86", 88, 132, True))

    def test_rows_from_before_the_inputs_column_hold_the_default_inputs(self):
        header, fields = self.new_row()  # a file without the column
        row = schema.read_results_csv(self.write_csv(header, ",".join(fields)))[0]
        self.assertEqual(row.inputs, "")
        self.assertTrue(row.has_default_inputs)
        cols = header.split(",")
        at = cols.index("timestamp")
        full = cols[:at] + ["tuning", "device_sm_count"] + cols[at:]
        values = fields[:at] + ["", fields[cols.index("sm_count")]] + fields[at:]
        beta = full.index("beta") + 1
        self.assertEqual(tuple(full[:beta] + ["inputs"] + full[beta:]), schema.HEADER)
        for inputs, text in (("", ""), ("exponents=-118,118", '"exponents=-118,118"'),
                             ("specials;ld-pad=3,5,1", '"specials;ld-pad=3,5,1"')):
            with self.subTest(inputs=inputs):
                line = ",".join(values[:beta] + [text] + values[beta:])
                row = schema.read_results_csv(self.write_csv(",".join(schema.HEADER), line))[0]
                self.assertEqual(row.inputs, inputs)
                self.assertEqual(row.has_default_inputs, not inputs)
                self.assertEqual((row.m, row.beta, row.reps), (1024, 0.0, 10))

    def test_field_checks(self):
        header, fields = self.new_row()
        cases = {
            "verified": ("yes", "column 'verified': expected 0 or 1, got 'yes'"),
            "m": ("0", "column 'm': expected a positive integer, got '0'"),
            "variant": ("TILE", "column 'variant': expected NAME=VALUE;NAME=VALUE..., "
                                "got 'TILE'"),
            "timestamp": ("yesterday", "column 'timestamp': expected an ISO 8601 timestamp, "
                                       "got 'yesterday'"),
            "gflops": ("nan", "column 'gflops': expected a finite number, got 'nan'"),
            "err_rms_u": ("-1", "column 'err_rms_u': expected an error >= 0 or an empty "
                                "field, got '-1'"),
            "err_rms_vs_cublas": ("x", "column 'err_rms_vs_cublas': expected a number, "
                                       "got 'x'"),
        }
        for column, (value, message) in cases.items():
            with self.subTest(column=column):
                bad = list(fields)
                bad[header.split(",").index(column)] = value
                path = self.write_csv(header, ",".join(fields), ",".join(bad))
                with self.assertRaises(schema.InputError) as caught:
                    schema.read_results_csv(path)
                self.assertEqual(str(caught.exception),
                                 f"{schema.display_path(path)}:3: {message}")

    def test_old_and_new_headers(self):
        """A file from before the accuracy columns reads as "not measured"; a new file's empty
        accuracy fields too; NaN in an accuracy field is data."""
        old = schema.read_results_csv(FIXTURES / "results" / H100 / "01_initial.csv")
        self.assertTrue(old and all(not row.has_accuracy for row in old))
        self.assertTrue(all(row.err_rms_vs_cublas is None for row in old))
        new = schema.read_results_csv(FIXTURES / "results" / H100 / "02_coalesce.csv")
        self.assertEqual([row.err_rms_u for row in new], [0.52, 0.61, None, 1.3, 0.66, 0.3])
        self.assertEqual(new[0].err_rms_vs_cublas, 1.08)
        header, fields = self.new_row()
        fields[header.split(",").index("err_max_u")] = "nan"
        row = schema.read_results_csv(self.write_csv(header, ",".join(fields)))[0]
        self.assertNotEqual(row.err_max_u, row.err_max_u)

    def test_mixed_header_is_an_error(self):
        header, fields = self.new_row()
        columns = header.split(",")
        columns.remove("err_rms_vs_cublas")
        path = self.write_csv(",".join(columns))
        with self.assertRaisesRegex(schema.InputError, r":1: bad header: missing column\(s\) "
                                                       r"err_rms_vs_cublas$"):
            schema.read_results_csv(path)

    def test_empty_file(self):
        path = self.write_csv()
        path.write_text("")
        with self.assertRaisesRegex(schema.InputError, r":1: empty file"):
            schema.read_results_csv(path)

    def test_command_line_entry_points(self):
        """Both ways of running the tool exit 2 with the message alone, no traceback."""
        repo = make_repo(self.tmp)
        shutil.copy(FIXTURES / "malformed" / "short_row.csv", repo / "results" / H100)
        for command in (["-m", "plots"], ["-m", "plots.cli"]):
            with self.subTest(command=command):
                result = subprocess.run([sys.executable, *command, "--repo", str(repo)],
                                        cwd=REPO_ROOT, capture_output=True, text=True)
                self.assertEqual(result.returncode, 2)
                self.assertNotIn("Traceback", result.stderr)
                self.assertRegex(result.stderr, r"short_row\.csv:2: expected 27 fields, got 20")
