"""Results over time: which commit and machine made a report, saved runs, and their history.

Plain functions over reports and files, no pytest: the plugin saves and compares runs through
them, and `retrieval-bench history` lists them."""
