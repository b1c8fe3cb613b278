"""Plot and table generator for the sgemm-steps results (see sgemm_plots.py)."""
