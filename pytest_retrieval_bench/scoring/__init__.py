"""Scores of one ranking and of many: ranking metrics, budgeted context yield, intervals and paired statistics (no pytest here)."""
