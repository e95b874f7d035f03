"""The run itself: the per-process bench session, running one item and what a finished run writes."""
