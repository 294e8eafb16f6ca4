"""Per-video sidecars as Parquet (issue 36 item 8): the JSON sidecar and its Parquet read to the
same document, the Parquet converts back to the JSON's exact bytes (what signed records pin),
and a hostile Parquet is refused with a code before its columns are read."""
import copy
import hashlib
import io
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from phybench.leaderboard.common import samples_parquet as sp
from phybench.leaderboard.common.samples_parquet import (
    SidecarError,
    canonical_json,
    decode_number,
    encode_number,
    from_parquet,
    read_any_sidecar,
    to_parquet,
)
from phybench.leaderboard.verify.signing import load_keyring
from phybench.leaderboard.verify.records import read_record
from phybench.scoring.run.layout import record_path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "leaderboard" / "results").rglob("*.samples.json"))
ONE = ROOT / "leaderboard" / "results" / "fundamental" / "lite" / "collision-ood-eval-physics-oracle.samples.json"


def test_there_are_shipped_sidecars_of_both_shapes():
    assert len(SHIPPED) >= 30
    rows = [s for p in SHIPPED for s in json.loads(p.read_bytes())["samples"]]
    assert any("law" in s for s in rows)
    assert any(s.get("law", {}).get("wrong") for s in rows) and any(s["generated_velocity"] is None for s in rows)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(ROOT / "leaderboard" / "results").as_posix())
def test_every_shipped_sidecar_round_trips_exactly(path, tmp_path):
    raw = path.read_bytes()
    as_json = read_any_sidecar(path)
    parquet = tmp_path / sp.parquet_path(path).name
    parquet.write_bytes(to_parquet(as_json))
    as_parquet = read_any_sidecar(parquet)
    assert as_parquet == as_json  # the same in-memory values
    assert canonical_json(as_parquet) == raw  # and the same bytes, so the signed record still verifies
    results = path.with_name(path.name.replace(".samples.json", ".json"))
    if record_path(results).exists():  # the signed record pins the bytes the Parquet gives back
        record = read_record(results, keyring=load_keyring())
        assert hashlib.sha256(canonical_json(as_parquet)).hexdigest() == record.samples_sha256
    assert parquet.stat().st_size < len(raw) / 4


@pytest.mark.parametrize("x", [0.0, -0.0, 5e-324, 1.7976931348623157e308, -1.25e-17, 123456789.0, 3.89534884,
                               1e-06, -2.5, 1e22])
def test_numbers_keep_their_exact_repr(x):
    assert repr(decode_number(*encode_number(x), "t")) == repr(x)


def _doc() -> dict:
    return json.loads(ONE.read_bytes())


@pytest.mark.parametrize("break_it, code", [
    (lambda d: d["samples"][0].update(true_velocity=3), "samples_not_canonical"),  # an int would print as 3
    (lambda d: d["samples"][0].update(true_velocity=float("nan")), "samples_not_canonical"),
    (lambda d: d["samples"][0].update(extra=1), "samples_shape"),
    (lambda d: d["samples"][0].pop("generated_velocity"), "samples_shape"),
    (lambda d: d["samples"][0]["law"].update(fit=[1.0]), "samples_shape"),
    (lambda d: d["samples"][0]["law"].update(wrong=[1]), "samples_shape"),
    (lambda d: d.update(note="x"), "samples_shape"),
])
def test_a_sidecar_outside_the_schema_is_refused_not_lost(break_it, code):
    doc = _doc()
    break_it(doc)
    with pytest.raises(SidecarError) as info:
        to_parquet(doc)
    assert info.value.code == code


def _rewrite(data: bytes, change) -> bytes:
    table = pq.read_table(pa.BufferReader(data))
    table = change(table)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def test_a_hostile_parquet_is_refused_with_a_code(tmp_path, monkeypatch):
    good = to_parquet(_doc())
    cases = {
        "samples_parquet_schema": _rewrite(good, lambda t: t.append_column("x", pa.array([1] * len(t)))),
        "samples_parquet_header": _rewrite(good, lambda t: t.replace_schema_metadata({})),
        "samples_parquet_unreadable": good[:100] + b"garbage" + good[107:200],
    }
    for code, data in cases.items():
        with pytest.raises(SidecarError) as info:
            from_parquet(data)
        assert info.value.code == code, code
    # a law's numbers without its names, and a parameter named twice
    def twice(t):
        col = t.column("law_fit_k").to_pylist()
        col[0] = [col[0][0]] * len(col[0])
        return t.set_column(t.schema.get_field_index("law_fit_k"), "law_fit_k", pa.array(col, pa.list_(pa.string())))
    with pytest.raises(SidecarError) as info:
        from_parquet(_rewrite(good, twice))
    assert info.value.code == "samples_shape"
    # sizes are checked from the footer, before any column is read
    monkeypatch.setattr(sp, "MAX_ROWS", 5)
    with pytest.raises(SidecarError) as info:
        from_parquet(good)
    assert info.value.code == "samples_too_large"
    monkeypatch.setattr(sp, "MAX_ROWS", 200_000)
    monkeypatch.setattr(sp, "MAX_UNCOMPRESSED", 1000)
    with pytest.raises(SidecarError) as info:
        from_parquet(good)
    assert info.value.code == "samples_too_large"
    monkeypatch.setattr(sp, "MAX_PARQUET_BYTES", 100)
    (tmp_path / "big.samples.parquet").write_bytes(good)
    with pytest.raises(SidecarError) as info:
        read_any_sidecar(tmp_path / "big.samples.parquet")
    assert info.value.code == "results_too_large"  # never opened: lstat said so
    (tmp_path / "zero.samples.parquet").symlink_to("/dev/zero")
    with pytest.raises(SidecarError) as info:
        read_any_sidecar(tmp_path / "zero.samples.parquet")
    assert info.value.code == "results_link"
    os.mkfifo(tmp_path / "fifo.samples.parquet")
    with pytest.raises(SidecarError) as info:
        read_any_sidecar(tmp_path / "fifo.samples.parquet")
    assert info.value.code == "results_not_regular"


def test_rows_without_a_law_and_with_negative_zero_round_trip():
    doc = _doc()
    doc["samples"][0].pop("law")
    doc["samples"][1]["true_velocity"] = -0.0
    doc["samples"][2]["law"]["wrong"] = []
    doc["samples"][3]["law"]["fit"] = {}
    assert canonical_json(from_parquet(to_parquet(doc))) == canonical_json(doc)


def test_one_changed_number_changes_the_bytes_a_record_pins():
    doc = _doc()
    forged = copy.deepcopy(doc)
    forged["samples"][0]["generated_velocity"] = 1e-06
    assert canonical_json(from_parquet(to_parquet(forged))) != ONE.read_bytes()
    assert canonical_json(from_parquet(to_parquet(doc))) == ONE.read_bytes()
