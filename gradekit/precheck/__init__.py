"""The sealed pre-check: a hub service that grades a student's saved notebook on the boxed engine before the deadline."""
