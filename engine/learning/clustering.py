"""Training the pattern index's partition: principal axes, then spherical k-means.

Both run on a sample of the stored fingerprints (:meth:`.index.VectorIndex._train`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

KMEANS_ITERATIONS = 10

Matrix = npt.NDArray[np.float32]


def kmeans(sample: npt.NDArray[np.float32], cells: int,
           rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """Spherical k-means: unit centroids that maximise the inner product with their members.

    Run on sketches: the cells are only used to choose which sketches a query scores.
    """
    centroids = sample[rng.choice(len(sample), cells, replace=False)]
    for _ in range(KMEANS_ITERATIONS):
        labels = np.argmax(sample @ centroids.T, axis=1)
        sums = _sums_by_label(sample, labels, cells)
        empty = ~sums.any(axis=1)
        sums[empty] = centroids[empty]
        centroids = sums / np.linalg.norm(sums, axis=1, keepdims=True)
    return centroids.astype(np.float32)


def _sums_by_label(sample: Matrix, labels: npt.NDArray[np.intp], cells: int) -> Matrix:
    """The sum of the rows of ``sample`` with each label (``np.add.at`` is ten times slower)."""
    order = np.argsort(labels, kind="stable")
    starts = np.searchsorted(labels[order], np.arange(cells))
    present = starts < len(labels)
    present[present] = labels[order][starts[present]] == np.arange(cells)[present]
    sums = np.zeros((cells, sample.shape[1]), np.float32)
    sums[present] = np.add.reduceat(sample[order], starts[present], axis=0)
    return sums


def principal_axes(sample: Matrix, width: int) -> Matrix:
    """The ``width`` directions that keep most of the sample's inner products.

    Not centred: a query is scored by inner products, not by distances to the mean.
    """
    # The product in float32 (BLAS at twice the speed of float64); the eigenvectors in float64.
    values, vectors = np.linalg.eigh((sample.T @ sample).astype(np.float64))
    order = np.argsort(values)[::-1][:width]
    axes: Matrix = np.ascontiguousarray(vectors[:, order], dtype=np.float32)
    return axes
