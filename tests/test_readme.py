"""The README is a contract: every shell example in it runs as shown.

The ```sh blocks are read from README.md and their commands run for real through ``bash``, in
README order, in one temporary ``RAGLOOM_HOME``, from a temporary working directory laid out as a
clone's root: a ``.venv`` link to this checkout's environment and a ``src`` link to this checkout's
``src`` (so the shipped samples are at ``src/ragloom/samples/``, where the README names them). The
environment's ``bin`` is *not* on ``PATH``: a user of a fresh clone has no ``ragloom`` there, so
every command must say ``.venv/bin/ragloom`` as the README does. Only what must be is substituted:
the data directory, the server's URL and API key, the chat endpoint (the fake OpenAI-compatible
server of ``tests/fakes``), placeholders of optional arguments (``[KB]``: run once without and once
with them). Nothing the commands name is made by the test: the files are the shipped samples, and
the knowledge bases and assistants are the ones earlier README commands create. A command fails the
test when it exits non-zero or prints a traceback; the message shows the block, the command and its
output. A command that bash would only start — ``[NAME=value ...] .venv/bin/ragloom ARGS``, nothing to
expand, redirect or pipe — runs with bash's words through ``tests/cli.py``: the same entry point, in this
process (one process start-up saved per command: the test took 200 s, now 50); the rest run with bash,
and ``RAGLOOM_TEST_CLI=process`` runs every one with bash.

Not run, with the reason next to them: ``make run`` / ``make test`` (set up the environment, serve
forever / run the whole suite including this test: only ``make -n`` checks their targets) and the
benchmarks (minutes each: only their existence and ``--help``), and the deployment blocks that
``export`` an S3 bucket or a PostgreSQL database (they need those services, which the README has the
reader start; ``tests/test_two_machines.py`` runs that setup: here only the files they name are
checked to exist). ``json``/``toml``/``text`` blocks are not commands.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests import cli
from tests.fakes.openai_server import FakeOpenAIServer
from tests.processes import admin_key, alive, descendants, served, wait
from tests.shared import child_environment
from tests.sources.sites import web_site

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RAGLOOM = ".venv/bin/ragloom"  # how the README runs ragloom: from the clone's root, no activation
TRACEBACK = "Traceback (most recent call last)"

# Values for the upper-case placeholders inside optional arguments, e.g. `ragloom reindex [KB]`.
PLACEHOLDERS = {"KB": "manuals", "SECONDS": "0", "N": "2"}
# The folders a folder source may read, set for the one command that reads them (README's Sources section).
ROOTS = re.compile(r"^RAGLOOM_SOURCE_ROOTS=\S+ ")
# A command bash would only start, with its variables: `[NAME=value ...] .venv/bin/ragloom ARGS`.
COMMAND = re.compile(r"((?:[A-Z][A-Z0-9_]*=[^\s'\"]+ +)*)\.venv/bin/ragloom +(.+)", re.S)
# What the README shows as the server's address and the chat endpoint (substituted by the test's).
README_URL = "http://127.0.0.1:9380"
README_CHAT_URL = "http://127.0.0.1:11434/v1"
README_SITE_URL = "https://intranet.example.com/"  # the web source's site: a site of the shipped samples on loopback
SERVICING_REPLY = "The Orion pump must be serviced every 450 operating hours [ID:0]."
# The embedding engine's OpenMP threads spin while they wait: on a busy machine (the suite runs in
# parallel) that makes `ragloom eval` 5-10 times slower. Sleeping instead changes nothing else.
QUIET_THREADS = {"OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}


@dataclass(frozen=True)
class Block:
    section: str
    code: str

    def commands(self) -> list[str]:
        """The block's commands: one a line (``\\`` continuations joined), blank lines left out."""
        return [line for line in self.code.replace("\\\n", " ").splitlines() if line.strip()]


def sh_blocks(text: str | None = None) -> list[Block]:
    text = README.read_text() if text is None else text
    blocks, section = [], ""
    for match in re.finditer(r"^(#{1,6} [^\n]*)$|^```(\w*)\n(.*?)^```", text, re.M | re.S):
        if match.group(1):
            section = match.group(1).lstrip("#").strip()
        elif match.group(2) in ("sh", "bash", "shell", "console"):
            blocks.append(Block(section, match.group(3)))
    return blocks


