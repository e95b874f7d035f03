"""Snapshots: the file trees queries run against, from release chunk files, directories or git."""
