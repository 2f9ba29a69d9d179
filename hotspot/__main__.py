import sys

from hotspot.console import main

sys.exit(main())
