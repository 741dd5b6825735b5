"""A hostile corpus that keeps the parsers honest: seeded mutations of valid files, each parsed and
chunked in a child process under the production limits.

:func:`seed_files` writes one small valid file of every format the platform reads (PDF, DOCX, PPTX,
XLSX, XLS, CSV, HTML, Markdown, text, JSON, JSON Lines, e-mail .eml and Outlook .msg, EPUB, PNG,
JPEG and TIFF images, a legacy .doc container). :func:`mutated_files` derives ``count`` files from
them with a fixed seed: bit flips, interesting bytes, truncation, a slice repeated many times,
structures nested many times (tags, brackets, quote marks, list markers, XML wrappers), numbers
made huge (page counts, lengths, spans, sizes in binary headers) and, for zip containers (DOCX,
PPTX, XLSX, EPUB), one entry mutated inside a valid container or the container's own fields
corrupted. The same seed gives the same files.

:func:`run` sends each file through :func:`ragloom.ingest.pipeline.parse_file` and
:func:`~ragloom.ingest.pipeline.chunk_parsed` in a worker process under the production size
limits (``IngestLimits.from_settings(Settings())``) and a :class:`~ragloom.ingest.guard.TaskGuard`
with a time and memory limit; the parent kills (and replaces) a worker that goes past a file's CPU
time, wall time or memory, and the worker holds itself to ``RLIMIT_AS``. Each file ends as an
:class:`Outcome`:

* ``parsed`` — blocks and chunks;
* ``failed`` — a :class:`~ragloom.errors.RagloomError` with its message (the reason);
* ``unexpected`` — any other exception (an ``IndexError``, a ``RecursionError``, a ``zlib.error``...),
  a bug of the parser, or an error without a message;
* ``killed`` — the worker went over its CPU time, wall time or memory without stopping itself.

The test (``tests/ingest/test_fuzz_parsers.py``) runs a short corpus; ``benchmarks/fuzz_parsers.py``
a long one and prints its figures.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import multiprocessing.connection
import os
import random
import re
import resource
import signal
import time
import traceback
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from tests.ingest import docgen, hostile

PARSED, FAILED, UNEXPECTED, KILLED = "parsed", "failed", "unexpected", "killed"
_ZIPPED = (".docx", ".pptx", ".xlsx", ".epub")
_TEXTUAL = (".html", ".md", ".txt", ".csv", ".json", ".jsonl", ".eml")
_NESTS = [b"<div>", b"<ul><li>", b"<table><tr><td>", b"[", b'{"a":', b"> ", b"- ", b"(", b'"', b"*", b"_", b"`",
          b"<w:sdt><w:sdtContent>", b"<w:tbl><w:tr><w:tc>", b"<a:p>", b"<p:grpSp>",
          b'--b\nContent-Type: multipart/mixed; boundary="b"\n\n', b"=?utf-8?q?a?= ", b"\\", b"<![CDATA[", b"<!--",
          b"&#", b"<row>", b"<c r=\"A1\">"]
_INTERESTING = [0x00, 0xFF, 0x7F, 0x80, 0x0A, 0x0D, 0x22, 0x27, 0x3C, 0x3E, 0x5B, 0x7B, 0x5C, 0x25, 0x26, 0xC3, 0xE2]
_HUGE = [b"0", b"-1", b"4294967295", b"2147483648", b"99999999999999999999", b"1e308", b"65535", b"1000000000",
         b"9" * 5000]
_DIGITS = re.compile(rb"\d+")


# --- seeds -------------------------------------------------------------------------------------


def seed_files(tmp: Path) -> dict[str, bytes]:
    """One small valid file of each format, written in ``tmp`` (file name -> bytes)."""
    rng = random.Random(7)
    paragraphs = [docgen.paragraph(rng, 3) for _ in range(6)]
    out: dict[str, bytes] = {}

    def written(name: str, make: Callable[[Path], object]) -> None:
        path = tmp / name
        make(path)
        out[name] = path.read_bytes()

    written("report.pdf", lambda p: docgen.make_pdf(p, [["# Maintenance report", paragraphs[0], "## Pumps",
                                                          paragraphs[1]], ["## Valves", paragraphs[2]]]))
    out["raw.pdf"] = hostile.raw_pdf([(595, 842)] * 2, [b"BT /F1 12 Tf 72 760 Td (Figure 1: pump schedule) Tj ET "
                                                        b"0 0 1 rg 100 500 200 100 re f 72 480 m 300 480 l S",
                                                        b"BT /F1 9 Tf 72 820 Td (Acme manual) Tj /F1 12 Tf 0 -300 Td ("
                                                        + paragraphs[3].encode() + b") Tj ET"])
    written("rich.docx", lambda p: docgen.make_docx_rich(p, [
        ("title", "Pump manual"), ("h1", "Scope"), ("p", paragraphs[0]), ("number", "Open the valve"),
        ("sub", ("Check the seal", 1)), ("bullet", "Grease weekly"),
        ("merged_table", ([["part", "interval", "note"], ["pump", "500 h", "oil"], ["valve", "1000 h", "seal"]],
                          [(1, 2, 2, 2)])),
        ("image", "a pump"), ("caption", "Figure 1: the pump"), ("p", paragraphs[1])], header="Acme", footer="p. 1"))
    written("deck.pptx", lambda p: docgen.make_pptx(p, [
        {"title": "Maintenance", "bullets": ["Pumps", ("Seals", 1)], "notes": "Say hello"},
        {"title": "Intervals", "table": [["part", "hours"], ["pump", "500"], ["valve", "1000"]],
         "merges": [(1, 0, 2, 0)], "image": "a chart"}]))
    written("book.xlsx", lambda p: docgen.make_xlsx(p, {"Parts": [["part", "hours", "cost"], ["pump", 500, 12.5],
                                                                 ["valve", 1000, "=B3*2"]],
                                                       "Notes": [["Maintenance plan 2025"], ["note", "owner"],
                                                                 ["grease", "Ann"]]},
                                                   merges={"Notes": ["A1:B1"]}))
    written("old.xls", lambda p: docgen.make_xls(p, {"Parts": [["part", "hours"], ["pump", 500], ["valve", 1000]]},
                                                 merges={"Parts": [(1, 2, 1, 1)]}))
    out["data.csv"] = b"part,hours,note\npump,500,\"oil, weekly\"\nvalve,1000,seal\n"
    out["page.html"] = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Pumps</title></head><body><nav>menu</nav>"
        f"<main><h1>Pumps</h1><p>{paragraphs[0]} <b>bold</b> <a href='#'>link</a></p><ul><li>one<ul><li>two</li></ul>"
        "</li></ul><table><caption>Intervals</caption><tr><th>part</th><th>hours</th></tr><tr><td rowspan='2'>pump"
        "</td><td>500</td></tr><tr><td colspan='2'>1000</td></tr></table><pre>code  block</pre><details><summary>"
        f"More</summary><p>{paragraphs[1]}</p></details><dl><dt>term</dt><dd>definition</dd></dl></main>"
        "<footer>foot</footer></body></html>").encode()
    out["notes.md"] = (f"# Pumps\n\n{paragraphs[0]}\n\n## Steps\n\n1. open\n   - check *the* `seal`\n2. close\n\n"
                       "| part | hours |\n|---|---|\n| pump | 500 |\n\n```python\nprint('x')\n```\n\n"
                       f"<div><b>html</b> block</div>\n\n> quote [link](http://x) ![img](y.png)\n\n{paragraphs[1]}\n"
                       ).encode()
    out["plain.txt"] = ("\n\n".join(paragraphs) + "\n").encode()
    out["data.json"] = (b'{"pump": {"hours": 500, "tags": ["oil", "seal"], "parts": [{"id": 1}, {"id": 2}]}, '
                        b'"valve": null, "ok": true, "note": "caf\\u00e9 \\"quoted\\""}')
    out["data.jsonl"] = b'{"part": "pump", "hours": 500}\n{"part": "valve", "hours": [1, 2]}\n'
    inner = docgen.make_eml(tmp / "inner.eml", subject="Inner", sender="b@example.com", to="c@example.com",
                            body="Inner body.")
    written("mail.eml", lambda p: docgen.make_eml(
        p, subject="Pump =?utf-8?q?caf=C3=A9?=", sender='"Ann" <ann@example.com>', to="bob@example.com",
        cc="c@example.com", body=paragraphs[0], html=f"<p>{paragraphs[1]}</p>",
        attachments=[("notes.txt", paragraphs[2].encode(), "text/plain"), ("inner.eml", inner, "message/rfc822")]))
    written("mail.msg", lambda p: docgen.make_msg(p, subject="Pump", sender="ann@example.com", to="bob@example.com",
                                                  body=paragraphs[0], attachments=[("a.txt", b"attached words")]))
    written("book.epub", lambda p: docgen.make_epub(p, "Pumps", [("c1.xhtml", f"<h1>One</h1><p>{paragraphs[0]}</p>"),
                                                                 ("c2.xhtml", f"<h1>Two</h1><p>{paragraphs[1]}</p>")]))
    written("old.doc", lambda p: docgen.make_ole(p, {"WordDocument": b"\x00" * 600, "1Table": b"\x00" * 100}))
    for name, fmt in (("scan.png", "PNG"), ("photo.jpg", "JPEG"), ("pages.tif", "TIFF")):
        out[name] = _text_image(fmt)
    return out


def _text_image(fmt: str) -> bytes:
    """A small picture of a line of text (two frames for TIFF)."""
    from PIL import Image, ImageDraw

    frames = []
    for text in ("Pump 500 hours", "Valve 1000 hours"):
        image = Image.new("L", (240, 60), 255)
        ImageDraw.Draw(image).text((10, 20), text, fill=0)
        frames.append(image)
    out = io.BytesIO()
    if fmt == "TIFF":
        frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    else:
        frames[0].save(out, format=fmt)
    return out.getvalue()


# --- mutations -----------------------------------------------------------------------------------


def _bit_flips(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 16)):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def _bytes_set(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] = rng.choice(_INTERESTING)
    return bytes(out)


def _truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(1, len(data))] if len(data) > 1 else data


def _repeat(data: bytes, rng: random.Random) -> bytes:
    """A slice repeated up to 2,000 times in place: repeated structures (rows, pages, entries...)."""
    start = rng.randrange(len(data))
    piece = data[start : start + rng.randint(1, 64)]
    return data[:start] + piece * rng.choice([2, 10, 100, 2000]) + data[start:]


def _nest(data: bytes, rng: random.Random) -> bytes:
    """An opening structure repeated many times at one place: nesting far past any limit, or just below."""
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice(_NESTS) * rng.choice([50, 250, 300, 5000, 50_000]) + data[at:]


def _huge_number(data: bytes, rng: random.Random) -> bytes:
    """A number of the file (a count, a length, a size, a span) made huge, negative or zero."""
    found = list(_DIGITS.finditer(data[:200_000]))
    if not found:
        return _int_field(data, rng)
    match = rng.choice(found)
    return data[: match.start()] + rng.choice(_HUGE) + data[match.end() :]


def _int_field(data: bytes, rng: random.Random) -> bytes:
    """A 2- or 4-byte field of a binary header (image sizes, OLE sector counts...) overwritten."""
    out = bytearray(data)
    at = rng.randrange(min(len(out), 512))
    value = rng.choice([b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80", b"\x00\x00\x00\x00",
                        b"\xff\xff", b"\x00\x00"])
    out[at : at + len(value)] = value
    return bytes(out)


def _splice(data: bytes, rng: random.Random, others: list[bytes]) -> bytes:
    other = rng.choice(others)
    a, b = sorted(rng.randrange(len(other)) for _ in range(2))
    at = rng.randrange(len(data) + 1)
    return data[:at] + other[a:b] + data[at:]


_BYTES_OPS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "bit-flips": _bit_flips, "bytes-set": _bytes_set, "truncate": _truncate, "repeat": _repeat, "nest": _nest,
    "huge-number": _huge_number, "int-field": _int_field,
}


def _zip_entry(data: bytes, rng: random.Random, ops: list[str]) -> bytes:
    """One entry of a zip container mutated, the container rewritten valid: the hostile bytes reach the XML."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as src:
            entries = [(info, src.read(info.filename)) for info in src.infolist()]
    except Exception:  # noqa: BLE001 - an earlier mutation broke the container: mutate its bytes instead
        ops.append("bit-flips")
        return _bit_flips(data, rng)
    index = rng.randrange(len(entries))
    name = rng.choice(["nest", "repeat", "huge-number", "bit-flips", "truncate", "bytes-set"])
    ops.append(f"zip-entry:{entries[index][0].filename}:{name}")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for k, (info, body) in enumerate(entries):
            if k == index and body:
                body = _BYTES_OPS[name](body, rng)
            dst.writestr(info.filename, body)
    return out.getvalue()


