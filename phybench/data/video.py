"""The one mp4 decoder: ffmpeg (imageio-ffmpeg's binary) in a subprocess, hardened for untrusted input.

Used by the submission reader (generated videos are untrusted) and by the importer of the
reference authors' data (their H.264 streams).  Nothing is written to disk; the demuxer is
forced and only one protocol allowed; decoded bytes and time are capped.
"""
from __future__ import annotations

import os
import re
import subprocess
import threading

import numpy as np

from ..problems import LimitExceeded

__all__ = ["LimitExceeded", "decode_mp4"]

DEFAULT_MAX_BYTES = 1 << 31  # decoded RGB bytes; the submission reader passes its own limit
DEFAULT_TIMEOUT_S = 120.0


def ffmpeg_exe() -> str:
    """The ffmpeg binary every encode and decode runs (imageio-ffmpeg's pinned build)."""
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


def _memory_file(data: bytes) -> int | None:
    """An anonymous memory file holding `data` (its descriptor), or None where there is none
    (not Linux, or the kernel refused): then the bytes go through a pipe."""
    if not hasattr(os, "memfd_create"):
        return None
    memfd = None
    try:
        memfd = os.memfd_create("phybench-mp4", os.MFD_CLOEXEC)
        view = memoryview(data)
        while view:
            view = view[os.write(memfd, view):]
        return memfd
    except OSError:
        if memfd is not None:
            os.close(memfd)
        return None


def decode_mp4(data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES, timeout_s: float = DEFAULT_TIMEOUT_S) -> np.ndarray:
    """mp4 bytes -> uint8 (T, H, W, 3) via ffmpeg, in memory: nothing touches the disk.

    On Linux the bytes go to an anonymous memory file (seekable, so an mp4 whose index
    comes last decodes); elsewhere through a pipe.  The mov demuxer is forced and only
    the file protocol allowed, so a crafted input cannot make ffmpeg open other files.
    Raises ValueError with ffmpeg's message, or LimitExceeded past max_bytes of decoded frames."""
    memfd = _memory_file(data)
    source, protocol = (f"file:/dev/fd/{memfd}", "file") if memfd is not None else ("pipe:0", "pipe")
    cmd = [ffmpeg_exe(), "-nostdin", "-hide_banner", "-loglevel", "error", "-protocol_whitelist", protocol,
           "-f", "mov", "-i", source, "-map", "0:v:0", "-fps_mode", "passthrough",
           "-f", "image2pipe", "-c:v", "ppm", "pipe:1"]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if memfd is None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                pass_fds=() if memfd is None else (memfd,))
    finally:
        if memfd is not None:
            os.close(memfd)  # the child holds its own copy
    out_pipe, err_pipe = proc.stdout, proc.stderr
    assert out_pipe is not None and err_pipe is not None  # both are PIPE
    stderr = bytearray()
    timed_out = threading.Event()

    def _feed() -> None:
        stdin = proc.stdin
        assert stdin is not None  # PIPE: only a run without a memfd feeds it
        try:
            stdin.write(data)
            stdin.close()
        except OSError:  # ffmpeg gave up early; its message says why
            pass

    def _drain() -> None:
        for chunk in iter(lambda: err_pipe.read(4096), b""):
            if len(stderr) < 65536:
                stderr.extend(chunk)

    def _kill() -> None:
        timed_out.set()
        proc.kill()

    helpers = [threading.Thread(target=_drain, daemon=True)]
    if memfd is None:
        helpers.append(threading.Thread(target=_feed, daemon=True))
    for t in helpers:
        t.start()
    timer = threading.Timer(timeout_s, _kill)
    timer.start()
    out = bytearray()
    try:
        while chunk := out_pipe.read(1 << 20):
            out.extend(chunk)
            if len(out) > max_bytes:
                proc.kill()
                raise LimitExceeded
        proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        out_pipe.close()
        for t in helpers:
            t.join(5)
        err_pipe.close()
    if timed_out.is_set():
        raise ValueError(f"decoding took longer than {timeout_s:g} s and was stopped")
    # ffmpeg's first line is the most specific ("moov atom not found"); drop its "[in#0 @ 0x..]" tags
    message = [re.sub(r"^(\[[^\]]*\]\s*)+", "", line) for line in stderr.decode("utf-8", "replace").splitlines()]
    message = [line for line in message if line.strip()]
    if proc.returncode != 0 or not out:
        raise ValueError(message[0] if message else f"ffmpeg exited with status {proc.returncode} and no frames")
    return _parse_ppm_stream(bytes(out))


_PPM_HEADER = re.compile(rb"P6\s+(\d+)\s+(\d+)\s+(\d+)\s")


def _parse_ppm_stream(data: bytes) -> np.ndarray:
    frames, pos = [], 0
    while pos < len(data):
        m = _PPM_HEADER.match(data, pos)
        if m is None or m.group(3) != b"255":
            raise ValueError("ffmpeg produced frames that could not be parsed")
        width, height = int(m.group(1)), int(m.group(2))
        start, stop = m.end(), m.end() + width * height * 3
        if stop > len(data):
            raise ValueError("the last decoded frame is incomplete")
        frames.append(np.frombuffer(data, np.uint8, width * height * 3, start).reshape(height, width, 3))
        pos = stop
    if len({f.shape for f in frames}) != 1:
        raise ValueError(f"frame sizes change within the video: {sorted({f.shape[:2] for f in frames})}")
    return np.stack(frames)
