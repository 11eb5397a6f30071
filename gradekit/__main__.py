import sys

from gradekit.cli import main

sys.exit(main())