def _zip_fields(data: bytes, rng: random.Random) -> bytes:
    """Fields of the container itself corrupted: sizes, offsets, methods, CRCs of a local or central header."""
    heads = [m.start() for m in re.finditer(rb"PK\x01\x02|PK\x03\x04|PK\x05\x06", data)]
    if not heads:
        return _int_field(data, rng)
    out = bytearray(data)
    at = rng.choice(heads) + rng.randrange(4, 30)
    value = rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\x0c\x00", b"\x63\x00", b"\xff\x7f\x00\x00"])
    out[at : at + len(value)] = value
    return bytes(out)


def mutate(name: str, data: bytes, rng: random.Random, others: list[bytes]) -> tuple[bytes, list[str]]:
    """``data`` after one to three mutations; the names of the mutations applied."""
    ops: list[str] = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        if not data:
            break
        if name.endswith(_ZIPPED) and rng.random() < 0.8:  # mostly inside the container: the XML is what is read
            if rng.random() < 0.85:
                data = _zip_entry(data, rng, ops)
            else:
                ops.append("zip-fields")
                data = _zip_fields(data, rng)
            continue
        op = rng.choice([*_BYTES_OPS, "splice"])
        if op == "int-field" and name.endswith(_TEXTUAL):
            op = "huge-number"
        ops.append(op)
        data = _splice(data, rng, others) if op == "splice" else _BYTES_OPS[op](data, rng)
    return data, ops


