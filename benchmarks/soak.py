"""Soak test: concurrent uploads and queries against a live ``ragloom serve`` for a few minutes.

    .venv/bin/python benchmarks/soak.py --minutes 3 --uploaders 2 --searchers 4 --workers 2

Starts a real server (``python -m ragloom.cli serve``, supervised workers) on a
scratch data directory and a free port, seeds a knowledge base, then for the
given time runs uploader threads (generated Markdown, text and PDF files) and
searcher threads (``/retrieval`` in hybrid and keyword mode, some ``/answer``)
over HTTP. It samples the resident memory of the server and of each worker
process every few seconds and prints:

- per operation: calls, calls/s, p50 / p95 / p99 latency and errors (any non-2xx
  answer or transport failure counts as an error; the goal is zero);
- memory over time (server, workers) with the change between the first and the
  last third of the run (the goal is flat);
- how ingestion kept up: documents done / failed / still queued at the end.

Per-key rate limits are switched off for the run (``RAGLOOM_RATE_LIMIT_PER_MINUTE=0``)
so that the figures measure the server, not the limiter.

``--attacker`` runs the soak twice in one server, side by side: first as above, then with one more
user — signed up on their own, in a workspace of their own — who sends the worst inputs found by the
security probe while the others work: chunking previews and uploads of HTML nested 100,000 levels
deep, previews of a multi-megabyte one-line text, bursts of malformed ``/retrieval`` requests (422),
provider tests aimed at the cloud metadata address and loopback, and uploads of 100 MiB files. The
report shows both phases and the ratio of the others' latencies (attack / baseline), with what the
attacker's calls were answered (status codes), and the server's peak memory in each phase. Per-key
rate limits stay off for the others; the attacker is limited like any user (per principal).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

SUBJECTS = ["pump", "valve", "turbine", "compressor", "sensor", "controller", "bearing", "gearbox", "filter",
            "heat exchanger", "motor", "inverter", "battery pack", "cooling loop", "hydraulic press"]
VERBS = ["must be inspected", "is replaced", "is calibrated", "is lubricated", "is tested", "is cleaned"]
PERIODS = ["every 500 hours", "each month", "after 2,000 cycles", "every spring", "weekly", "after each overhaul"]
PLACES = ["in hall A", "on line 3", "at the north plant", "in the clean room", "on deck 2", "at site Lyon"]

console = Console()


def sentence(rng: random.Random) -> str:
    return f"The {rng.choice(SUBJECTS)} {rng.choice(PLACES)} {rng.choice(VERBS)} {rng.choice(PERIODS)}."


def make_file(rng: random.Random, i: int) -> tuple[str, bytes, str]:
    kind = rng.choice(["md", "txt", "pdf"])
    paragraphs = ["\n".join(sentence(rng) for _ in range(rng.randint(3, 8))) for _ in range(rng.randint(2, 8))]
    if kind == "md":
        body = f"# Service note {i}\n\n" + "\n\n".join(f"## Part {k}\n\n{p}" for k, p in enumerate(paragraphs))
        return f"note-{i}.md", body.encode(), "text/markdown"
    if kind == "txt":
        return f"memo-{i}.txt", "\n\n".join(paragraphs).encode(), "text/plain"
    return f"sheet-{i}.pdf", _pdf(paragraphs), "application/pdf"


def _pdf(paragraphs: list[str]) -> bytes:
    """A small text PDF written by hand (no dependency): one page per two paragraphs."""
    pages = [paragraphs[i : i + 2] for i in range(0, len(paragraphs), 2)]
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * n} 0 R" for n in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for page in pages:
        lines = [ln for p in page for ln in [*p.split("\n"), ""]]
        text = "BT /F1 10 Tf 50 780 Td 14 TL " + " ".join(
            "(" + ln.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") '" for ln in lines) + " ET"
        stream = text.encode("latin-1", "replace")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
                       f"/Contents {len(objects) + 2} 0 R >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def question(rng: random.Random) -> str:
    return f"how often is the {rng.choice(SUBJECTS)} {rng.choice(VERBS).split()[-1]} {rng.choice(PLACES)}?"


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, op: str, seconds: float, error: str | None) -> None:
        with self.lock:
            self.latencies[op].append(seconds)
            if error:
                self.errors[op].append(error)


def call(stats: Stats, op: str, api: httpx.Client, method: str, path: str, **kwargs: object) -> httpx.Response | None:
    t0 = time.perf_counter()
    try:
        res = api.request(method, path, **kwargs)  # type: ignore[arg-type]
    except httpx.HTTPError as exc:
        stats.record(op, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}")
        return None
    error = None if res.is_success else f"HTTP {res.status_code}: {res.text[:200]}"
    stats.record(op, time.perf_counter() - t0, error)
    return res


def uploader(api: httpx.Client, stats: Stats, stop: threading.Event, seed: int, pause: float) -> None:
    rng = random.Random(seed)
    i = 0
    while not stop.is_set():
        name, data, mime = make_file(rng, seed * 100_000 + i)
        i += 1
        call(stats, "upload", api, "POST", "/datasets/soak/documents", files=[("file", (name, data, mime))])
        stop.wait(pause)


def searcher(api: httpx.Client, stats: Stats, stop: threading.Event, seed: int) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        q = question(rng)
        roll = rng.random()
        if roll < 0.1:
            call(stats, "answer", api, "POST", "/answer", json={"question": q, "dataset_ids": ["soak"]})
        elif roll < 0.3:
            call(stats, "retrieval keyword", api, "POST", "/retrieval",
                 json={"question": q, "dataset_ids": ["soak"], "mode": "keyword"})
        elif roll < 0.35:
            call(stats, "list documents", api, "GET", "/datasets/soak/documents", params={"page_size": 50})
        else:
            call(stats, "retrieval hybrid", api, "POST", "/retrieval",
                 json={"question": q, "dataset_ids": ["soak"], "page_size": rng.choice([3, 6, 10])})


NESTED_HTML = b"<html><body>" + b"<div>" * 100_000 + b"x"
ONE_LINE = " ".join(f"w{i % 9973}" for i in range(1_200_000)).encode()  # ~8 MB without a line break
BIG_UPLOAD = b"A" * (100 * 1024 * 1024)


def sign_up_attacker(url: str) -> httpx.Client:
    """A user of their own workspace (open sign-up), with an API key made through their web session."""
    web = httpx.Client(base_url=url + "/api/v1", timeout=120)
    res = web.post("/auth/signup", json={"email": "mallory@example.test", "password": "correct horse battery",
                                         "name": "Mallory"})
    res.raise_for_status()
    csrf = res.json()["csrf_token"]
    key = web.post("/keys", json={"name": "attack"}, headers={"X-CSRF-Token": csrf})
    key.raise_for_status()
    api = httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {key.json()['key']}"},
                       timeout=300)
    api.post("/datasets", json={"name": "evil"}).raise_for_status()
    return api


def attacker(api: httpx.Client, stats: Stats, stop: threading.Event) -> None:
    """The worst inputs, one after another, as fast as the server answers them (status codes counted)."""
    steps = [
        ("attack: preview nested html", "POST", "/datasets/evil/chunking-preview",
         {"files": [("file", ("n.html", NESTED_HTML, "text/html"))]}),
        ("attack: preview one-line text", "POST", "/datasets/evil/chunking-preview",
         {"files": [("file", ("line.txt", ONE_LINE, "text/plain"))]}),
        ("attack: upload nested html", "POST", "/datasets/evil/documents",
         {"files": [("file", ("n.html", NESTED_HTML, "text/html"))]}),
        ("attack: provider test to metadata", "PUT", "/providers/chat",
         {"json": {"base_url": "http://169.254.169.254/latest", "model": "x"}}),
        ("attack: provider test to loopback", "PUT", "/providers/chat",
         {"json": {"base_url": "http://127.0.0.1:22/v1", "model": "x"}}),
        ("attack: upload 100 MiB", "POST", "/datasets/evil/documents",
         {"files": [("file", ("big.txt", BIG_UPLOAD, "text/plain"))]}),
    ]
    while not stop.is_set():
        for op, method, path, kwargs in steps:
            if stop.is_set():
                return
            call(stats, op, api, method, path, **kwargs)
            if "provider" in op:
                call(stats, op.replace("test to", "probe of"), api, "POST", "/providers/chat/test")
            for _ in range(50):  # a burst of malformed searches between the heavy calls
                call(stats, "attack: malformed retrieval", api, "POST", "/retrieval", json={"question": ""})


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children[int(fields[1])].append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def rss_mb(pid: int) -> float:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def is_worker(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def sampler(server_pid: int, samples: list[tuple[float, float, float, int]], stop: threading.Event,
            start: float, every: float) -> None:
    while not stop.wait(every):
        workers = [p for p in descendants(server_pid) if is_worker(p)]
        samples.append((time.monotonic() - start, rss_mb(server_pid), sum(rss_mb(p) for p in workers), len(workers)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def start_server(home: Path, port: int, workers: int) -> tuple[subprocess.Popen, str, str]:
    """Start ``ragloom serve``; returns the process, its URL and the admin API key it made (first-admin.txt)."""
    env = {**os.environ, "RAGLOOM_HOME": str(home), "RAGLOOM_PORT": str(port), "RAGLOOM_WORKERS": str(workers),
           "RAGLOOM_RATE_LIMIT_PER_MINUTE": "0", "RAGLOOM_LOG_LEVEL": "WARNING"}
    log = home.parent / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "ragloom.cli", "serve"], env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"the server stopped:\n{log.read_text()}")
        try:  # /health shows its workers to a caller with a key: the first administrator's
            credentials = home / "first-admin.txt"
            key = next(ln.split("=", 1)[1] for ln in credentials.read_text().splitlines() if ln.startswith("api_key="))
            health = httpx.get(url + "/api/v1/health", timeout=2, headers={"Authorization": f"Bearer {key}"}).json()
            if health["workers"]["alive"] >= workers:
                break
        except (httpx.HTTPError, OSError, StopIteration, KeyError):
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"the server did not become healthy:\n{log.read_text()}")
        time.sleep(0.3)
    return proc, url, key


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--uploaders", type=int, default=2)
    ap.add_argument("--searchers", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2, help="worker processes of the server")
    ap.add_argument("--seed-docs", type=int, default=30, help="documents ingested before the clock starts")
    ap.add_argument("--upload-pause", type=float, default=1.0, help="seconds each uploader waits between files")
    ap.add_argument("--sample-every", type=float, default=5.0)
    ap.add_argument("--attacker", action="store_true",
                    help="run the soak twice, the second time with one more user sending the worst inputs")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="ragloom-soak-") as tmp:
        home = Path(tmp) / "home"
        proc, url, key = start_server(home, free_port(), args.workers)
        api = httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {key}"}, timeout=120,
                           limits=httpx.Limits(max_connections=args.uploaders + args.searchers + 4))
        try:
            run(api, proc, args, url)
        finally:
            stop_server(proc)


def stop_server(proc: subprocess.Popen) -> None:
    """SIGTERM, and SIGKILL when the server has not stopped a minute later."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()


