import sys

from gradekit.commands.cli import main

# Worker processes are spawned and re-import this module: only the parent runs the command.
if __name__ == "__main__":
    sys.exit(main())
