"""Per-video sidecars as compressed Parquet: the format of the board's Hub dataset repository.

The package repository keeps its ``NAME.samples.json`` sidecars (one sorted-key JSON line,
`phybench.scoring.run.layout.samples_bytes`) and the signed records that pin their sha256; the
Hub dataset repository holds ``NAME.samples.parquet`` instead (about a twelfth of the bytes,
`benchmarks/sidecar_bytes.py` measures it).  Both read to the same in-memory document
(`read_any_sidecar`), and the Parquet converts back to the *exact* canonical JSON bytes
(`canonical_json`): so a record signed over the JSON sidecar's sha256 verifies against a
sidecar rebuilt from the Parquet, and a Parquet changed by one bit fails that check.  That is
why `to_parquet` refuses a document whose round trip is not byte-exact (`samples_not_canonical`).

The schema (``SCHEMA``, version 1): one row per video, in the sidecar's order:

    sample_id string, level string                the video and its OOD level
    true_velocity_m int64, true_velocity_e int16  a number as digits x 10^exponent (`encode_number`),
    generated_velocity_m, generated_velocity_e    both null where the JSON has null (untrackable)
    law string                                    null when the row has no ``law`` (no fit for the family)
    law_fit_k list<string>, law_fit_m list<int64>, law_fit_e list<int16>   the fitted parameters' names
    law_truth_k, law_truth_m, law_truth_e         and numbers (null numbers kept), and the true ones
    law_wrong list<string>                        null when the row's law has no ``wrong`` key

and the file's key-value metadata ``phybench`` holds the header (kind, schema_version,
submission_hash, split_hash, dof) as JSON.  A Parquet file is untrusted input: its size is
checked before it is opened, its rows and uncompressed bytes from the footer before any
column is read, its schema must be ``SCHEMA`` exactly (no extension types, nothing for
pandas to unpickle), and problems raise `SidecarError` with a code.
"""
from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any, Mapping, cast

from ... import jsonsafe
from ...scoring.run.documents import Sidecar
from ...scoring.run.layout import SAMPLES_SUFFIX, samples_bytes

PARQUET_SUFFIX = ".samples.parquet"
FORMAT_VERSION = 1
MAX_PARQUET_BYTES = 16 * 1024 * 1024  # a full-protocol split's sidecar is ~100 KB as Parquet
MAX_ROWS = 200_000  # videos per split: the largest protocol has a few thousand
MAX_UNCOMPRESSED = 256 * 1024 * 1024  # the footer's uncompressed size, checked before any column is read
MAX_MAP = 64  # law parameters per row
HEADER_KEYS = ("kind", "schema_version", "submission_hash", "split_hash", "dof")
ROW_KEYS = {"sample_id", "level", "true_velocity", "generated_velocity", "law"}
LAW_KEYS = {"law", "fit", "truth", "wrong"}


class SidecarError(Exception):
    """A sidecar phybench will not convert or read; `code` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code


def _schema() -> Any:
    import pyarrow as pa

    cols = [("sample_id", pa.string()), ("level", pa.string())]
    for name in ("true_velocity", "generated_velocity"):
        cols += [(f"{name}_m", pa.int64()), (f"{name}_e", pa.int16())]
    cols.append(("law", pa.string()))
    for name in ("law_fit", "law_truth"):
        cols += [(f"{name}_k", pa.list_(pa.string())), (f"{name}_m", pa.list_(pa.int64())),
                 (f"{name}_e", pa.list_(pa.int16()))]
    return pa.schema([*cols, ("law_wrong", pa.list_(pa.string()))])


# A number is stored as its shortest decimal digits and exponent (`repr`'s, which is what
# the JSON holds): m x 10^e, read back with float(f"{m}e{e}"), the same double by correct
# rounding.  Nine significant digits fit an int64 and compress far better than the double's
# noisy low mantissa bits.  -0.0 (whose digits have no sign) is written as m 0, e NEG_ZERO.
NEG_ZERO = 32767


def encode_number(x: float | None) -> tuple[int | None, int | None]:
    """(digits, exponent) of a finite float's shortest repr; (None, None) for null."""
    from decimal import Decimal

    if x is None:
        return None, None
    if x == 0.0 and math.copysign(1.0, x) < 0:
        return 0, NEG_ZERO
    sign, digits, exp = Decimal(repr(x)).as_tuple()
    mantissa = int("".join(map(str, digits)))
    assert isinstance(exp, int)  # a finite float's Decimal (checked by _number)
    return -mantissa if sign else mantissa, exp


def decode_number(m: int | None, e: int | None, where: str) -> float | None:
    if m is None and e is None:
        return None
    if m is None or e is None or abs(m) >= 10 ** 17 or not (-400 <= e <= 400 or (m == 0 and e == NEG_ZERO)):
        raise SidecarError("samples_shape", f"{where}: not a stored number")
    x = -0.0 if e == NEG_ZERO else float(f"{m}e{e}")
    if not math.isfinite(x):
        raise SidecarError("samples_not_canonical", f"{where} is not finite")
    return x