def unquoted(command: str) -> list[bool]:
    """For each character of ``command``: whether it is outside single and double quotes."""
    quote, out = "", []
    for char in command:
        if quote:
            out.append(False)
            quote = "" if char == quote else quote
        else:
            out.append(char not in "'\"")
            quote = char if char in "'\"" else ""
    return out


def split_comment(command: str) -> tuple[str, str]:
    """``(code, comment)``: the comment starts at a ``#`` after whitespace outside quotes."""
    outside = unquoted(command)
    for i, char in enumerate(command):
        if char == "#" and outside[i] and (i == 0 or command[i - 1].isspace()):
            return command[:i].rstrip(), command[i:]
    return command.rstrip(), ""


def variants(command: str) -> list[str]:
    """A command with ``[optional]`` arguments as two commands: without them, and with all of them
    (upper-case placeholders in them replaced from PLACEHOLDERS)."""
    code, _ = split_comment(command)
    outside = unquoted(code)
    groups = [m for m in re.finditer(r"(?<=\s)\[([^\]'\"]+)\]", code) if outside[m.start()]]
    if not groups:
        return [code]

    def fill(match: re.Match[str]) -> str:
        words = []
        for word in match.group(1).split():
            if re.fullmatch(r"[A-Z][A-Z_]*", word):
                assert word in PLACEHOLDERS, f"README placeholder {word!r} in {command!r}: add it to PLACEHOLDERS"
                word = PLACEHOLDERS[word]
            words.append(word)
        return " ".join(words)

    def substitute(replace: Callable[[re.Match[str]], str]) -> str:
        out, end = "", 0
        for m in groups:
            out, end = out + code[end:m.start()] + replace(m), m.end()
        return re.sub(r"\s+", " ", out + code[end:]).strip()

    return [substitute(lambda m: ""), substitute(fill)]


def is_make(command: str) -> bool:
    return split_comment(command)[0].split()[:1] == ["make"]


def is_benchmark(command: str) -> bool:
    return "benchmarks/" in split_comment(command)[0]


def is_deployment(block: Block) -> bool:
    """A block that moves the stores to an S3 service or PostgreSQL (``export RAGLOOM_S3_*`` etc.)."""
    return bool(re.search(r"^export RAGLOOM_(OBJECT_STORE|S3_|DATABASE_URL|DOCSTORE)", block.code, re.M))


class Shell:
    """Runs README commands with ``bash`` in a working directory, as a user would type them."""

    def __init__(self, cwd: Path, home: Path, **env: str) -> None:
        self.cwd = cwd
        cwd.mkdir(parents=True, exist_ok=True)
        for name in (".venv", "src"):  # `.venv/bin/ragloom` and `src/ragloom/samples/` as in a clone
            if not (cwd / name).exists():
                (cwd / name).symlink_to(ROOT / name)
        base = child_environment()
        venv_bin = str(ROOT / ".venv" / "bin")  # not on PATH in a fresh clone: neither here
        path = os.pathsep.join(p for p in base.get("PATH", "").split(os.pathsep)
                               if p and os.path.realpath(p) != os.path.realpath(venv_bin))
        self.env = {**base, "PATH": path, "RAGLOOM_HOME": str(home), **QUIET_THREADS, **env}

    def run(self, command: str, block: Block | None = None, *, timeout: float = 600, process: bool = False,
            **env: str) -> subprocess.CompletedProcess[str]:
        """``command`` as bash runs it; one that bash would only start (:func:`ragloom_command`) runs
        through ``tests/cli.py`` instead — in this process unless ``process`` or ``RAGLOOM_TEST_CLI=process``."""
        direct = None if process or cli.CHILD_PROCESSES else ragloom_command(command)
        if direct is not None:
            variables, args = direct
            assert (self.cwd / RAGLOOM).exists(), f"{RAGLOOM} is missing"
            settings = {k: v for k, v in {**self.env, **env, **variables}.items()
                        if k.startswith("RAGLOOM_") or k in QUIET_THREADS}
            proc = cli.run(args, settings=settings, cwd=self.cwd, timeout=timeout)
        else:
            proc = subprocess.run(["bash", "-c", command], cwd=self.cwd, env={**self.env, **env},
                                  capture_output=True, text=True, timeout=timeout)
        where = f"README block in {block.section!r}:\n{block.code}\n" if block else ""
        report = (f"{where}command: {command}\nexit status: {proc.returncode}\n"
                  f"--- stdout ---\n{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-6000:]}")
        if proc.returncode != 0 or TRACEBACK in proc.stdout + proc.stderr:
            pytest.fail(report, pytrace=False)
        return proc


