"""Learning from outcomes: fingerprints, the durable pattern store, the outcome evaluator.

Nothing here stores message text: a turn is kept as a fixed-length vector
(:mod:`.fingerprint`), a hash of its message, its model, cost and the
evidence about how it went (:mod:`.evaluator`).
"""

import os as _os

# A k-NN query multiplies a few thousand rows by one vector: BLAS threads only add
# hand-over costs (tens of ms on a busy machine). Set before numpy is first imported.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_name, "1")
