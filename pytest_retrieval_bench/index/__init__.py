"""Indexes of a snapshot's texts: the frozen tokenizers, numpy postings and their one-read build, the on-disk cache, the RepoMap graph."""
