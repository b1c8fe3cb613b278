"""The plot tool of sgemm-steps: results/ -> docs/plots/ and the generated tables in the
markdown files. Run it as `python -m plots` (plots/cli.py); one job per module."""
