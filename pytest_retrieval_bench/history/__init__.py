"""Results over time: which commit and machine made a report, saved runs, and their history.

Plain functions over reports and files, no pytest: the plugin saves and compares runs through
them, and `retrieval-bench history` lists them."""

DEFAULT_STORAGE = ".retrieval-bench"
"""Where runs are saved, under the rootdir, unless `--bench-storage` says otherwise (here, not in
`store`, so the plugin's options name it without importing the report code)."""
