"""The proof: a synthetic cohort (reference, blank stubs, negative controls) and the rules its grades must obey."""
