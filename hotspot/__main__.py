import sys

from hotspot.launch import main

sys.exit(main())
