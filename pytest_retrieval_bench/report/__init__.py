"""The written report: building it from records, reading it back, merging, gating, and its HTML, Markdown and leaderboard views."""