def parquet_path(json_path: str | Path) -> Path:
    """``dir/name.samples.json`` -> ``dir/name.samples.parquet``."""
    p = Path(json_path)
    return p.with_name(p.name[: -len(SAMPLES_SUFFIX)] + PARQUET_SUFFIX)


def json_path(parquet: str | Path) -> Path:
    """``dir/name.samples.parquet`` -> ``dir/name.samples.json``."""
    p = Path(parquet)
    return p.with_name(p.name[: -len(PARQUET_SUFFIX)] + SAMPLES_SUFFIX)


def canonical_json(doc: Mapping[str, Any]) -> bytes:
    """The sidecar's bytes as `phybench score` writes them (what a record's samples_sha256 pins)."""
    return samples_bytes(doc)


# ---------------------------------------------------------------- JSON -> columns
def _number(x: Any, where: str) -> float | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, float) or not math.isfinite(x):
        raise SidecarError("samples_not_canonical", f"{where}: {str(x)[:30]!r} is not a finite float or null")
    return x


def _params(block: Any, where: str) -> tuple[list[str], list[int | None], list[int | None]]:
    """(names, digits, exponents) of a law's parameter map."""
    if not isinstance(block, dict) or len(block) > MAX_MAP or not all(isinstance(k, str) for k in block):
        raise SidecarError("samples_shape", f"{where}: a map of at most {MAX_MAP} named numbers expected")
    pairs = [encode_number(_number(v, f"{where}.{k}")) for k, v in block.items()]
    return list(block), [m for m, _ in pairs], [e for _, e in pairs]


def _columns(samples: Any) -> dict[str, list[Any]]:
    """The sidecar's rows as the schema's columns; any key or type outside the schema is refused."""
    if not isinstance(samples, list) or len(samples) > MAX_ROWS:
        raise SidecarError("samples_shape", f"samples must be a list of at most {MAX_ROWS:,} rows")
    cols: dict[str, list[Any]] = {name: [] for name in _schema().names}
    for i, row in enumerate(samples):
        if not isinstance(row, dict) or not set(row) <= ROW_KEYS or not {"sample_id", "level"} <= set(row):
            raise SidecarError("samples_shape", f"row {i}: keys {sorted(row)[:8] if isinstance(row, dict) else row!r} "
                                                f"are not the schema's ({', '.join(sorted(ROW_KEYS))})")
        if not isinstance(row["sample_id"], str) or not isinstance(row["level"], str):
            raise SidecarError("samples_shape", f"row {i}: sample_id and level must be strings")
        cols["sample_id"].append(row["sample_id"])
        cols["level"].append(row["level"])
        for key in ("true_velocity", "generated_velocity"):
            if key not in row:
                raise SidecarError("samples_shape", f"row {i}: no {key} (null is written as null)")
            m, e = encode_number(_number(row[key], f"row {i}.{key}"))
            cols[f"{key}_m"].append(m)
            cols[f"{key}_e"].append(e)
        law = row.get("law")
        if "law" in row and (not isinstance(law, dict) or not set(law) <= LAW_KEYS or not isinstance(law.get("law"), str)
                             or "fit" not in law or "truth" not in law):
            raise SidecarError("samples_shape", f"row {i}: law must hold law, fit, truth (and wrong)")
        cols["law"].append(law["law"] if law else None)
        for part in ("fit", "truth"):
            keys, ms, es = _params(law[part], f"row {i}.law.{part}") if law else (None, None, None)
            cols[f"law_{part}_k"].append(keys)
            cols[f"law_{part}_m"].append(ms)
            cols[f"law_{part}_e"].append(es)
        wrong = law.get("wrong") if law else None
        if law and "wrong" in law and (not isinstance(wrong, list) or not all(isinstance(w, str) for w in wrong)):
            raise SidecarError("samples_shape", f"row {i}: law.wrong must be a list of names")
        cols["law_wrong"].append(list(wrong) if isinstance(wrong, list) else None)
    return cols


