import sys

from recall_agent.cli import main

sys.exit(main())
