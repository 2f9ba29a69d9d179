"""Counter analysis (`hotspot pmc`): L2 hit rate, L2→fabric bytes and achieved bandwidth.

Flow: readers (long/wide CSV, rocpd) -> CounterFile model -> join per dispatch -> metrics ->
verdicts -> one Result (api.analyze_pmc) -> renderers (render.py).
"""

from hotspot._callable import make_callable

make_callable(__name__)  # `hotspot.pmc(...)` is the Python API's (hotspot/api.py)
