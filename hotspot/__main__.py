import sys

from hotspot.cli import main

sys.exit(main())