def run(api: httpx.Client, proc: subprocess.Popen, args: argparse.Namespace, url: str) -> None:
    res = api.post("/datasets", json={"name": "soak", "parser_config": {"chunk_token_num": 128}})
    res.raise_for_status()
    rng = random.Random(0)
    with console.status("seeding"):
        for i in range(args.seed_docs):
            name, data, mime = make_file(rng, i)
            api.post("/datasets/soak/documents", files=[("file", (name, data, mime))]).raise_for_status()
        wait_ingested(api, timeout=600)
    phases = [("baseline", None)]
    if args.attacker:
        phases.append(("attack", sign_up_attacker(url)))
    results = []
    for label, evil in phases:
        stats, samples, elapsed = soak(api, proc, args, label, evil)
        backlog_s = wait_ingested(api, timeout=600)
        report(stats, samples, elapsed, api, backlog_s, args, label)
        results.append((label, stats, samples))
    if args.attacker:
        compare(results)


def soak(api: httpx.Client, proc: subprocess.Popen, args: argparse.Namespace, label: str,
         evil: httpx.Client | None) -> tuple[Stats, list[tuple[float, float, float, int]], float]:
    stats = Stats()
    stop = threading.Event()
    samples: list[tuple[float, float, float, int]] = []
    start = time.monotonic()
    threads = [threading.Thread(target=sampler, args=(proc.pid, samples, stop, start, args.sample_every))]
    threads += [threading.Thread(target=uploader, args=(api, stats, stop, 1000 + i, args.upload_pause))
                for i in range(args.uploaders)]
    threads += [threading.Thread(target=searcher, args=(api, stats, stop, 2000 + i)) for i in range(args.searchers)]
    if evil is not None:
        threads.append(threading.Thread(target=attacker, args=(evil, stats, stop)))
    for t in threads:
        t.start()
    duration = args.minutes * 60
    with console.status(label) as status:
        while (elapsed := time.monotonic() - start) < duration:
            calls = sum(len(v) for v in stats.latencies.values())
            errors = sum(len(v) for v in stats.errors.values())
            status.update(f"{label}: {elapsed:.0f}/{duration:.0f} s, {calls} calls, {errors} errors")
            time.sleep(1)
    stop.set()
    for t in threads:
        t.join(180)
    return stats, samples, time.monotonic() - start


