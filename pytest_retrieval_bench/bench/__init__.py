"""The run itself: the per-process bench session, running one item, its deadline, and what a finished run writes."""
