"""A driver for the tests that signal a pooled analysis (tests/test_robust_hostile.py,
tests/test_exit_matrix.py): `python DRIVER ARGS` runs `hotspot ARGS` with a worker pool for any
capture size, and once the wave pass has handed every chunk to the pool, its process waits there
(the workers keep reading) until a signal ends it.

Why: the signal raced the end of the analysis. On a quiet machine the pass could finish before the
signal arrived, and hotspot rightly exited 0 (the "SIGTERM exit 0" flake). Held there, the signal
always lands while the pool runs, inside the wave pass's own handling (hotspot/att/engine/wavepass.py
_run_pool: `meanwhile` runs between the start of the pool and the merge of its partials).

With READY_ENV set, the driver creates that file when the wait begins: the pool is up and has its work.
"""

from __future__ import annotations

READY_ENV = "POOL_GATE_READY"

DRIVER = """\
import inspect, os, sys, time

if __name__ == '__main__':
    import hotspot.att.engine.wavepass as W
    import hotspot.att.engine.worker_count as J

    J.EXPLICIT_POOL_MIN_BYTES = 0  # a pool for a test-sized capture
    run_pool = W._run_pool

    def gated(*args, **kwargs):
        bound = inspect.signature(run_pool).bind(*args, **kwargs)
        given = bound.arguments.get('meanwhile')

        def wait_for_the_signal():
            if given is not None:
                given()
            ready = os.environ.get('%s')
            if ready:
                open(ready + '.tmp', 'w').close()
                os.replace(ready + '.tmp', ready)
            while True:
                time.sleep(0.05)

        bound.arguments['meanwhile'] = wait_for_the_signal
        return run_pool(*bound.args, **bound.kwargs)

    W._run_pool = gated
    from hotspot.console import main
    sys.argv = ['hotspot', *sys.argv[1:]]
    sys.exit(main())
""" % READY_ENV
