"""Files as bytes, below every other layer: JSONL lines of plain, zstd and release-archive files, a file's SHA-256, removing a tree the run made."""