def ragloom_command(command: str) -> tuple[dict[str, str], list[str]] | None:
    """A command bash would only start: ``[NAME=value ...] .venv/bin/ragloom ARGS`` with nothing for the
    shell to do but split words (no expansion, redirection, pipe, list or glob); its variables and
    arguments, else ``None``."""
    command = split_comment(command)[0]
    match = COMMAND.fullmatch(command.strip())
    if match is None or any(char in "$`\\\n" for char in command):
        return None
    if any(outside and char in "|&;<>*?~(){}[]#" for char, outside in zip(command, unquoted(command), strict=True)):
        return None
    variables = dict(word.split("=", 1) for word in match.group(1).split())
    return variables, shlex.split(match.group(2))


def json_out(proc: subprocess.CompletedProcess[str]) -> dict:
    value = json.loads(proc.stdout)
    assert isinstance(value, dict), proc.stdout
    return value


def check_scope(command: str, output: str) -> None:
    """A `chat support` command of the README does what its comment says: asks for the scope (the
    clarifying question quoted), answers from one manual only, or names the gap (quoted)."""
    comment = split_comment(command)[1]
    if asked := re.search(r"# asks: (.+?) \.\.\.", comment):
        assert asked.group(1) in output, (command, output)
    elif only := re.search(r"# answers from (\S+) only", comment):
        cited = re.findall(r"^\s+\[ID:\d+\] (\S+)", output, re.M)
        assert cited and set(cited) == {only.group(1)}, (command, output)
    elif gap := re.search(r"# (There is no document for .+?) \.\.\.", comment):
        assert gap.group(1) in output, (command, output)


def servicing_found(search: dict) -> bool:
    """The README's search finds the manual's servicing interval among its chunks (on the whole
    sample folder the service bulletin, which speaks of "the next service", may come first)."""
    return any("450 operating hours" in c["content"] and c["document_name"] == "orion-manual.pdf"
               for c in search["chunks"])


def block_with(blocks: list[Block], needle: str) -> Block:
    found = [b for b in blocks if needle in b.code]
    assert found, f"no README sh block contains {needle!r}"
    return found[0]


def command_with(blocks: list[Block], needle: str) -> str:
    found = [c for b in blocks for c in b.commands() if needle in c]
    assert found, f"no README command contains {needle!r}"
    return split_comment(found[0])[0]


# ---------------------------------------------------------------------------------------------- parsing


def test_every_readme_command_is_run_or_skipped_with_a_reason() -> None:
    blocks = sh_blocks()
    commands = [c for b in blocks for c in b.commands()]
    assert len(blocks) >= 5 and len(commands) >= 25, blocks
    for command in commands:
        code = ROOTS.sub("", split_comment(command)[0])  # the Sources section's folder roots, for one command
        assert code.startswith((f"{RAGLOOM} ", "make ", "export RAGLOOM_", ".venv/bin/python ")), (
            f"README command {command!r} is neither run nor skipped by tests/test_readme.py: teach it "
            f"(a bare `ragloom` is not on a fresh clone's PATH: the README says `{RAGLOOM}`)")
    assert variants("ragloom reindex [KB] [--drop]   # x") == ["ragloom reindex", "ragloom reindex manuals --drop"]
    assert variants("ragloom search \"a [b]\" --json") == ["ragloom search \"a [b]\" --json"]
    assert split_comment("ragloom search m \"a # b\"  # why") == ("ragloom search m \"a # b\"", "# why")


# ---------------------------------------------------------------------------------------------- make and benchmarks


