"""`parity bundle` and `parity verify`: run folders packed as a conformance
submission with their provenance, and the check a submission checker runs on
such a bundle (README.md, "Submissions"); the work is in common.py, bundle.py and verify.py.

  submission.py bundle RUN_DIR... --out FILE [--note TEXT]
  submission.py verify FILE [--corpus DIR]... [--policy FILE]

A bundle is a gzip-compressed tar: each run folder under runs/<name>/ (its
results, settings, summary, reports, small logs, and copies of its
expectations files and case list) and manifest.json. Its bytes depend only
on its inputs: entries sorted, no folder entries, owner 0, mode 0644, and
every time the bundle's "created", which is SOURCE_DATE_EPOCH when set, else
the latest "finished" of the runs' summaries (else the newest file's mtime).

Hashes, all SHA-256 in lowercase hex:
  file      the file's bytes.
  case      of the text made of one line "<file hash>  <path>\\n" per file in
            the case folder and below it (path relative to the case folder,
            '/'-separated), in the byte order of the paths; a symbolic link
            to a file counts as that file, one to a folder is an error. For
            names without a newline or backslash that is
            `find . -type f -printf '%P\\0' | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum`
            run in the case folder.
  corpus    of the text made of one line "<case hash>  <case path>\\n" per
            case folder that the run planned below that corpus folder of
            run.json's settings.cases (path relative to the corpus folder,
            "." for a corpus folder that is itself a case), in the byte
            order of the paths. Files of the corpus outside planned case
            folders (corpus.json) are not part of it.
  manifest  "manifest_sha256": of the manifest's canonical JSON without that
            field: json.dumps(m, sort_keys=True, separators=(",", ":"),
            ensure_ascii=False) encoded as UTF-8.

Exit status: bundle 0 written, 2 bad arguments or a folder that is not a run
(or whose corpus, policy or expectations cannot be read); verify 0 accepted,
1 refused (each reason printed), 2 bad arguments or an unreadable bundle.
"""
from __future__ import annotations
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (  # noqa: E402
    USAGE,
    UsageError,
    Unreadable,
)
from bundle import (  # noqa: E402
    bundle,
)
from verify import (  # noqa: E402
    verify,
)


def main(argv: list) -> int:
    if not argv or argv[0] not in USAGE:
        print("usage: submission.py bundle|verify ARGS... (`parity bundle`, `parity verify`)", file=sys.stderr)
        return 2
    command, args = argv[0], argv[1:]
    try:
        return bundle(args) if command == "bundle" else verify(args)
    except UsageError as error:
        print("parity %s: %s\nusage: %s" % (command, error, USAGE[command]), file=sys.stderr)
        return 2
    except Unreadable as error:
        print("parity %s: %s" % (command, error), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
