"""A worker's solve record (``fastscore.run.executors.solving``): what another process
of the machine reads of it."""
from __future__ import annotations

import uuid

from fastscore.run.executors.solving import SolveRecord, overrunning, remove_records


def test_a_record_says_which_rows_are_solving_since_when_and_a_torn_one_is_skipped():
    prefix = f"fastscore-solving-test-{uuid.uuid4().hex[:8]}"
    record = SolveRecord(prefix)
    try:
        assert overrunning(prefix, [7], 0.0) == {}  # nothing written yet
        record.write(7, [3, 5, 9])
        assert overrunning(prefix, [7, 8], 0.0) == {7: [3, 5, 9]}
        assert overrunning(prefix, [7], 3600.0) == {}  # not running that long
        assert overrunning(prefix, [8], 0.0) == {}  # not a batch in flight
        record.write(7, [1])  # a shorter record over a longer one
        assert overrunning(prefix, [7], 0.0) == {7: [1]}
        record.write(7, None)  # all solved
        assert overrunning(prefix, [7], 0.0) == {}
        record.write(8, [2])
        with open(record.path, "r+b") as f:  # the trailer of a write still under way
            f.seek(32 + 8)  # after the header (seq, token, since, n) and the one index
            f.write(b"\0" * 8)
        assert overrunning(prefix, [8], 0.0) == {}
    finally:
        remove_records(prefix)
    assert not record.path.exists()