def test_make_targets_exist() -> None:
    """`make run` serves until stopped and `make test` runs the whole suite (this test too): neither
    can run inside a test. `make -n` checks that both targets exist and would run."""
    commands = [split_comment(c)[0] for b in sh_blocks() for c in b.commands() if is_make(c)]
    assert commands, "the README shows no make command"
    for command in commands:
        proc = subprocess.run([*shlex.split(command), "-n"], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
    run = subprocess.run(["make", "-n", "run"], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    assert "ragloom serve" in run, run


@pytest.mark.slow
def test_benchmark_scripts_exist_and_answer_help() -> None:
    """The benchmarks take minutes each (and `soak.py` a live server for minutes): not run here,
    only checked to exist and to accept `--help`."""
    commands = [split_comment(c)[0] for b in sh_blocks() for c in b.commands() if is_benchmark(c)]
    assert commands, "the README shows no benchmark"
    for command in commands:
        argv = shlex.split(command)
        script = next(a for a in argv if a.startswith("benchmarks/"))
        assert (ROOT / script).is_file(), f"README names {script}, which does not exist"
        proc = subprocess.run([str(ROOT / argv[0]), script, "--help"], cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0 and TRACEBACK not in proc.stderr, (command, proc.stdout, proc.stderr)


def test_deployment_blocks_name_files_that_exist() -> None:
    """The S3 and PostgreSQL blocks are not run (they need those services), and are the only
    blocks with an `export` besides the chat model's; the files they name are in a clone."""
    blocks = sh_blocks()
    deployment = [b for b in blocks if is_deployment(b)]
    assert deployment, "the README shows no S3 or PostgreSQL block"
    exporting = [b for b in blocks if "export " in b.code and not is_deployment(b)]
    assert len(exporting) == 1 and "export RAGLOOM_CHAT_BASE_URL" in exporting[0].code, exporting
    for block in deployment:
        for command in block.commands():
            for word in shlex.split(split_comment(command)[0]):
                if word.startswith(("src/", "./")):
                    assert (ROOT / word).exists(), f"README block in {block.section!r} names {word}: not in a clone"


# ---------------------------------------------------------------------------------------------- local mode


@pytest.mark.slow
def test_readme_commands_run_on_a_data_directory(tmp_path: Path) -> None:
    """Every `ragloom` command of the README, in README order, on one data directory, on the shipped
    samples; then the chat-model `export` block with the fake OpenAI-compatible server."""
    blocks = sh_blocks()
    work, home = tmp_path / "work", tmp_path / "home"
    shell = Shell(work, home, RAGLOOM_OUTBOUND_ALLOW="127.0.0.1/32")  # the web source's site on loopback
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(ROOT / "src/ragloom/samples/hr-leave.html", site / "hr-leave.html")
    (site / "index.html").write_text('<html><head><title>Intranet</title></head><body><h1>Intranet</h1>'
                                     '<a href="hr-leave.html">Leave</a></body></html>')

    ran: list[str] = []
    synced: list[str] = []  # the Sources section's syncs of a folder
    with web_site(site) as server:
        _run_local_blocks(shell, blocks, ran, synced, site_url=server.url + "/")
    assert any(" add manuals src/ragloom/samples/" in c for c in ran) and any("--explain" in c for c in ran), ran
    # the folder kept in sync, as the comments say: three new documents, then three unchanged ones not read
    assert len(synced) == 2 and " 3 new," in synced[0] and " 3 unchanged," in synced[1], synced
    _after_local_blocks(shell, blocks, work)


def _run_local_blocks(shell: Shell, blocks: list[Block], ran: list[str], synced: list[str], *, site_url: str) -> None:
    hidden_checked = False
    for block in blocks:
        if "export RAGLOOM_CHAT_" in block.code:
            continue  # the chat model block, below
        if is_deployment(block):
            continue  # an S3 service or PostgreSQL: see test_deployment_blocks_name_files_that_exist
        for command in block.commands():
            if is_make(command) or is_benchmark(command):
                continue  # see test_make_targets_exist and test_benchmark_scripts_exist_and_answer_help
            for variant in variants(command):
                proc = shell.run(variant.replace(README_SITE_URL, site_url), block)
                ran.append(variant)
                if " search manuals " in variant and "--top-n 6 --json" in variant:
                    assert servicing_found(json_out(proc)), proc.stdout
                if " ask manuals " in variant and "--json" in variant:
                    reply = json_out(proc)
                    assert reply["model"] == "extractive", proc.stdout  # as the README says
                    assert "450 operating hours" in reply["answer"], proc.stdout
                if " chat support " in variant:  # the after-sales assistant's scope, as its comments say
                    check_scope(command, proc.stdout)
                if " sources sync handbook samples" in variant:
                    synced.append(proc.stdout)
                if " sources sync handbook travel" in variant:
                    assert " 1 new," in proc.stdout, proc.stdout
                if " sources sync intranet " in variant:  # the home page and the page it links to
                    assert " 2 new," in proc.stdout, proc.stdout
                if " reindex" in variant:  # it reports what it rebuilt, and how fast
                    assert re.search(r"Re-parsed\s+\d+\s+documents\s+in\s+\d+\s+knowledge\s+bases:\s+[\d,]+\s+chunks"
                                     r"\s+in\s+[\d.,]+\s+s", proc.stdout), proc.stdout
                if " search intranet " in variant:  # the leave page, first
                    assert "hr-leave.html" in proc.stdout.splitlines()[2], proc.stdout
                if variant.endswith(" docs handbook") and any("--source-permissions" in c for c in ran):
                    # source permissions: the admin is not in the finance group that reads the travel policy
                    assert "travel-policy.docx" not in proc.stdout and "hr-leave.html" in proc.stdout, proc.stdout
                    hidden_checked = True
    assert hidden_checked, "the README no longer lists the handbook with source permissions"


def _after_local_blocks(shell: Shell, blocks: list[Block], work: Path) -> None:
    docs = json_out(shell.run(f"{RAGLOOM} docs manuals --json"))["documents"]
    assert docs and all(d["status"] == "done" for d in docs), docs
    # `reindex manuals --drop` dropped the whole index: the knowledge bases it did not name are back too
    found = json_out(shell.run(f"{RAGLOOM} search hr 'parental leave' --json"))["chunks"]
    assert found and "sixteen weeks" in found[0]["content"], found
    assert (work / "eval.png").stat().st_size > 0  # `ragloom eval builtin:en --plot eval.png`
    assert not (work / ".ragloom").exists(), "a command used ./.ragloom instead of RAGLOOM_HOME"

    # "To use an LLM, set an OpenAI-compatible endpoint": the export, then the README's `ask`
    export = block_with(blocks, "export RAGLOOM_CHAT_BASE_URL")
    ask = command_with(blocks, "ragloom ask manuals")
    with FakeOpenAIServer(default_reply=SERVICING_REPLY) as fake:
        code = split_comment(export.code.strip())[0].replace(README_CHAT_URL, fake.base_url)
        code = code.replace("RAGLOOM_CHAT_API_KEY=...", "RAGLOOM_CHAT_API_KEY=test-key")
        answer = json_out(shell.run(f"{code}\n{ask}", export))
        chats = [r for r in fake.requests if r.path.startswith("/v1/chat/completions")]
    assert chats and chats[-1].body["model"] == "qwen2.5", fake.requests
    assert chats[-1].headers.get("Authorization") == "Bearer test-key"
    assert answer["model"] != "extractive" and "450" in json.dumps(answer), answer


# ---------------------------------------------------------------------------------------------- against a server


@pytest.mark.slow
def test_readme_commands_run_against_a_server(tmp_path: Path) -> None:
    """"Against a running server, put `--url http://127.0.0.1:9380 --api-key <key>` before the
    command (`ragloom --url http://127.0.0.1:9380 --api-key <key> docs manuals`), or set `RAGLOOM_URL`
    and `RAGLOOM_API_KEY`. `ragloom keys create` makes another key; `ragloom worker [--processes N]`
    runs more supervised ingestion workers": the "Using it" block so, then the rest of that paragraph."""
    readme = README.read_text()
    remote = re.search(r"put `(--url \S+ --api-key <key>)` before the command\s+\(`(ragloom [^`]+)`\)", readme)
    assert remote, "the README no longer says how to reach a server"
    using_it = block_with(sh_blocks(), ".venv/bin/ragloom kb create manuals")
    work, home = tmp_path / "work", tmp_path / "server-home"
    with served(home, **QUIET_THREADS) as (_, url):
        key = admin_key(home, url)
        shell = Shell(work, tmp_path / "client-home")  # the client's own data directory stays unused
        flags = remote.group(1).replace(README_URL, url).replace("<key>", key)
        for command in using_it.commands():
            program, rest = command.split(" ", 1)
            proc = shell.run(f"{program} {flags} {rest}", using_it)
            if " ask " in rest:
                reply = json_out(proc)
                assert reply["model"] == "extractive" and "450 operating hours" in reply["answer"], proc.stdout
        example = remote.group(2).replace(README_URL, url).replace("<key>", key)
        # prose says `ragloom`; this one in a process of its own, as bash starts it
        assert "orion-manual.pdf" in shell.run(f".venv/bin/{example}", process=True).stdout
        assert not (tmp_path / "client-home").exists(), "a command with --url used the local data directory"

        # the same with RAGLOOM_URL and RAGLOOM_API_KEY; `keys create` on the server's data directory
        prose = " ".join(readme.split())
        assert "`RAGLOOM_URL` and `RAGLOOM_API_KEY`" in prose and "`ragloom keys create`" in prose
        created = json_out(shell.run(f"{RAGLOOM} keys create --json", RAGLOOM_HOME=str(home)))
        new_key = created["api_key"]
        search = command_with([using_it], "ragloom search")
        found = json_out(shell.run(search, using_it, RAGLOOM_URL=url, RAGLOOM_API_KEY=new_key))
        assert servicing_found(found), found

        # `ragloom worker [--processes N]`: more workers on the same data directory, stopped by SIGTERM
        worker_command = re.search(r"`(ragloom worker \[--processes N\])`", prose)
        assert worker_command, "the README no longer shows `ragloom worker [--processes N]`"
        shown = {"Authorization": f"Bearer {key}"}  # /health shows its workers to a caller with a key
        before = httpx.get(url + "/api/v1/health", timeout=5, headers=shown).json()["workers"]["alive"]
        for variant in variants(worker_command.group(1)):
            n = int(PLACEHOLDERS["N"]) if "--processes" in variant else 1
            log = tmp_path / "worker.log"
            with log.open("w") as out:
                worker = subprocess.Popen(["bash", "-c", f"exec .venv/bin/{variant}"], cwd=work, stdout=out,
                                          stderr=subprocess.STDOUT, env={**shell.env, "RAGLOOM_HOME": str(home)})
            try:
                wait(lambda n=n: httpx.get(url + "/api/v1/health", timeout=5,
                                           headers=shown).json()["workers"]["alive"] >= before + n,
                     60, f"{variant}'s workers in /health")
                children = descendants(worker.pid)
                worker.send_signal(signal.SIGTERM)
                status = worker.wait(60)
            finally:
                if worker.poll() is None:
                    for pid in descendants(worker.pid):
                        os.kill(pid, signal.SIGKILL)
                    worker.kill()
                    worker.wait(10)
            output = log.read_text()
            assert status == 0 and TRACEBACK not in output, f"{variant}: exit {status}\n{output}"
            wait(lambda c=children: not [p for p in c if alive(p)], 10, f"{variant}'s workers to stop")


def test_the_parser_sees_sections_and_commands() -> None:
    text = "# T\n\n## Using it\n\n```sh\na \\\n  b\n\nc  # x\n```\n\n```toml\nk = 1\n```\n"
    (block,) = sh_blocks(text)
    assert block.section == "Using it" and block.commands() == ["a    b", "c  # x"]


def test_a_command_bash_would_only_start_is_told_from_one_it_would_run() -> None:
    assert ragloom_command(".venv/bin/ragloom docs meta d a.pdf 'firmware=>=2.0,<3'  # why") == (
        {}, ["docs", "meta", "d", "a.pdf", "firmware=>=2.0,<3"])
    assert ragloom_command("RAGLOOM_SOURCE_ROOTS=src/x .venv/bin/ragloom sources sync h s") == (
        {"RAGLOOM_SOURCE_ROOTS": "src/x"}, ["sources", "sync", "h", "s"])
    for shell_work in (".venv/bin/ragloom docs m > out.txt", ".venv/bin/ragloom docs $KB",
                       ".venv/bin/ragloom add m src/*.pdf", "export A=1\n.venv/bin/ragloom docs m",
                       ".venv/bin/ragloom docs m && .venv/bin/ragloom kb list", "ragloom docs m"):
        assert ragloom_command(shell_work) is None, shell_work
