"""What people read: the proof matrix, the per-student table, diagnoses, the class report."""
