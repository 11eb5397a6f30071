"""The types, settings and course description every stage shares; imports nothing above it."""