def compare(results: list[tuple[str, Stats, list[tuple[float, float, float, int]]]]) -> None:
    """The others' latencies without and with the attacker, and the ratio."""
    (_, base, base_mem), (_, attack, attack_mem) = results
    table = Table(title="the other users, without and with the attacker")
    for col in ("operation", "p50 ms", "p50 ms attacked", "p50 x", "p95 ms", "p95 ms attacked", "p95 x",
                "errors attacked"):
        table.add_column(col, justify="left" if col == "operation" else "right")
    for op in sorted(o for o in base.latencies if not o.startswith("attack")):
        a, b = base.latencies[op], attack.latencies.get(op, [])
        p = [percentile(x, q) * 1000 for x in (a, b) for q in (0.5, 0.95)]
        table.add_row(op, f"{p[0]:.0f}", f"{p[2]:.0f}", f"{p[2] / p[0]:.2f}", f"{p[1]:.0f}", f"{p[3]:.0f}",
                      f"{p[3] / p[1]:.2f}", str(len(attack.errors.get(op, []))))
    console.print(table)
    peak = [max((s[1] for s in m), default=0.0) for m in (base_mem, attack_mem)]
    console.print(f"server peak resident memory: {peak[0]:.0f} MiB without, {peak[1]:.0f} MiB with the attacker")


