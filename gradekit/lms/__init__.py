"""Grades into the LMS: the roster that maps nbgrader students to LMS accounts, and the import files of Canvas and Moodle."""
