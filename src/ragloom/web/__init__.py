"""The web UI: server-rendered pages (``pages.py``, Jinja2 templates in ``templates/``) whose small
scripts (``static/``) call the public REST API with the session cookie; the sign-in cookies
(``cookies.py``), the English and Chinese messages (``messages.py``), and the server's root and status
page (``status.py``)."""
