"""A corpus folder written beside its target and swapped in at the end, so
that a failed or interrupted writer never leaves a half corpus behind: the
one staging rule of every corpus writer under cases/."""
from __future__ import annotations

import json
import os
import shutil
import tempfile


class StagedCorpus:
    """`with StagedCorpus(out, ".name-") as staging:` gives a temporary folder
    beside `out` (staging.path); staging.publish(manifest) writes its
    corpus.json and puts it in place of `out`. Leaving the block without
    publishing (an error, an early return) removes it."""

    def __init__(self, out: str, prefix: str):
        self.out = os.path.abspath(out)
        self.prefix = prefix
        self.path = ""
        self.published = False

    def __enter__(self) -> "StagedCorpus":
        parent = os.path.dirname(self.out)
        os.makedirs(parent, exist_ok=True)
        self.path = tempfile.mkdtemp(prefix=self.prefix, dir=parent)
        return self

    def publish(self, manifest: dict) -> None:
        with open(os.path.join(self.path, "corpus.json"), "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
        if os.path.exists(self.out):
            shutil.rmtree(self.out)
        os.rename(self.path, self.out)
        self.published = True

    def __exit__(self, *exc) -> bool:
        if not self.published:
            shutil.rmtree(self.path, ignore_errors=True)
        return False
