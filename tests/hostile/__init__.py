"""Builders and the harness of the hostile-input corpus (tests/test_hostile_corpus.py).

A case is (name, build, code): `build(ctx)` makes a hostile input under `ctx.tmp` and returns
the command line to run; the harness runs `phybench.cli.main(argv)` in-process and asserts
exit 2, exactly one stderr line ``phybench CMD: error [code]: ...`` with the expected code,
no traceback, and that nothing under `ctx.tmp` or the shared fixtures changed.
"""
from __future__ import annotations

import errno
import io
import json
import os
import re
import shutil
import stat
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

ERROR_LINE = re.compile(r"^phybench [\w-]+: error \[(\w+)\]: \S")


@dataclass
class Ctx:
    """What a builder may use: its own folder, and the shared read-only fixtures."""

    tmp: Path
    split: Path  # a 3-sample uniform id-eval split
    sub: Path  # a valid submission of it (npz videos)
    inputs: Path  # `phybench export-inputs` of it
    gen: Path  # a valid generated folder (full-length .npy per id)
    ids: list[str]
    videos: dict[str, np.ndarray]

    def copy(self, what: Path, name: str | None = None) -> Path:
        dest = self.tmp / (name or what.name)
        shutil.copytree(what, dest, symlinks=True)
        return dest

    def video_file(self, sub: Path, k: int = 0, suffix: str = ".npz") -> Path:
        return sub / "videos" / f"{self.ids[k]}{suffix}"


def tree(*roots: Path) -> dict[str, tuple[str, int, int]]:
    """Every path under the roots (links not followed): kind, size, mtime."""
    out = {}
    for root in roots:
        if not os.path.lexists(root):
            continue
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                p = os.path.join(folder, name)
                st = os.lstat(p)
                kind = "dir" if stat.S_ISDIR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode) else "file"
                out[p] = (kind, 0 if kind == "dir" else st.st_size, st.st_mtime_ns)
    return out


def check_refused(rc: int, err: str, code: str) -> str:
    """Exit 2 and one error line with `code`; returns the line."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2, (rc, err[-2000:])
    assert "Traceback" not in err, err[-3000:]
    assert len(lines) == 1, err[-3000:]
    m = ERROR_LINE.match(lines[0])
    assert m, lines[0]
    assert m.group(1) == code, lines[0]
    return lines[0]


# ------------------------------------------------------------------ bytes
def npy_bytes(array: Any, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=allow_pickle)
    return buf.getvalue()


def npz_bytes(**arrays: Any) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def npy_header_only(shape: tuple[int, ...], dtype: str = "|u1") -> bytes:
    """An .npy whose header declares `shape` and that holds no data (a lie about its size)."""
    header = repr({"descr": dtype, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(width: int, height: int, depth: int = 8, colour: int = 2, idat: bytes | None = None) -> bytes:
    """A PNG with any IHDR; the IDAT is a few bytes unless given (a header that lies is the point)."""
    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    body = idat if idat is not None else zlib.compress(b"\x00" * 16)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", body) + _chunk(b"IEND", b"")


def real_png(frame: np.ndarray) -> bytes:
    from phybench.data.frames import encode_png

    return encode_png(np.ascontiguousarray(frame))


def edit_json(path: Path, fn: Callable[[Any], Any]) -> None:
    doc = json.loads(path.read_text())
    new = fn(doc)
    path.write_text(new if isinstance(new, str) else json.dumps(new if new is not None else doc))


# ------------------------------------------------------------------ faults
class FullDisk:
    """Writes under `root` fail with ENOSPC after `budget` bytes (an injected full disk).

    Wraps every way phybench opens a file for writing (open/io.open, os.fdopen, os.write);
    reads and other folders are untouched."""

    def __init__(self, monkeypatch: Any, root: Path, budget: int = 0, err: int = errno.ENOSPC) -> None:
        import builtins

        self.root, self.budget, self.err = str(root), budget, err
        self.used = 0
        real_open, real_fdopen, real_write = builtins.open, os.fdopen, os.write
        disk = self

        class Limited:
            def __init__(self, f: Any) -> None:
                self._f = f

            def write(self, data: Any) -> int:
                disk.used += len(data)
                if disk.used > disk.budget:
                    raise OSError(disk.err, os.strerror(disk.err))
                return self._f.write(data)

            def __getattr__(self, name: str) -> Any:
                return getattr(self._f, name)

            def __enter__(self) -> "Limited":
                return self

            def __exit__(self, *exc: Any) -> None:
                self._f.close()

            def __iter__(self) -> Any:
                return iter(self._f)

        def under(path: Any) -> bool:
            try:
                return os.path.abspath(os.fsdecode(path)).startswith(self.root)
            except TypeError:
                return False

        def writing(mode: str) -> bool:
            return any(c in mode for c in "wax+")

        def fake_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            f = real_open(file, mode, *args, **kwargs)
            return Limited(f) if writing(mode) and not isinstance(file, int) and under(file) else f

        fds: set[int] = set()
        real_mkstemp = __import__("tempfile").mkstemp

        def fake_mkstemp(*args: Any, **kwargs: Any) -> Any:
            fd, name = real_mkstemp(*args, **kwargs)
            if under(name):
                fds.add(fd)
            return fd, name

        def fake_fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            f = real_fdopen(fd, mode, *args, **kwargs)
            return Limited(f) if fd in fds and writing(mode) else f

        def fake_write(fd: int, data: Any) -> int:
            if fd in fds:
                disk.used += len(data)
                if disk.used > disk.budget:
                    raise OSError(disk.err, os.strerror(disk.err))
            return real_write(fd, data)

        monkeypatch.setattr(builtins, "open", fake_open)
        monkeypatch.setattr(io, "open", fake_open)
        monkeypatch.setattr(os, "fdopen", fake_fdopen)
        monkeypatch.setattr(os, "write", fake_write)
        monkeypatch.setattr("tempfile.mkstemp", fake_mkstemp)


_MP4: dict[tuple[int, int], bytes] = {}


def mp4_bytes(size: int, frames: int) -> bytes:
    """A grey H.264 mp4 of `frames` frames at size x size (made once per session by ffmpeg's lavfi)."""
    import subprocess

    from phybench.data.video import ffmpeg_exe

    if (size, frames) not in _MP4:
        cmd = [ffmpeg_exe(), "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
               f"color=c=gray:s={size}x{size}:r=10", "-frames:v", str(frames), "-c:v", "libx264", "-preset",
               "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "frag_keyframe+empty_moov", "-f", "mp4", "pipe:1"]
        _MP4[size, frames] = subprocess.run(cmd, capture_output=True, check=True).stdout
    return _MP4[size, frames]