@dataclass(frozen=True, slots=True)
class Mutant:
    name: str  # the seed's file name, numbered: ``0042-report.pdf``
    data: bytes
    seed: str  # the seed file it comes from
    ops: tuple[str, ...]


def mutated_files(seeds: dict[str, bytes], count: int, seed: int = 1) -> Iterator[Mutant]:
    """``count`` mutated files, the seeds taken in turn; the same ``seed`` gives the same files."""
    names = sorted(seeds)
    others = [seeds[n] for n in names]
    for i in range(count):
        source = names[i % len(names)]
        rng = random.Random(seed * 1_000_003 + i)
        data, ops = mutate(source, seeds[source], rng, others)
        yield Mutant(f"{i:04d}-{source}", data, source, tuple(ops))


# --- running each file in a child process ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    name: str
    seed: str
    ops: tuple[str, ...]
    size: int
    kind: str  # PARSED | FAILED | UNEXPECTED | KILLED
    reason: str  # the error's class and message; for parsed files "N blocks, M chunks"
    seconds: float  # wall time in the child (or until it was killed)
    memory_mb: float  # the child's peak resident memory above what it started with

    @property
    def error(self) -> str:
        return self.reason.split(":", 1)[0]


def _count_tokens(text: str) -> int:
    return len(text.split())


