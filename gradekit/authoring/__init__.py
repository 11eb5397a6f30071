"""Authoring: the source notebooks, their answer cells from the reference, and the release."""
