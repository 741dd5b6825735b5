"""OCR of scanned pages per language: the character error rate of the packaged recogniser on rendered pages.

    .venv/bin/python benchmarks/ocr_languages.py

Renders an A4 page at 200 dpi per knowledge-base language (a title and a paragraph of that language's
text; DejaVu Sans for Latin, Cyrillic and Arabic script, the installed CJK font for Chinese, Japanese and
Korean), clean and with a scanner's noise, reads it with ragloom's OCR reader and prints the CER
(edit distance over the reference, spaces ignored). The languages whose script the packaged model does
not hold (ragloom.ingest.ocr.UNREAD_SCRIPTS) are measured too — to show what ingesting them would
return — and marked "not read": ragloom refuses their scans with a message instead.
"""

from __future__ import annotations

import argparse
import logging
import os

from parse import DPI, SANS, cer, cjk_font, noisy, render_page  # benchmarks/ run as scripts: on sys.path
from rich.console import Console
from rich.table import Table

from ragloom.ingest.ocr import UNREAD_SCRIPTS, RapidPageReader

TEXTS: dict[str, tuple[str, str]] = {
    "en": ("Maintenance schedule", "The pump is inspected every three months. The technician replaces the seals "
           "and checks that the pressure stays at 4 bar. Report any leak to the service desk at once."),
    "de": ("Wartungsplan", "Die Pumpe wird alle drei Monate geprüft. Der Techniker wechselt die Dichtungen und "
           "kontrolliert, dass der Druck bei 4 bar bleibt. Melden Sie jedes Leck sofort dem Kundendienst."),
    "fr": ("Plan d'entretien", "La pompe est contrôlée tous les trois mois. Le technicien remplace les joints et "
           "vérifie que la pression reste à 4 bars. Signalez toute fuite immédiatement au service après-vente."),
    "es": ("Plan de mantenimiento", "La bomba se revisa cada tres meses. El técnico cambia las juntas y comprueba "
           "que la presión se mantenga en 4 bares. Informe de cualquier fuga al servicio técnico."),
    "it": ("Piano di manutenzione", "La pompa viene controllata ogni tre mesi. Il tecnico sostituisce le "
           "guarnizioni e verifica che la pressione resti a 4 bar. Segnalate subito ogni perdita."),
    "pt": ("Plano de manutenção", "A bomba é verificada a cada três meses. O técnico troca as juntas e confirma "
           "que a pressão se mantém em 4 bar. Comunique qualquer fuga ao serviço de assistência."),
    "nl": ("Onderhoudsschema", "De pomp wordt elke drie maanden gecontroleerd. De monteur vervangt de "
           "afdichtingen en controleert of de druk op 4 bar blijft. Meld elk lek meteen aan de servicedienst."),
    "ru": ("График обслуживания", "Насос проверяют каждые три месяца. Техник меняет уплотнения и следит, "
           "чтобы давление оставалось 4 бара. О любой утечке сразу сообщайте в сервисную службу."),
    "ar": ("جدول الصيانة", "يتم فحص المضخة كل ثلاثة أشهر. يستبدل الفني الحشوات ويتأكد من بقاء الضغط عند 4 بار."),
    "zh": ("设备维护规程", "水泵每三个月检查一次。技术人员更换密封件，并确认压力保持在四巴。"
           "发现任何泄漏请立即联系售后服务部门。"),
    "ja": ("保守計画", "ポンプは三か月ごとに点検されます。技術者がパッキンを交換し、"
           "圧力が4バールに保たれていることを確認します。漏れを見つけたら、すぐにサービス窓口へ連絡してください。"),
    "ko": ("정비 계획", "펌프는 석 달마다 점검됩니다. 기술자가 패킹을 교체하고 압력이 4바로 유지되는지 확인합니다. "
           "누수를 발견하면 즉시 서비스 센터에 연락하십시오."),
}
CJK = ("zh", "ja", "ko")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", default=",".join(TEXTS), help="comma-separated codes")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    reader = RapidPageReader()
    font = cjk_font()
    table = Table(title=f"OCR CER per language, rendered A4 pages at {DPI} dpi ({os.cpu_count()} cores)")
    for col in ("language", "scans", "CER clean", "CER noisy", "characters"):
        table.add_column(col)
    for code in args.languages.split(","):
        title, text = TEXTS[code]
        face = font if code in CJK else SANS
        if face is None:
            table.add_row(code, "—", "no CJK font installed", "", "")
            continue
        image, truth = render_page(title, text, face)
        shown = []
        for page in (image, noisy(image, 3)):
            blocks = reader.read_page(page, page=1, scale=DPI / 72)
            shown.append(f"{100 * cer(''.join(b.text for b in blocks), truth):.1f}%")
        table.add_row(code, "not read (refused)" if code in UNREAD_SCRIPTS else "read", *shown, str(len(truth)))
    Console().print(table)


if __name__ == "__main__":
    main()
