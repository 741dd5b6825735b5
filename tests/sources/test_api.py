"""Sources through the API (issue 30): add, list, show, change, pause and resume, sync, the syncs'
history, remove; credentials stored encrypted and never returned; folders outside the allowed roots
refused; and another workspace's sources are "not found" on every route, whatever ids it is given."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from ragloom.config import Settings
from ragloom.db.models import Source
from ragloom.service.accounts import identity
from ragloom.worker import run_one_sync
from tests.live import app_client
from tests.sources.helpers import write

API = "/api/v1"
SECRET = "tok-3f9a-never-shown"


def test_sources_through_the_api_and_isolated_between_workspaces(settings: Settings, shared: Path) -> None:
    folder = shared / "handbook"
    write(folder / "pump.md", "# Pump\n\nGrease every 450 hours.\n")
    write(folder / "notes" / "valve.txt", "The valve is blue.\n")
    with app_client(settings) as (client, ctx, h):
        kb = client.post(f"{API}/datasets", headers=h, json={"name": "manuals"}).json()
        base = f"{API}/datasets/{kb['id']}/sources"
        created = client.post(base, headers=h, json={
            "name": "handbook", "type": "folder", "settings": {"path": str(folder)}, "credentials": {"token": SECRET},
            "filters": {"exclude": ["notes/**"]}, "schedule_minutes": 30})
        assert created.status_code == 201, created.text
        src = created.json()
        assert src["has_credentials"] and src["schedule_minutes"] == 30 and src["next_run_at"]
        assert src["settings"] == {"path": str(folder), "hidden": False} and src["filters"]["exclude"] == ["notes/**"]
        with ctx.db.session() as s:
            stored = s.scalar(select(Source.secret))
        assert stored and SECRET not in stored  # encrypted at rest

        refused = client.post(base, headers=h, json={"name": "etc", "type": "folder", "settings": {"path": "/etc"}})
        assert refused.status_code == 400 and "RAGLOOM_SOURCE_ROOTS" in refused.json()["message"]
        assert client.post(base, headers=h, json={"name": "handbook", "type": "folder",
                                                  "settings": {"path": str(folder)}}).status_code == 409
        unknown = client.post(base, headers=h, json={"name": "x", "type": "gopher"})
        assert unknown.status_code == 400
        assert "confluence, folder, git, imap, notion, s3, web, webdav" in unknown.json()["message"]

        job = client.post(f"{base}/{src['id']}/sync", headers=h)
        assert job.status_code == 202 and job.json()["status"] == "queued"
        assert run_one_sync(ctx, "w") == job.json()["id"]
        done = client.get(f"{base}/{src['id']}/syncs/{job.json()['id']}", headers=h).json()
        assert done["status"] == "done" and done["stats"]["new"] == 1 and done["stats"]["skipped"] == 1
        by_name = client.get(f"{base}/handbook", headers=h).json()
        assert by_name["id"] == src["id"] and by_name["documents"] == 1 and by_name["last_sync"]["id"] == done["id"]
        assert client.get(f"{base}/{src['id']}/syncs", headers=h).json()["total"] == 1
        assert client.post(f"{base}/{src['id']}/check", headers=h).json()["ok"] is True

        patched = client.patch(f"{base}/{src['id']}", headers=h, json={"paused": True})
        paused = patched.json()
        assert paused["paused"] and paused["schedule_minutes"] == 30
        manual = client.patch(f"{base}/{src['id']}", headers=h, json={"schedule_minutes": None}).json()
        assert manual["schedule_minutes"] is None and manual["next_run_at"] is None
        listed = client.get(base, headers=h)
        shown = [created.text, listed.text, patched.text, client.get(f"{base}/{src['id']}", headers=h).text]
        assert all(SECRET not in text for text in shown)

        # another workspace: its owner's key on every route with the first one's ids (or names) is a 404
        with ctx.db.session() as s:
            tenant, owner = identity.create_tenant(s, name="other", owner_email="owner@other.test")
            other = {"Authorization": "Bearer " + identity.create_api_key(s, tenant_id=tenant.id,
                                                                          user_id=owner.id).key}
        own_kb = client.post(f"{API}/datasets", headers=other, json={"name": "theirs"}).json()
        sync_id = done["id"]
        for kb_ref in (kb["id"], "manuals", own_kb["id"]):
            for src_ref in (src["id"], "handbook"):
                b = f"{API}/datasets/{kb_ref}/sources/{src_ref}"
                for method, url, body in (("GET", b, None), ("PATCH", b, {"paused": False}),
                                          ("POST", f"{b}/sync", None), ("POST", f"{b}/check", None),
                                          ("GET", f"{b}/syncs", None),
                                          ("GET", f"{b}/syncs/{sync_id}", None),
                                          ("POST", f"{b}/syncs/{sync_id}/cancel", None), ("DELETE", b, None)):
                    res = client.request(method, url, headers=other, json=body)
                    assert res.status_code == 404, (method, url, res.status_code, res.text)
                    assert res.json()["error"] == "NotFoundError" and str(folder) not in res.text
        assert client.get(f"{API}/datasets/{kb['id']}/sources", headers=other).status_code == 404
        assert client.get(f"{API}/datasets/{own_kb['id']}/sources", headers=other).json() == {"sources": [],
                                                                                              "total": 0}
        assert client.post(f"{API}/datasets/{kb['id']}/sources", headers=other,
                           json={"name": "x", "type": "folder", "settings": {"path": str(folder)}}).status_code == 404

        kept = client.delete(f"{base}/{src['id']}", headers=h, params={"keep_documents": "true"})
        assert kept.status_code == 204
        assert client.get(f"{base}/{src['id']}", headers=h).status_code == 404
        docs = client.get(f"{API}/datasets/{kb['id']}/documents", headers=h).json()["documents"]
        assert [d["name"] for d in docs] == ["pump.md"]  # kept, as an ordinary document


def test_removing_a_source_deletes_its_documents(settings: Settings, shared: Path) -> None:
    write(shared / "d" / "a.md", "# A\n")
    with app_client(settings) as (client, ctx, h):
        kb = client.post(f"{API}/datasets", headers=h, json={"name": "kb"}).json()
        base = f"{API}/datasets/{kb['id']}/sources"
        client.post(f"{API}/datasets/{kb['id']}/documents", headers=h, files=[("file", ("upload.md", b"# Up\n"))])
        src = client.post(base, headers=h, json={"name": "d", "type": "folder",
                                                 "settings": {"path": str(shared / "d")}}).json()
        client.post(f"{base}/{src['id']}/sync", headers=h)
        run_one_sync(ctx, "w")
        names = {d["name"] for d in client.get(f"{API}/datasets/{kb['id']}/documents", headers=h).json()["documents"]}
        assert names == {"a.md", "upload.md"}
        assert client.delete(f"{base}/d", headers=h).status_code == 204
        names = {d["name"] for d in client.get(f"{API}/datasets/{kb['id']}/documents", headers=h).json()["documents"]}
        assert names == {"upload.md"}  # the upload is not the source's