def _status_kib(field: str, pid: int | str = "self") -> int:
    """A ``VmRSS``/``VmSize``/``VmHWM`` figure of a process, in KiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _parse_one(name: str, data: bytes, time_limit: float, memory_limit_mb: float) -> tuple[str, str]:
    """Parse and chunk one file under the production limits and the guard: ``(kind, reason)``."""
    from ragloom.config import Settings
    from ragloom.errors import RagloomError
    from ragloom.ingest.guard import IngestLimits, TaskGuard, guarded
    from ragloom.ingest.pipeline import chunk_parsed, parse_file

    guard = TaskGuard(IngestLimits.from_settings(Settings(_env_file=None)), time_limit=time_limit,
                      memory_limit_mb=memory_limit_mb)
    try:
        with guarded(guard):
            parsed = parse_file(data, name)
            chunks = chunk_parsed(parsed, "naive", {}, _count_tokens)
    except RagloomError as exc:
        return (FAILED if exc.message.strip() else UNEXPECTED), f"{type(exc).__name__}: {exc.message}"
    except MemoryError:  # RLIMIT_AS: the guard's checkpoints did not stop the growth in time
        return KILLED, "MemoryError: over the memory limit"
    except BaseException as exc:  # noqa: BLE001 - what the harness is here to find
        return UNEXPECTED, f"{type(exc).__name__}: {exc}"[:300] + "\n" + traceback.format_exc(limit=-6)[-1500:]
    return PARSED, f"{len(parsed.blocks)} blocks, {len(chunks)} chunks"


def _worker(conn: Connection, time_limit: float, memory_mb: int) -> None:
    """A worker process: parses the files it is sent, one at a time, until it gets None. It holds itself
    to ``RLIMIT_AS`` (room for ``memory_mb`` more than its start, and for the OCR models it may load);
    the parent kills it past a file's CPU time, wall time or memory."""
    devnull = os.open(os.devnull, os.O_WRONLY)  # libraries' own prints (model loading, pdfminer) stay out of
    os.dup2(devnull, 1)  # the report: what matters comes back through the pipe
    os.dup2(devnull, 2)
    address_space = (_status_kib("VmSize") + (memory_mb + _MODELS_MB) * 1024) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    conn.send("ready")
    while (job := conn.recv()) is not None:
        name, data = job
        with open("/proc/self/clear_refs", "w") as refs:  # the peak resident size restarts for this file
            refs.write("5")
        start_rss = _status_kib("VmRSS")
        started = time.monotonic()
        kind, reason = _parse_one(name, data, time_limit, start_rss / 1024 + memory_mb)
        grown = max(0, _status_kib("VmHWM") - start_rss) / 1024
        conn.send((kind, reason, time.monotonic() - started, grown))


