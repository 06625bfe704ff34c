import sys

from recall.cli import main

sys.exit(main())