def wait_ingested(api: httpx.Client, timeout: float) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        docs = api.get("/datasets/soak/documents", params={"page_size": 1000}).json()
        if all(d["status"] not in ("queued", "running") for d in docs["documents"]):
            break
        time.sleep(1)
    return time.monotonic() - t0


def report(stats: Stats, samples: list[tuple[float, float, float, int]], elapsed: float, api: httpx.Client,
           backlog_s: float, args: argparse.Namespace, label: str = "soak") -> None:
    table = Table(title=f"{label}: {elapsed:.0f} s, {args.uploaders} uploaders, {args.searchers} searchers, "
                        f"{args.workers} workers")
    for col in ("operation", "calls", "calls/s", "p50 ms", "p95 ms", "p99 ms", "errors"):
        table.add_column(col, justify="left" if col == "operation" else "right")
    for op in sorted(stats.latencies):
        lat = stats.latencies[op]
        table.add_row(op, str(len(lat)), f"{len(lat) / elapsed:.2f}", *(f"{percentile(lat, q) * 1000:.0f}"
                      for q in (0.5, 0.95, 0.99)), str(len(stats.errors.get(op, []))))
    console.print(table)
    for op, errs in stats.errors.items():
        if op.startswith("attack"):  # refused on purpose: how, counted by status
            codes: dict[str, int] = defaultdict(int)
            for e in errs:
                codes[e.split(":", 1)[0]] += 1
            console.print(f"{op}: " + ", ".join(f"{n} x {c}" for c, n in sorted(codes.items())))
            continue
        for e in sorted(set(errs))[:5]:
            console.print(f"[red]{op}[/]: {e}")
    mem = Table(title="resident memory (MiB)")
    for col in ("t s", "server", "workers (sum)", "workers"):
        mem.add_column(col, justify="right")
    step = max(1, len(samples) // 12)
    for t, server, workers, n in samples[::step]:
        mem.add_row(f"{t:.0f}", f"{server:.0f}", f"{workers:.0f}", str(n))
    console.print(mem)
    if len(samples) >= 6:
        third = len(samples) // 3
        first = samples[:third]
        last = samples[-third:]
        for label, idx in (("server", 1), ("workers", 2)):
            a = statistics.mean(s[idx] for s in first)
            b = statistics.mean(s[idx] for s in last)
            console.print(f"{label} memory: first third {a:.0f} MiB, last third {b:.0f} MiB ({b - a:+.0f} MiB)")
    docs = api.get("/datasets/soak/documents", params={"page_size": 1000}).json()
    by_status: dict[str, int] = defaultdict(int)
    for d in docs["documents"]:
        by_status[d["status"]] += 1
    console.print(f"documents: {dict(by_status)} (total {docs['total']}); ingestion backlog drained "
                  f"{backlog_s:.0f} s after the clock stopped")
    health = api.get("/health").json()
    console.print(f"health at the end: {health['status']}, workers {health['workers']}")


if __name__ == "__main__":
    main()