_MODELS_MB = 2048  # address space a worker may map for the OCR models on top of a file's memory


@dataclass
class _Worker:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    mutant: Mutant | None = None
    started: float = 0.0
    cpu_start: float = 0.0
    rss_start: int = 0


def run(mutants: Iterator[Mutant] | list[Mutant], *, workers: int = 2, time_limit: float = 20.0,
        memory_mb: int = 1024, progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Each file parsed and chunked by one of ``workers`` worker processes: a worker that takes
    more than ``time_limit`` of CPU time on a file (plus 5 s; or 1.5 times it of wall time, plus 10 s)
    or grows ``memory_mb`` beyond its size before the file is killed and replaced, and the file is
    ``killed``. Workers are reused across files, so a model one loads (OCR) is loaded once. They are
    started with ``spawn``: a process forked from one whose ONNX runtime has started its threads
    (a test process that ran OCR before) hangs in its first OCR call."""
    context = multiprocessing.get_context("spawn")
    pending = iter(mutants)
    pool: list[_Worker] = []
    outcomes: list[Outcome] = []

    def spawn() -> _Worker:
        """A new worker, once it says it is ready (a worker that cannot start fails the run, not a file)."""
        parent_end, child_end = context.Pipe()
        process = context.Process(target=_worker, args=(child_end, time_limit, memory_mb), daemon=True)
        process.start()
        child_end.close()
        try:
            ready = parent_end.poll(120) and parent_end.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            process.kill()
            raise RuntimeError(f"a fuzz worker did not start ({_death(_exit_code(process))})")
        return _Worker(process, parent_end)

    def finish(worker: _Worker, kind: str, reason: str, seconds: float, memory: float) -> None:
        m = worker.mutant
        assert m is not None
        worker.mutant = None
        outcome = Outcome(m.name, m.seed, m.ops, len(m.data), kind, reason, seconds, memory)
        outcomes.append(outcome)
        if progress is not None:
            progress(outcome)

    def replace(worker: _Worker, reason: str) -> None:
        if worker.process.is_alive():
            os.kill(worker.process.pid or 0, signal.SIGKILL)
        worker.conn.close()
        code = _exit_code(worker.process)
        finish(worker, KILLED, reason or _death(code), time.monotonic() - worker.started, 0.0)
        pool[pool.index(worker)] = spawn()

    pool.extend(spawn() for _ in range(workers))
    exhausted = False
    retry: Mutant | None = None  # a file whose worker was found dead before it got it
    try:
        while True:
            for index, worker in enumerate(pool):
                if worker.mutant is None and not exhausted:
                    mutant, retry = retry or next(pending, None), None
                    if mutant is None:
                        exhausted = True
                        break
                    worker.mutant, worker.started = mutant, time.monotonic()
                    worker.cpu_start = _cpu_seconds(worker.process.pid or 0)
                    worker.rss_start = _status_kib("VmRSS", worker.process.pid or 0)
                    try:
                        worker.conn.send((mutant.name, mutant.data))
                    except OSError:  # it died since its last answer: the file goes to a new one
                        worker.mutant, retry = None, mutant
                        worker.conn.close()
                        pool[index] = spawn()
            busy = [w for w in pool if w.mutant is not None]
            if not busy:
                break
            multiprocessing.connection.wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=0.1)
            for worker in busy:
                _watch(worker, time_limit, memory_mb, finish, replace)
    finally:
        for worker in pool:
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()
    return outcomes


def _watch(worker: _Worker, time_limit: float, memory_mb: int, finish: Callable[..., None],
           replace: Callable[[_Worker, str], None]) -> None:
    """Take a busy worker's answer, or stop it when it has none and is over a limit or dead."""
    pid = worker.process.pid or 0
    if worker.conn.poll():
        try:
            finish(worker, *worker.conn.recv())
        except (EOFError, OSError):
            replace(worker, "")
        return
    waited = time.monotonic() - worker.started
    cpu = _cpu_seconds(pid) - worker.cpu_start
    grown_mb = (_status_kib("VmRSS", pid) - worker.rss_start) / 1024
    if not worker.process.is_alive():
        replace(worker, "")
    elif cpu > time_limit + 5:
        replace(worker, f"over its time: {cpu:.0f} s of CPU without an answer (killed)")
    elif waited > 1.5 * time_limit + 10:
        replace(worker, f"no answer after {waited:.0f} s of wall time (killed)")
    elif grown_mb > memory_mb:
        replace(worker, f"over its memory: grew {grown_mb:,.0f} MiB (killed)")


def _exit_code(process: multiprocessing.process.BaseProcess) -> int | None:
    process.join(timeout=5)
    return process.exitcode


def _death(code: int | None) -> str:
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        why = {"SIGKILL": "killed (memory?)", "SIGSEGV": "crashed", "SIGABRT": "aborted"}.get(name, name)
        return f"{name}: the worker stopped: {why}"
    return f"exit {code}: the worker ended without an answer"
