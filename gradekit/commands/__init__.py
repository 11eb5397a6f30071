"""The commands a course lead, a TA or a benchmark runs: the top layer, over every stage."""
