"""The imap connector against a real dovecot on loopback (skipped without it): messages put in by IMAP
APPEND are listed with their folder/UIDVALIDITY/UID ids, names made of their subjects, sender, thread and
owner, nothing marked read; a message read this way parses with its attachment (ragloom's .eml parser);
a sync makes them documents; a wrong password is named without being shown; and settings are checked."""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage

import pytest

from ragloom.context import Context, Principal
from ragloom.errors import InvalidRequestError
from ragloom.ingest.connectors import ConnectorSpec, SourceError, open_connector
from ragloom.ingest.connectors.imap import encode_folder, file_name
from ragloom.ingest.parsers import parse_document
from tests.sources.helpers import add_source, documents, make_kb, sync
from tests.sources.mailserver import (
    PASSWORD,
    USER,
    UTF8_PASSWORD,
    UTF8_USER,
    MailServer,
    mail_server,
    needs_dovecot,
)

LOOPBACK = ("127.0.0.1/32",)
KEYS = {"username": USER, "password": PASSWORD}


@pytest.fixture(scope="module")
def mail() -> Iterator[MailServer]:
    with mail_server() as server:
        yield server


def message(subject: str, body: str, *, message_id: str, references: str = "",
            attachment: tuple[str, str] | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Carol Ng <carol@example.com>"
    msg["To"] = USER
    msg["Subject"] = subject
    msg["Date"] = "Mon, 05 Jan 2026 10:00:00 +0000"
    msg["Message-ID"] = message_id
    if references:
        msg["In-Reply-To"] = references.split()[-1]
        msg["References"] = references
    msg.set_content(body)
    if attachment is not None:
        msg.add_attachment(attachment[1].encode(), maintype="text", subtype="csv", filename=attachment[0])
    return bytes(msg)


def connector(mail: MailServer, folders: list[str], **extra: object) -> object:
    return open_connector("imap", ConnectorSpec(
        settings={"host": mail.host, "port": mail.port, "ssl": False, "folders": folders},
        credentials=extra.pop("credentials", KEYS), outbound_allow=LOOPBACK, **extra))  # type: ignore[arg-type]


@needs_dovecot
def test_messages_listed_read_and_parsed_with_their_attachment(mail: MailServer) -> None:
    mail.append("Support", message("Pump failure: seals?", "The pump leaks at the seal.\n",
                                   message_id="<root@example.com>"))
    mail.append("Support", message("Re: Pump failure: seals?", "Order the seals in the sheet.\n",
                                   message_id="<reply@example.com>", references="<root@example.com>",
                                   attachment=("seals.csv", "part,price\nSeal 12mm,40\n")))
    mail.append("Archive", message("Old note", "Nothing here.\n", message_id="<old@example.com>"))
    made = connector(mail, ["Support", "Archive"])
    try:
        items = list(made.list_items())  # type: ignore[attr-defined]
        assert [i.title for i in items] == ["Pump failure: seals?", "Re: Pump failure: seals?", "Old note"]
        root, reply, _ = items
        folder, validity, uid = reply.id.rsplit("/", 2)
        assert folder == "Support" and validity.isdigit() and uid == "2"
        assert reply.token == f"{reply.id}/{reply.size}" and reply.name == "Re_ Pump failure_ seals.eml"
        assert reply.path == "Support/Re_ Pump failure_ seals.eml"
        assert reply.url == f"imap://127.0.0.1:{mail.port}/Support;UIDVALIDITY={validity}/;UID=2"
        assert reply.metadata["thread"] == root.metadata["thread"] == "<root@example.com>"
        assert reply.metadata["from"] == "Carol Ng <carol@example.com>"
        assert reply.metadata["message_id"] == "<reply@example.com>"
        assert reply.principals == ("user:alice@example.com",)
        raw = b"".join(made.read(reply))  # type: ignore[attr-defined]
        assert len(raw) == reply.size
        doc = parse_document(raw, reply.name)
        assert doc.title == "Re: Pump failure: seals?"
        texts = " ".join(b.text for b in doc.blocks)
        assert "Order the seals in the sheet." in texts and "Seal 12mm" in texts
        assert any(b.meta.get("attachment") == "seals.csv" for b in doc.blocks)
        assert made.check().endswith("Support: 2 messages, Archive: 1 messages")  # type: ignore[attr-defined]
    finally:
        made.close()  # type: ignore[attr-defined]
    conn = mail.client()
    try:
        conn.select('"Support"', readonly=True)
        assert conn.uid("SEARCH", "UNSEEN")[1][0].split() == [b"1", b"2"]  # nothing was marked read
    finally:
        conn.logout()


@needs_dovecot
def test_reads_between_the_batches_of_a_listing(mail: MailServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync reads each item as it is listed: a read of another folder between two batches of a folder's
    listing must not make the next batch fetch the wrong folder's messages."""
    from ragloom.ingest.connectors import imap

    for n in range(3):
        mail.append("Left", message(f"Left {n}", f"left {n}\n", message_id=f"<l{n}@example.com>"))
        mail.append("Right", message(f"Right {n}", f"right {n}\n", message_id=f"<r{n}@example.com>"))
    monkeypatch.setattr(imap, "FETCH_BATCH", 1)
    made = connector(mail, ["Left", "Right"])
    try:
        seen, bodies = [], {}
        for item in made.list_items():  # type: ignore[attr-defined]
            seen.append(item)
            bodies[item.title] = b"".join(made.read(item))  # type: ignore[attr-defined]
            assert b"left 0" in b"".join(made.read(seen[0]))  # type: ignore[attr-defined]  # the first folder
    finally:
        made.close()  # type: ignore[attr-defined]
    assert [i.title for i in seen] == [f"Left {n}" for n in range(3)] + [f"Right {n}" for n in range(3)]
    assert all(f"{title.split()[0].lower()} {title.split()[1]}".encode() in body for title, body in bodies.items())


@needs_dovecot
def test_a_mailbox_synced(ctx: Context, principal: Principal, mail: MailServer) -> None:
    mail.append("Synced", message("Valve colour", "The valve is blue.\n", message_id="<v1@example.com>"))
    mail.append("Synced", message("Valve colour", "Correction: green.\n", message_id="<v2@example.com>"))
    kb = make_kb(ctx, principal)
    source = add_source(ctx, principal, kb, type="imap", credentials=KEYS,
                        settings={"host": mail.host, "port": mail.port, "ssl": False, "folders": ["Synced"]})
    first = sync(ctx, principal, kb, source)
    assert (first.stats["listed"], first.stats["new"]) == (2, 2), first.message
    docs = documents(ctx, kb)
    assert len(docs) == 2 and all(n.startswith("Valve colour") and n.endswith(".eml") for n in docs)
    mail.delete("Synced", "Valve colour")
    assert sync(ctx, principal, kb, source).stats["deleted"] == 2


@needs_dovecot
def test_a_wrong_password_and_a_missing_folder_are_named(mail: MailServer) -> None:
    # the folder first: after a failed login dovecot makes the next logins from the address wait (auth penalty)
    missing = connector(mail, ["No such folder"])
    try:
        with pytest.raises(SourceError, match="cannot open the folder 'No such folder'"):
            list(missing.list_items())  # type: ignore[attr-defined]
    finally:
        missing.close()  # type: ignore[attr-defined]
    utf8 = connector(mail, ["INBOX"], credentials={"username": UTF8_USER, "password": UTF8_PASSWORD})
    try:
        assert utf8.check().endswith("INBOX: 0 messages")  # type: ignore[attr-defined]
    finally:
        utf8.close()  # type: ignore[attr-defined]
    wrong = connector(mail, ["INBOX"], credentials={"username": USER, "password": "not-the-password"})
    try:
        with pytest.raises(SourceError, match="refused the user name and password") as refused:
            wrong.check()  # type: ignore[attr-defined]
        assert "not-the-password" not in refused.value.message and USER not in refused.value.message
    finally:
        wrong.close()  # type: ignore[attr-defined]


def test_settings_are_checked() -> None:
    base = {"host": "127.0.0.1", "ssl": False}
    for settings, named in (({"ssl": False}, "settings.host is required"),
                            ({**base, "host": "a b"}, "settings.host"),
                            ({**base, "port": 70000}, "settings.port"),
                            ({**base, "folders": []}, "settings.folders"),
                            ({**base, "ssl": "yes"}, "settings.ssl must be bool")):
        with pytest.raises(InvalidRequestError, match=named):
            open_connector("imap", ConnectorSpec(settings=settings, credentials=KEYS, outbound_allow=LOOPBACK))
    with pytest.raises(InvalidRequestError, match="needs username and password"):
        open_connector("imap", ConnectorSpec(settings=base, credentials={"username": USER}, outbound_allow=LOOPBACK))
    with pytest.raises(InvalidRequestError, match="loopback address.*RAGLOOM_OUTBOUND_ALLOW"):
        open_connector("imap", ConnectorSpec(settings=base, credentials=KEYS))
    made = open_connector("imap", ConnectorSpec(settings=base, credentials=KEYS, outbound_allow=LOOPBACK))
    assert made.settings() == {"host": "127.0.0.1", "port": 143, "ssl": False, "folders": ["INBOX"]}
    assert encode_folder('Entwürfe "alt"') == '"Entw&APw-rfe \\"alt\\""'
    assert file_name("", "7") == "message-7.eml" and file_name("../../etc/passwd", "1") == "etc_passwd.eml"