def to_parquet(doc: Any, *, level: int = 19) -> bytes:
    """A sidecar document as zstd-compressed Parquet bytes, refused unless it reads back to the
    exact canonical JSON bytes of `doc` (`samples_not_canonical`): nothing is lost on the Hub."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not isinstance(doc, dict) or set(doc) != {*HEADER_KEYS, "samples"}:
        raise SidecarError("samples_shape", f"a sidecar holds {', '.join(HEADER_KEYS)} and samples, nothing else")
    header = {k: doc[k] for k in HEADER_KEYS}
    table = pa.Table.from_pydict(_columns(doc["samples"]), schema=_schema())
    table = table.replace_schema_metadata({"phybench": json.dumps({"format_version": FORMAT_VERSION, **header},
                                                                  sort_keys=True)})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", compression_level=level, write_statistics=False,
                   use_dictionary=["level", "law", "law_fit_k.list.element", "law_truth_k.list.element"])
    data = buf.getvalue()
    if canonical_json(from_parquet(data)) != canonical_json(doc):
        raise SidecarError("samples_not_canonical", "the Parquet does not read back to the same JSON bytes")
    return data


# ---------------------------------------------------------------- Parquet -> document
def _header(meta: Any) -> dict[str, Any]:
    raw = (meta.metadata or {}).get(b"phybench") if meta is not None else None
    try:
        header = jsonsafe.loads(raw, max_bytes=4095) if raw and len(raw) < 4096 else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format_version") != FORMAT_VERSION \
            or set(header) != {"format_version", *HEADER_KEYS}:
        raise SidecarError("samples_parquet_header", f"no phybench sidecar header of format {FORMAT_VERSION}")
    return {k: header[k] for k in HEADER_KEYS}


def _open(data: bytes) -> Any:
    """The ParquetFile, its footer checked (rows, uncompressed bytes, schema) before any column is read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if len(data) > MAX_PARQUET_BYTES:
        raise SidecarError("samples_too_large", f"{len(data):,} bytes; at most {MAX_PARQUET_BYTES:,}")
    try:
        pf = pq.ParquetFile(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise SidecarError("samples_parquet_unreadable", f"not a Parquet file ({str(exc)[:120]})") from None
    meta = pf.metadata
    if meta.num_rows > MAX_ROWS:
        raise SidecarError("samples_too_large", f"{meta.num_rows:,} rows; at most {MAX_ROWS:,}")
    total = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if total > MAX_UNCOMPRESSED:
        raise SidecarError("samples_too_large", f"{total:,} bytes uncompressed; at most {MAX_UNCOMPRESSED:,}")
    if not pf.schema_arrow.remove_metadata().equals(_schema()):
        raise SidecarError("samples_parquet_schema", "the columns are not the sidecar schema's (see "
                                                     "phybench.leaderboard.common.samples_parquet)")
    return pf


def _params_of(cols: dict[str, list[Any]], part: str, i: int) -> dict[str, float | None] | None:
    keys, ms, es = (cols[f"law_{part}_{c}"][i] for c in "kme")
    if keys is None and ms is None and es is None:
        return None
    if keys is None or ms is None or es is None or not len(keys) == len(ms) == len(es) or len(set(keys)) != len(keys) \
            or len(keys) > MAX_MAP:
        raise SidecarError("samples_shape", f"row {i}: law.{part} is not one number per distinct name")
    return {k: decode_number(m, e, f"row {i}.law.{part}.{k}") for k, m, e in zip(keys, ms, es)}


def _row(cols: dict[str, list[Any]], i: int) -> dict[str, Any]:
    row: dict[str, Any] = {"sample_id": cols["sample_id"][i], "level": cols["level"][i]}
    for key in ("true_velocity", "generated_velocity"):
        row[key] = decode_number(cols[f"{key}_m"][i], cols[f"{key}_e"][i], f"row {i}.{key}")
    fit, truth = _params_of(cols, "fit", i), _params_of(cols, "truth", i)
    if cols["law"][i] is not None:
        if fit is None or truth is None:
            raise SidecarError("samples_shape", f"row {i}: a law without its parameters")
        row["law"] = {"law": cols["law"][i], "fit": fit, "truth": truth}
        if cols["law_wrong"][i] is not None:
            row["law"]["wrong"] = cols["law_wrong"][i]
    elif fit is not None or truth is not None or cols["law_wrong"][i] is not None:
        raise SidecarError("samples_shape", f"row {i}: law parameters without a law")
    return row


def from_parquet(data: bytes) -> Sidecar:
    """A Parquet sidecar's document: the same dict `json.loads` gives for its JSON sidecar."""
    import pyarrow as pa

    pf = _open(data)
    header = _header(pf.schema_arrow)
    try:
        cols = pf.read().to_pydict()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise SidecarError("samples_parquet_unreadable", f"its columns could not be read ({str(exc)[:120]})") from None
    return cast(Sidecar, {**header, "samples": [_row(cols, i) for i in range(len(cols["sample_id"]))]})


def read_any_sidecar(path: str | Path) -> Sidecar:
    """A sidecar, JSON or Parquet by its name, read as a size-capped regular file."""
    from .files import MAX_FILE_BYTES, UnsafeFile, read_regular

    p = Path(path)
    parquet = p.name.endswith(PARQUET_SUFFIX)
    try:
        data = read_regular(p, MAX_PARQUET_BYTES if parquet else MAX_FILE_BYTES)
    except UnsafeFile as exc:
        raise SidecarError(exc.code, str(exc)) from None
    if parquet:
        return from_parquet(data)
    try:
        doc = jsonsafe.loads(data, p.name)
    except ValueError as exc:  # jsonsafe.JSONError: its code and line in the message
        raise SidecarError("samples_unreadable", f"{p.name} is not JSON ({getattr(exc, 'code', '')}: {exc})") from None
    if not isinstance(doc, dict):
        raise SidecarError("samples_shape", f"{p.name} is not a sidecar document")
    return cast(Sidecar, doc)  # its rows are checked by the caller that needs them (`verify.checks`)
